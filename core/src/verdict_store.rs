//! Verdicts that outlive the session: a check's clean or unsafe word kept in
//! `~/.bravebot/verdicts`, so a file is checked once per content on the machine (CHECK-8).
//!
//! An entry is keyed by [`key`]: the SHA-256 of the exact bytes judged, the judge (the check's
//! wire format, endpoint and model) and the question (the hash of the check's instruction text and
//! the words it was told about where the bytes came from). Change any of them and the key is
//! another, so nothing is found and a new check is sent. The file is JSON lines, appended to as
//! verdicts come, read once when a session opens, private (`0600`, its directory `0700`) and
//! bounded: past [`MAX_ENTRIES`] lines or [`MAX_BYTES`] it is rewritten whole with the newest
//! half, unsafe words first. A line that cannot be read is skipped and the skip logged: an
//! unreadable store finds nothing, and nothing is never a clean verdict. Where the store holds
//! both words for one key, unsafe wins (rule 2): a fact that lowers trust is never outvoted.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::kernel::policy::{Fingerprint, Verdict};

/// Lines the file may hold before it is rewritten with the newest half of them.
pub const MAX_ENTRIES: usize = 20_000;
/// Bytes the file may hold before it is rewritten; also the most read when a session opens.
pub const MAX_BYTES: u64 = 4 << 20;

/// Where the store lives, as the person is told it.
pub const SHOWN: &str = "~/.bravebot/verdicts";

/// What an entry is found by: the bytes, the judge and the question together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn from_hex(text: &str) -> Option<Key> {
        if text.len() != 64 || !text.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Key(out))
    }
}

/// The key of a verdict on the bytes `fingerprint` names, given by `judge` (wire format, base
/// URL, model name) to `question` (the instructions' version and the words the check was told
/// about the bytes). Every part is hashed with its length first, so no two lists of parts give
/// the same stream of bytes.
pub fn key(fingerprint: &Fingerprint, judge: &[&str], question: &[&str]) -> Key {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(b"bravebot verdict 1\0");
    ctx.update(fingerprint.as_bytes());
    for part in judge.iter().chain(question) {
        ctx.update(&(part.len() as u64).to_le_bytes());
        ctx.update(part.as_bytes());
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    Key(out)
}

/// The hex SHA-256 of `text`: the version of a check's instructions.
pub fn version_of(text: &str) -> String {
    Key({
        let mut out = [0u8; 32];
        out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()).as_ref());
        out
    })
    .hex()
}

/// A verdict found in the store, and when it was given (seconds since the epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    pub verdict: Verdict,
    pub at: u64,
}

impl Kept {
    /// When the verdict was given, in UTC, for the audit trail.
    pub fn when(&self) -> String {
        utc(self.at)
    }
}

/// One line of the file.
#[derive(Serialize, Deserialize)]
struct Line {
    key: String,
    verdict: String,
    at: u64,
}

/// The store of one state directory: its entries as read when the session opened, with every
/// verdict kept since.
#[derive(Debug)]
pub struct VerdictStore {
    path: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Key, Kept>,
    /// Lines and bytes in the file as far as this store knows, to tell when to rewrite it.
    lines: usize,
    bytes: u64,
}

/// Puts `kept` under `key`, unsafe winning over clean whatever the order (rule 2).
fn merge(entries: &mut HashMap<Key, Kept>, key: Key, kept: Kept) {
    match entries.get(&key) {
        Some(old) if old.verdict == Verdict::Unsafe && kept.verdict != Verdict::Unsafe => {}
        Some(old) if old.verdict == kept.verdict && old.at >= kept.at => {}
        _ => {
            entries.insert(key, kept);
        }
    }
}

fn parse_verdict(word: &str) -> Option<Verdict> {
    match word {
        "safe" => Some(Verdict::Safe),
        "unsafe" => Some(Verdict::Unsafe),
        _ => None,
    }
}

