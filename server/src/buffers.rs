//! The editor's open documents, kept as ropes and updated by incremental `didChange`.
//!
//! Positions arrive in the encoding negotiated at `initialize`: UTF-16 code units unless the
//! client offered UTF-8. While a document is open, every read of it by the agent uses this text
//! rather than the disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

use bravebot_core::kernel::proposal::{LineEdit, LinePositions};

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range, TextEdit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

struct Document {
    text: Rope,
    version: i32,
    /// The text as one string, made the first time it is read at this version and shared by
    /// every read until the next change.
    snapshot: OnceLock<Arc<str>>,
}

pub struct Buffers {
    encoding: RwLock<Encoding>,
    docs: RwLock<HashMap<PathBuf, Document>>,
}

/// A change could not be applied; the document is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error("document is not open: {0}")]
    NotOpen(String),
    #[error("change range {0:?} is outside the document")]
    OutOfRange(Range),
}

impl Default for Buffers {
    fn default() -> Buffers {
        Buffers {
            encoding: RwLock::new(Encoding::Utf16),
            docs: RwLock::new(HashMap::new()),
        }
    }
}

impl Buffers {
    pub fn set_encoding(&self, encoding: Encoding) {
        *self.encoding.write().unwrap_or_else(|p| p.into_inner()) = encoding;
    }

