//! Bytes written in pieces of bounded size: a sink for serialising a large message once without
//! holding it in one buffer that doubles as it grows.
//!
//! A `Vec<u8>` that grows by doubling holds up to twice what it was given, and copies everything
//! at each growth; a question carrying two 10 MiB texts would hold 32 MiB for 20 MiB of JSON.
//! [`Pieces`] fills pieces of at most [`PIECE`] bytes instead, so what it holds beyond its length
//! is less than one piece, and nothing written is copied again until it is written out.
//!
//! ```
//! use std::io::Write;
//! use bravebot_core::pieces::Pieces;
//!
//! let mut pieces = Pieces::default();
//! serde_json::to_writer(&mut pieces, &serde_json::json!({"a": "b"})).unwrap();
//! assert_eq!(pieces.len(), 9);
//! assert_eq!(pieces.to_vec(), br#"{"a":"b"}"#);
//! ```

use std::io;

/// The most bytes one piece holds.
pub const PIECE: usize = 64 * 1024;

/// The first piece's first allocation: most messages are small and fit in it.
const FIRST: usize = 256;

/// Bytes in order, in pieces of at most [`PIECE`] bytes; every piece but the last is full.
#[derive(Debug, Default)]
pub struct Pieces {
    pieces: Vec<Vec<u8>>,
    len: usize,
}

impl Pieces {
    /// How many bytes have been written.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces, in order.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        self.pieces.iter().map(Vec::as_slice)
    }

    /// The bytes allocated, held or not yet used: at most the length plus one piece.
    pub fn capacity(&self) -> usize {
        self.pieces.iter().map(Vec::capacity).sum()
    }

    /// All the bytes in one buffer (a copy; for tests and small messages).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut all = Vec::with_capacity(self.len);
        for piece in &self.pieces {
            all.extend_from_slice(piece);
        }
        all
    }
}

impl io::Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            if self.pieces.last().is_none_or(|last| last.len() == PIECE) {
                self.pieces.push(Vec::new());
            }
            let Some(last) = self.pieces.last_mut() else {
                break;
            };
            let take = rest.len().min(PIECE - last.len());
            if last.capacity() - last.len() < take {
                // Grow as a vector does, but never past one piece, and only the first piece
                // starts small: later ones are only made once a full piece came before them.
                let want = if self.len < PIECE {
                    (last.len() + take).max(last.capacity() * 2).max(FIRST)
                } else {
                    PIECE
                };
                last.reserve_exact(want.min(PIECE) - last.len());
            }
            last.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
        }
        self.len += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Write;

    use super::*;

    // Verifies: WRITE-60
    #[test]
    fn pieces_keep_the_bytes_in_order_and_hold_at_most_one_piece_beyond_them() {
        let mut pieces = Pieces::default();
        let mut expected = Vec::new();
        for n in 0..20_000u32 {
            let line = format!("line {n}: {}\n", "x".repeat((n % 97) as usize));
            pieces.write_all(line.as_bytes()).unwrap();
            expected.extend_from_slice(line.as_bytes());
        }
        pieces.write_all(&vec![b'y'; 3 * PIECE + 5]).unwrap();
        expected.extend(std::iter::repeat_n(b'y', 3 * PIECE + 5));
        assert_eq!(pieces.len(), expected.len());
        assert_eq!(pieces.to_vec(), expected);
        let sizes: Vec<usize> = pieces.pieces().map(<[u8]>::len).collect();
        assert!(
            sizes[..sizes.len() - 1].iter().all(|n| *n == PIECE),
            "{sizes:?}"
        );
        assert!(pieces.capacity() < pieces.len() + PIECE);
    }

    #[test]
    fn a_small_message_takes_a_small_piece() {
        let mut pieces = Pieces::default();
        serde_json::to_writer(&mut pieces, &serde_json::json!({"kind": "agentText"})).unwrap();
        assert_eq!(pieces.to_vec(), br#"{"kind":"agentText"}"#);
        assert!(pieces.capacity() <= FIRST, "{}", pieces.capacity());
    }
}