impl VerdictStore {
    /// The store in `path`, read now. A file that is missing is an empty store; one that is not a
    /// regular file, cannot be read, or holds lines that cannot be read is logged, and what
    /// could not be read is left out: it finds nothing, so those bytes are checked again.
    pub fn open(path: PathBuf) -> VerdictStore {
        let mut inner = Inner::default();
        match read_bounded(&path) {
            Ok(Some(text)) => {
                let mut skipped = 0usize;
                for line in text.lines() {
                    inner.lines += 1;
                    let parsed = serde_json::from_str::<Line>(line).ok().and_then(|l| {
                        Some((
                            Key::from_hex(&l.key)?,
                            Kept {
                                verdict: parse_verdict(&l.verdict)?,
                                at: l.at,
                            },
                        ))
                    });
                    match parsed {
                        Some((key, kept)) => merge(&mut inner.entries, key, kept),
                        None => skipped += 1,
                    }
                }
                inner.bytes = text.len() as u64;
                if skipped > 0 {
                    tracing::warn!(
                        "{SHOWN}: {skipped} unreadable lines ignored; the bytes they were about are checked again"
                    );
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("{SHOWN} ignored: {e}; files are checked again"),
        }
        VerdictStore {
            path,
            inner: Mutex::new(inner),
        }
    }

    /// The verdict kept under `key`, if any.
    pub fn find(&self, key: &Key) -> Option<Kept> {
        self.lock().entries.get(key).copied()
    }

    /// Keeps a completed verdict under `key`, given at `at`: appended to the file, which is
    /// rewritten with the newest half past its bounds. An inconclusive verdict says nothing about
    /// the bytes and is never kept. A write that fails is logged and loses only the saving.
    /// Blocks on the file: call it off the runtime's workers.
    pub fn keep(&self, key: Key, verdict: Verdict, at: u64) {
        if verdict == Verdict::Inconclusive {
            return;
        }
        let mut inner = self.lock();
        merge(&mut inner.entries, key, Kept { verdict, at });
        let line = match serde_json::to_string(&Line {
            key: key.hex(),
            verdict: verdict.as_str().to_string(),
            at,
        }) {
            Ok(line) => line + "\n",
            Err(e) => {
                tracing::warn!("{SHOWN}: a verdict could not be written: {e}");
                return;
            }
        };
        inner.lines += 1;
        inner.bytes += line.len() as u64;
        let result = if inner.lines > MAX_ENTRIES || inner.bytes > MAX_BYTES {
            self.rewrite(&mut inner)
        } else {
            self.append(&line)
        };
        if let Err(e) = result {
            tracing::warn!("{SHOWN}: a verdict could not be written: {e}");
        }
    }

    /// Appends one line; the file and its directory are made private when they are made.
    fn append(&self, line: &str) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            crate::record::create_private_dir(dir).map_err(std::io::Error::other)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            // The store is a file of its own, never a link somebody put in its place.
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)?;
        file.write_all(line.as_bytes())
    }