    pub fn encoding(&self) -> Encoding {
        *self.encoding.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn open(&self, path: PathBuf, text: &str, version: i32) {
        self.docs_mut().insert(
            path,
            Document {
                text: Rope::from_str(text),
                version,
                snapshot: OnceLock::new(),
            },
        );
    }

    pub fn close(&self, path: &Path) {
        self.docs_mut().remove(path);
    }

    /// Applies one change: a range replacement, or the whole text when `range` is `None`.
    pub fn change(
        &self,
        path: &Path,
        range: Option<Range>,
        text: &str,
        version: i32,
    ) -> Result<(), ChangeError> {
        let encoding = self.encoding();
        let mut docs = self.docs_mut();
        let doc = docs
            .get_mut(path)
            .ok_or_else(|| ChangeError::NotOpen(path.display().to_string()))?;
        match range {
            None => doc.text = Rope::from_str(text),
            Some(range) => {
                let start = char_index(&doc.text, range.start, encoding)
                    .ok_or(ChangeError::OutOfRange(range))?;
                let end = char_index(&doc.text, range.end, encoding)
                    .ok_or(ChangeError::OutOfRange(range))?;
                if end < start {
                    return Err(ChangeError::OutOfRange(range));
                }
                doc.text.remove(start..end);
                doc.text.insert(start, text);
            }
        }
        doc.version = version;
        doc.snapshot = OnceLock::new();
        Ok(())
    }

    /// The document's text and version: a snapshot shared until the next change.
    pub fn text(&self, path: &Path) -> Option<(Arc<str>, i32)> {
        let docs = self.docs.read().unwrap_or_else(|p| p.into_inner());
        docs.get(path).map(|d| {
            let text = d.snapshot.get_or_init(|| {
                let mut s = String::with_capacity(d.text.len_bytes());
                for chunk in d.text.chunks() {
                    s.push_str(chunk);
                }
                Arc::from(s)
            });
            (Arc::clone(text), d.version)
        })
    }

    /// The document's version, without reading its text.
    pub fn version(&self, path: &Path) -> Option<i32> {
        let docs = self.docs.read().unwrap_or_else(|p| p.into_inner());
        docs.get(path).map(|d| d.version)
    }

    fn docs_mut(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<PathBuf, Document>> {
        self.docs.write().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whole-line edits of `original` as LSP text edits, with positions in `encoding`, for a
/// versioned `TextDocumentEdit`.
pub fn text_edits(original: &str, edits: &[LineEdit], encoding: Encoding) -> Vec<TextEdit> {
    let positions = LinePositions::new(original, encoding == Encoding::Utf16);
    let position = |line: usize| {
        let (line, character) = positions.position(line);
        Position { line, character }
    };
    edits
        .iter()
        .map(|e| TextEdit {
            range: Range {
                start: position(e.old.start),
                end: position(e.old.end),
            },
            new_text: e.new_text.clone(),
        })
        .collect()
}

/// The char index of an LSP position, or `None` when it lies outside the text. A character past
/// the end of its line is clamped to the line's end, as the LSP specification asks.
fn char_index(rope: &Rope, pos: Position, encoding: Encoding) -> Option<usize> {
    let line = usize::try_from(pos.line).ok()?;
    if line > rope.len_lines() {
        return None;
    }
    if line == rope.len_lines() {
        return (pos.character == 0).then(|| rope.len_chars());
    }
    let line_start = rope.line_to_char(line);
    let line_slice = rope.line(line);
    let character = usize::try_from(pos.character).ok()?;
    let within = match encoding {
        Encoding::Utf16 => {
            let units = line_slice.len_utf16_cu();
            line_slice.utf16_cu_to_char(character.min(units))
        }
        Encoding::Utf8 => {
            let bytes = line_slice.len_bytes();
            line_slice.byte_to_char(character.min(bytes))
        }
    };
    Some(line_start + within)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    // Verifies: PROTO-5
    #[test]
    fn buffers_apply_incremental_changes_in_utf16() {
        let b = Buffers::default();
        let p = PathBuf::from("/w/a.rs");
        b.open(p.clone(), "let s = \"😀x\";\nfn main() {}\n", 1);
        // The emoji is two UTF-16 code units, so "x" (the tenth char) is at character 11.
        b.change(
            &p,
            Some(Range {
                start: pos(0, 11),
                end: pos(0, 12),
            }),
            "y",
            2,
        )
        .expect("change applies");
        b.change(
            &p,
            Some(Range {
                start: pos(1, 3),
                end: pos(1, 7),
            }),
            "start",
            3,
        )
        .expect("change applies");
        assert_eq!(
            b.text(&p),
            Some(("let s = \"😀y\";\nfn start() {}\n".into(), 3))
        );
    }

    // Verifies: PROTO-4
    #[test]
    fn buffers_utf8_positions_count_bytes() {
        let b = Buffers::default();
        b.set_encoding(Encoding::Utf8);
        let p = PathBuf::from("/w/a.txt");
        b.open(p.clone(), "é1\n", 1);
        b.change(
            &p,
            Some(Range {
                start: pos(0, 2),
                end: pos(0, 3),
            }),
            "2",
            2,
        )
        .expect("change applies");
        assert_eq!(
            b.text(&p).map(|t| t.0.to_string()),
            Some("é2\n".to_string())
        );
    }

    /// Applies LSP edits the way a client does, to check `line_edits` against.
    fn apply(b: &Buffers, p: &Path, edits: &[TextEdit]) {
        // Later edits first, so earlier positions stay valid.
        for e in edits.iter().rev() {
            b.change(p, Some(e.range), &e.new_text, 0)
                .expect("edit applies");
        }
    }

    // Verifies: WRITE-3, WRITE-12
    #[test]
    fn line_edits_turn_the_original_into_the_proposal() {
        for (original, proposed) in [
            ("a\nb\nc\n", "a\nB\nc\nd\n"),
            ("a\nb\nc", "a\nb\nC"),
            ("😀a\nb", "😀a\nb\nc\n"),
            ("", "new\n"),
            ("x\ny\n", ""),
        ] {
            for encoding in [Encoding::Utf16, Encoding::Utf8] {
                let b = Buffers::default();
                b.set_encoding(encoding);
                let p = PathBuf::from("/w/f");
                b.open(p.clone(), original, 1);
                let edits = bravebot_core::kernel::proposal::line_edits(original, proposed);
                apply(&b, &p, &text_edits(original, &edits, encoding));
                assert_eq!(
                    b.text(&p).map(|t| t.0.to_string()).as_deref(),
                    Some(proposed),
                    "{original:?} -> {proposed:?} in {encoding:?}"
                );
            }
        }
    }

    // Verifies: PROTO-5
    #[test]
    fn buffers_refuse_a_change_outside_the_document() {
        let b = Buffers::default();
        let p = PathBuf::from("/w/a.txt");
        b.open(p.clone(), "one\n", 1);
        let err = b.change(
            &p,
            Some(Range {
                start: pos(5, 0),
                end: pos(5, 1),
            }),
            "x",
            2,
        );
        assert!(matches!(err, Err(ChangeError::OutOfRange(_))));
        assert_eq!(b.text(&p), Some(("one\n".into(), 1)), "nothing is lost");
    }
}