    /// Writes the newest half of the entries back, unsafe ones first, whole and atomically.
    fn rewrite(&self, inner: &mut Inner) -> std::io::Result<()> {
        let mut all: Vec<(Key, Kept)> = inner.entries.iter().map(|(k, v)| (*k, *v)).collect();
        all.sort_by_key(|(_, kept)| (kept.verdict != Verdict::Unsafe, u64::MAX - kept.at));
        all.truncate(MAX_ENTRIES / 2);
        let mut text = String::new();
        for (key, kept) in &all {
            let line = serde_json::to_string(&Line {
                key: key.hex(),
                verdict: kept.verdict.as_str().to_string(),
                at: kept.at,
            })
            .map_err(std::io::Error::other)?;
            text.push_str(&line);
            text.push('\n');
        }
        while text.len() as u64 > MAX_BYTES / 2 {
            // Lines are alike in length; the bound in bytes is met by dropping the oldest.
            match text[..text.len() - 1].rfind('\n') {
                Some(at) => text.truncate(at + 1),
                None => text.clear(),
            }
        }
        if let Some(dir) = self.path.parent() {
            crate::record::create_private_dir(dir).map_err(std::io::Error::other)?;
        }
        crate::record::write_atomically(&self.path, text.as_bytes())
            .map_err(std::io::Error::other)?;
        inner.lines = text.lines().count();
        inner.bytes = text.len() as u64;
        inner.entries = all.into_iter().take(inner.lines).collect();
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The file's text, at most [`MAX_BYTES`] of it, cut at its last whole line; `None` when there
/// is no file. Anything but a regular file is an error.
fn read_bounded(path: &Path) -> std::io::Result<Option<String>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_BYTES)
        .read_to_end(&mut bytes)?;
    if let Some(end) = bytes.iter().rposition(|b| *b == b'\n') {
        bytes.truncate(end + 1);
    } else {
        bytes.clear();
    }
    // Invalid UTF-8 spoils only the lines it is in.
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM UTC` (Howard Hinnant's civil calendar).
fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rest / 3600,
        (rest % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::label::Label;
    use crate::kernel::labelled::Labelled;
    use crate::kernel::policy;
    use std::os::unix::fs::PermissionsExt;

    fn fp(s: &str) -> Fingerprint {
        policy::fingerprint(&Labelled::new(
            s.as_bytes().to_vec(),
            Label::UNTRUSTED_PRIVATE,
        ))
    }

    // Verifies: CHECK-8
    #[test]
    fn the_key_names_the_bytes_the_judge_and_the_question() {
        let k = key(
            &fp("a"),
            &["openai", "http://m", "small"],
            &["v1", "file a"],
        );
        assert_eq!(
            k,
            key(
                &fp("a"),
                &["openai", "http://m", "small"],
                &["v1", "file a"]
            )
        );
        assert_ne!(
            k,
            key(
                &fp("b"),
                &["openai", "http://m", "small"],
                &["v1", "file a"]
            )
        );
        assert_ne!(
            k,
            key(
                &fp("a"),
                &["openai", "http://m", "large"],
                &["v1", "file a"]
            )
        );
        assert_ne!(
            k,
            key(
                &fp("a"),
                &["openai", "http://n", "small"],
                &["v1", "file a"]
            )
        );
        assert_ne!(
            k,
            key(
                &fp("a"),
                &["openai", "http://m", "small"],
                &["v2", "file a"]
            )
        );
        // The parts are told apart by their lengths: moving a letter across a border changes it.
        assert_ne!(
            k,
            key(
                &fp("a"),
                &["openai", "http://ms", "mall"],
                &["v1", "file a"]
            )
        );
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_000_000), "2026-11-30 00:53 UTC");
    }

    // Verifies: CHECK-9, CHECK-10
    #[test]
    fn kept_verdicts_are_private_read_back_unsafe_wins_and_inconclusive_is_never_kept() {
        let home = tempfile::tempdir().expect("home");
        let path = home.path().join(".bravebot").join("verdicts");
        let store = VerdictStore::open(path.clone());
        let (a, b, c) = (
            key(&fp("a"), &["m"], &["q"]),
            key(&fp("b"), &["m"], &["q"]),
            key(&fp("c"), &["m"], &["q"]),
        );
        store.keep(a, Verdict::Safe, 10);
        store.keep(b, Verdict::Unsafe, 11);
        store.keep(b, Verdict::Safe, 12);
        store.keep(c, Verdict::Inconclusive, 13);
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().expect("dir")), 0o700);
        let again = VerdictStore::open(path.clone());
        assert_eq!(
            again.find(&a),
            Some(Kept {
                verdict: Verdict::Safe,
                at: 10
            })
        );
        assert_eq!(again.find(&b).map(|k| k.verdict), Some(Verdict::Unsafe));
        assert_eq!(again.find(&c), None, "an inconclusive verdict is not kept");

        // A line that cannot be read is skipped, and nothing it held becomes clean.
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("{\"key\":\"zz\",\"verdict\":\"safe\",\"at\":1}\nnot json\n");
        text.push_str(&format!(
            "{{\"key\":\"{}\",\"verdict\":\"fine\",\"at\":1}}\n",
            c.hex()
        ));
        std::fs::write(&path, text).expect("write");
        let spoiled = VerdictStore::open(path.clone());
        assert_eq!(spoiled.find(&c), None);
        assert_eq!(spoiled.find(&a).map(|k| k.verdict), Some(Verdict::Safe));
        std::fs::write(&path, [0xff, 0xfe, 0x00, b'\n']).expect("write");
        assert_eq!(VerdictStore::open(path).find(&a), None);
    }

    // Verifies: CHECK-10
    #[test]
    fn past_its_bound_the_store_keeps_the_newest_half_and_every_unsafe_word_first() {
        let home = tempfile::tempdir().expect("home");
        let path = home.path().join("verdicts");
        let store = VerdictStore::open(path.clone());
        let unsafe_key = key(&fp("old and unsafe"), &["m"], &["q"]);
        store.keep(unsafe_key, Verdict::Unsafe, 0);
        for i in 0..MAX_ENTRIES {
            let at = 1 + i as u64;
            store.keep(key(&fp(&i.to_string()), &["m"], &["q"]), Verdict::Safe, at);
        }
        let lines = std::fs::read_to_string(&path)
            .expect("read")
            .lines()
            .count();
        assert!(lines <= MAX_ENTRIES / 2 + 1, "rewritten: {lines} lines");
        assert!(std::fs::metadata(&path).expect("meta").len() <= MAX_BYTES);
        let again = VerdictStore::open(path);
        assert_eq!(
            again.find(&unsafe_key).map(|k| k.verdict),
            Some(Verdict::Unsafe)
        );
        let newest = key(&fp(&(MAX_ENTRIES - 1).to_string()), &["m"], &["q"]);
        assert!(again.find(&newest).is_some(), "the newest is kept");
        assert_eq!(
            again.find(&key(&fp("0"), &["m"], &["q"])),
            None,
            "the oldest clean one went"
        );
    }
}
