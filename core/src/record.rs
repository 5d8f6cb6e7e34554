//! What lasts: session records and the prompt history, under the state directory
//! (`~/.bravebot`, `HOME` deciding where `~` is).
//!
//! A session record is `sessions/<id>/session.json`: the planner's [`Conversation`] (the only
//! thing a record takes as its conversation, so nothing quarantined can be written), the trust map
//! with each rule's origin, the added directories, what the planner's context had met, the mode,
//! the model, a title and two timestamps. It is a journal of JSON lines: a `meta` line (everything
//! but the conversation), a `summary` line (what compaction kept), then one `message` line per
//! conversation entry; a later save appends a new `meta` line and the entries added since, and the
//! newest `meta` line is the record's. The journal is written whole again (to a temporary file
//! renamed into place) only where an entry written before changed, the conversation was compacted,
//! superseded `meta` lines outweigh the rest (and pass 64 KiB), or this process has not written it yet; a torn last
//! line (a crash mid-append) is passed over on reading, and nothing before it is lost. A record an
//! earlier build wrote (one pretty-printed object) is still read, and the next save rewrites it as
//! a journal (SESS-16). The prompt history is one file, `history.jsonl`, of every prompt submitted
//! across sessions, the newest [`HISTORY_KEPT`] kept. Directories are made `0700`, files `0600`
//! (SESS-1).

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::conversation::Conversation;
use crate::kernel::label::Label;
use crate::kernel::trust::{RuleOrigin, Scope, TrustRule};
use crate::screen::{Tally, UsageTotals};
use crate::settings::Mode;

/// The record format this build writes and reads.
pub const RECORD_VERSION: u64 = 1;
/// The file of a session's record inside its directory.
pub const RECORD_FILE: &str = "session.json";
/// How many prompts the history keeps.
pub const HISTORY_KEPT: usize = 1000;
/// Characters of one prompt the history keeps: the file is rewritten whole on every prompt, so a
/// pasted megabyte must not make every later prompt pay for it.
pub const HISTORY_ENTRY_CHARS: usize = 20_000;
/// Characters of the first prompt line a title keeps.
pub const TITLE_CHARS: usize = 80;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("`{0}` is not a session id")]
    BadId(String),
    #[error("no session record {0}")]
    Missing(String),
    #[error("session record {path} could not be read: {reason}")]
    Corrupt { path: String, reason: String },
    #[error("the session record could not be encoded: {0}")]
    Encode(String),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RecordError + 'a {
    move |source| RecordError::Io {
        what,
        path: path.display().to_string(),
        source,
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The first line of a prompt, bounded: what a session is listed as.
pub fn title_of(prompt: &str) -> String {
    let line = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    match line.char_indices().nth(TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// Makes `path` and any missing parent, each readable by this account only.
pub fn create_private_dir(path: &Path) -> Result<(), RecordError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(io("could not make the directory", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
        .map_err(io("could not restrict the directory", path))
}

/// A record encoded as the lines of its journal (each without its newline).
#[derive(Debug)]
pub struct Journal {
    meta: Vec<u8>,
    summary: Vec<u8>,
    messages: Vec<Vec<u8>>,
}

impl Journal {
    /// The lines of a record: `meta` is the record without its conversation, `conversation` what
    /// [`Conversation::to_record`] gives.
    fn of(meta: Value, conversation: Value) -> Result<Journal, RecordError> {
        let encode =
            |v: &Value| serde_json::to_vec(v).map_err(|e| RecordError::Encode(e.to_string()));
        let (summary, messages) = match conversation {
            Value::Object(mut c) => (
                c.remove("summary").unwrap_or(Value::Null),
                match c.remove("messages") {
                    Some(Value::Array(messages)) => messages,
                    _ => Vec::new(),
                },
            ),
            _ => (Value::Null, Vec::new()),
        };
        Ok(Journal {
            meta: encode(&json!({ "meta": meta }))?,
            summary: encode(&json!({ "summary": summary }))?,
            messages: messages
                .into_iter()
                .map(|m| encode(&json!({ "message": m })))
                .collect::<Result<_, _>>()?,
        })
    }

    /// The whole journal: `meta`, `summary`, then every message, a line each.
    fn whole(&self) -> Vec<u8> {
        let size = self.meta.len()
            + self.summary.len()
            + self.messages.iter().map(|m| m.len() + 1).sum::<usize>()
            + 2;
        let mut out = Vec::with_capacity(size);
        for line in [&self.meta, &self.summary]
            .into_iter()
            .chain(&self.messages)
        {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        out
    }
}

/// What this process last wrote to one journal, so the next save appends only what is new.
struct Written {
    /// The file's length after that write: a journal of any other length was changed (deleted,
    /// moved, torn) since, and is written whole again.
    len: u64,
    /// Bytes of `meta` lines a later one superseded.
    stale: u64,
    summary: u64,
    /// One fingerprint per message line, in order.
    messages: Vec<u64>,
}

/// Bytes of superseded `meta` lines a journal may hold however short it is; past this, and past
/// half the journal, the next save writes it whole.
const STALE_KEPT: u64 = 64 * 1024;

/// The journals this process wrote, by path.
static JOURNALS: LazyLock<Mutex<HashMap<PathBuf, Written>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn fingerprint(line: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    line.hash(&mut hasher);
    hasher.finish()
}

/// Writes a record into its session's directory, made private if it is missing: the lines added
/// since this process last wrote it, appended after a new `meta` line, or the journal whole.
fn save_in(dir: &Path, record: &Journal) -> Result<(), RecordError> {
    create_private_dir(dir)?;
    let path = dir.join(RECORD_FILE);
    let mut journals = JOURNALS.lock().unwrap_or_else(PoisonError::into_inner);
    let messages: Vec<u64> = record.messages.iter().map(|m| fingerprint(m)).collect();
    let summary = fingerprint(&record.summary);
    if let Some(written) = journals.get_mut(&path) {
        let on_disk = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len());
        let appendable = on_disk == Some(written.len)
            && written.summary == summary
            && messages.starts_with(&written.messages)
            && (written.stale <= written.len / 2 || written.stale <= STALE_KEPT);
        if appendable {
            // The `meta` line first: a crash part way leaves the newer meta over fewer messages,
            // whose next slot and context label are only ever further along (labels only degrade).
            let mut tail = Vec::with_capacity(record.meta.len() + 1);
            tail.extend_from_slice(&record.meta);
            tail.push(b'\n');
            for line in &record.messages[written.messages.len()..] {
                tail.extend_from_slice(line);
                tail.push(b'\n');
            }
            let appended = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| {
                    f.write_all(&tail)?;
                    f.sync_data()
                });
            return match appended {
                Ok(()) => {
                    // The meta line this one supersedes was about as long (a session's differ
                    // by little).
                    written.stale += record.meta.len() as u64 + 1;
                    written.len += tail.len() as u64;
                    written.messages = messages;
                    Ok(())
                }
                Err(e) => {
                    // What is on disk is not known now: the next save writes it whole.
                    journals.remove(&path);
                    Err(io("could not append to", &path)(e))
                }
            };
        }
    }
    let whole = record.whole();
    match write_atomically(&path, &whole) {
        Ok(()) => {
            journals.insert(
                path,
                Written {
                    len: whole.len() as u64,
                    stale: 0,
                    summary,
                    messages,
                },
            );
            Ok(())
        }
        Err(e) => {
            journals.remove(&path);
            Err(e)
        }
    }
}

/// Forgets what this process wrote to the journal in `dir` (it moved or was removed).
fn forget(dir: &Path) {
    JOURNALS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&dir.join(RECORD_FILE));
}

/// A record's text read back as one object, whichever way it was written: a journal (the newest
/// `meta` line, with the newest `summary` and every `message` as its conversation), or one object
/// as earlier builds wrote it. A last line that does not parse is a write a crash cut short and
/// is passed over; any other line that does not parse makes the record unreadable.
fn read_record(text: &[u8]) -> Result<Value, String> {
    let mut lines = text
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .peekable();
    let first: Option<Value> = lines
        .peek()
        .and_then(|line| serde_json::from_slice(line).ok());
    if first.as_ref().is_none_or(|f| f.get("meta").is_none()) {
        return serde_json::from_slice(text).map_err(|e| e.to_string());
    }
    let mut meta = None;
    let mut summary = Value::Null;
    let mut messages = Vec::new();
    while let Some(line) = lines.next() {
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(_) if lines.peek().is_none() => break,
            Err(e) => return Err(format!("a line of its journal is not json: {e}")),
        };
        let Value::Object(mut line) = value else {
            return Err("a line of its journal is not an object".into());
        };
        if let Some(m) = line.remove("meta") {
            meta = Some(m);
        } else if let Some(s) = line.remove("summary") {
            summary = s;
        } else if let Some(m) = line.remove("message") {
            messages.push(m);
        } else {
            return Err("a line of its journal is neither meta, summary nor message".into());
        }
    }
    let Some(Value::Object(mut record)) = meta else {
        return Err("its journal has no meta line".into());
    };
    record.insert(
        "conversation".into(),
        json!({"summary": summary, "messages": messages}),
    );
    Ok(Value::Object(record))
}

/// One write for the records' thread.
enum Job {
    /// A session's record, as journal lines, for its directory.
    Record { dir: PathBuf, record: Journal },
    /// A prompt for the history.
    Prompt {
        state: StateDir,
        entry: HistoryEntry,
    },
}

impl Job {
    fn run(self) {
        match self {
            Job::Record { dir, record } => {
                if let Err(e) = save_in(&dir, &record) {
                    tracing::warn!("session record not written: {e}");
                }
            }
            Job::Prompt { state, entry } => {
                if let Err(e) = state.remember_prompt(&entry) {
                    tracing::warn!("prompt history not written: {e}");
                }
            }
        }
    }
}

/// The writes of records and of the history, done in the order they were handed over on one
/// thread of their own, so that a turn never waits on the disk (each is synced before it is
/// renamed into place, which takes a millisecond or more). A record handed over while an older
/// one for the same session still waits replaces it: only the newest is written. Every reader of
/// records ([`StateDir::load`], [`StateDir::list`], [`StateDir::history`], [`StateDir::delete`])
/// and the end of the process first wait for what was handed over before ([`finish_writes`]).
struct Writes {
    pending: Mutex<Pending>,
    changed: Condvar,
}

#[derive(Default)]
struct Pending {
    /// Jobs not yet taken, each with how many handed-over writes it stands for.
    jobs: VecDeque<(Job, u64)>,
    /// Writes handed over, and writes done (or replaced by a newer one and then done).
    handed: u64,
    done: u64,
    /// Whether the writing thread runs.
    running: bool,
}

static WRITES: Writes = Writes {
    pending: Mutex::new(Pending {
        jobs: VecDeque::new(),
        handed: 0,
        done: 0,
        running: false,
    }),
    changed: Condvar::new(),
};

impl Writes {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn hand(&'static self, job: Job) {
        let mut pending = self.lock();
        pending.handed += 1;
        let job = match job {
            Job::Record { dir, record } => {
                // The newer record holds every line the older one would have added.
                let waiting = pending
                    .jobs
                    .iter_mut()
                    .find_map(|(queued, count)| match queued {
                        Job::Record { dir: d, record: r } if *d == dir => Some((r, count)),
                        _ => None,
                    });
                if let Some((queued, count)) = waiting {
                    *queued = record;
                    *count += 1;
                    return;
                }
                Job::Record { dir, record }
            }
            prompt @ Job::Prompt { .. } => prompt,
        };
        pending.jobs.push_back((job, 1));
        if !pending.running {
            let started = std::thread::Builder::new()
                .name("bravebot-records".into())
                .spawn(move || self.work());
            match started {
                Ok(_) => pending.running = true,
                // No thread: the write is done here, as it was handed over.
                Err(_) => {
                    let jobs = std::mem::take(&mut pending.jobs);
                    drop(pending);
                    let mut count = 0;
                    for (job, n) in jobs {
                        job.run();
                        count += n;
                    }
                    self.lock().done += count;
                    self.changed.notify_all();
                }
            }
        }
        self.changed.notify_all();
    }

    fn work(&self) {
        let mut pending = self.lock();
        loop {
            match pending.jobs.pop_front() {
                Some((job, count)) => {
                    drop(pending);
                    job.run();
                    pending = self.lock();
                    pending.done += count;
                    self.changed.notify_all();
                }
                None => {
                    pending = self
                        .changed
                        .wait(pending)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    fn finish(&self) {
        let mut pending = self.lock();
        let handed = pending.handed;
        while pending.done < handed {
            pending = self
                .changed
                .wait(pending)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Waits until every record and prompt handed over so far is written (or failed and logged).
/// Blocks: call it off the runtime's workers, or where the process ends.
pub fn finish_writes() {
    WRITES.finish();
}

/// Writes `bytes` to `path` atomically: a `0600` temporary file beside it, then a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io("could not write", path)(e));
    }
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        io("could not put in place", path)(e)
    })
}

/// The state directory: `~/.bravebot`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

/// A session as the list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub title: String,
    pub created: u64,
    pub updated: u64,
    pub mode: String,
    pub model: String,
    pub cwd: String,
}

/// One prompt of the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    pub text: String,
    pub time: u64,
    pub session_id: String,
    pub cwd: String,
}

impl StateDir {
    /// `home/.bravebot`.
    pub fn in_home(home: &Path) -> StateDir {
        StateDir {
            root: home.join(".bravebot"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn history_path(&self) -> PathBuf {
        self.root.join("history.jsonl")
    }

    /// The person's recorded auto-vetting choice, one word (written by the vetting module).
    pub fn vetting_path(&self) -> PathBuf {
        self.root.join("vetting")
    }

    /// Where verdicts are kept across sessions (CHECK-8).
    pub fn verdicts_path(&self) -> PathBuf {
        self.root.join("verdicts")
    }

    /// A session's directory. An id is letters, digits and dashes, so it names one directory
    /// directly under `sessions/` and nothing else.
    pub fn session_dir(&self, id: &str) -> Result<PathBuf, RecordError> {
        let plain = !id.is_empty()
            && id.len() <= 64
            && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !plain {
            return Err(RecordError::BadId(id.to_string()));
        }
        Ok(self.sessions().join(id))
    }

    /// Writes a session's record.
    pub fn save(&self, record: &SessionRecord<'_>) -> Result<(), RecordError> {
        let (dir, record) = self.encode(record)?;
        save_in(&dir, &record)
    }

    /// Hands a session's record to the thread that writes records ([`Writes`]) and returns at
    /// once: a turn does not wait on the disk. Readers of records wait for it first.
    pub fn save_later(&self, record: &SessionRecord<'_>) -> Result<(), RecordError> {
        let (dir, record) = self.encode(record)?;
        WRITES.hand(Job::Record { dir, record });
        Ok(())
    }

    fn encode(&self, record: &SessionRecord<'_>) -> Result<(PathBuf, Journal), RecordError> {
        let dir = self.session_dir(record.id)?;
        let journal = Journal::of(record.meta(), record.conversation.to_record())?;
        Ok((dir, journal))
    }

    /// Reads a session's record.
    pub fn load(&self, id: &str) -> Result<Restored, RecordError> {
        finish_writes();
        let path = self.session_dir(id)?.join(RECORD_FILE);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(RecordError::Missing(id.to_string()));
            }
            Err(e) => return Err(io("could not read", &path)(e)),
        };
        let corrupt = |reason: String| RecordError::Corrupt {
            path: path.display().to_string(),
            reason,
        };
        let value = read_record(&text).map_err(corrupt)?;
        let mut restored = Restored::from_json(&value).map_err(corrupt)?;
        restored.checkpoints = read_checkpoint_index(&self.session_dir(id)?);
        Ok(restored)
    }

    /// Every session with a record, newest first, and the records that could not be read, each
    /// with its error. A session directory without a record (a headless run's audit trail) is not
    /// a session to resume and is passed over.
    pub fn list(&self) -> (Vec<Listed>, Vec<(String, RecordError)>) {
        finish_writes();
        let mut found = Vec::new();
        let mut broken = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.sessions()) else {
            return (found, broken);
        };
        for entry in entries.flatten() {
            let id = entry.file_name().to_string_lossy().into_owned();
            if self.session_dir(&id).is_err() || !entry.path().join(RECORD_FILE).exists() {
                continue;
            }
            match self.load(&id) {
                Ok(r) => found.push(r.listed),
                Err(e) => {
                    tracing::warn!("{e}");
                    broken.push((id, e));
                }
            }
        }
        found.sort_by(|a, b| b.updated.cmp(&a.updated).then(b.id.cmp(&a.id)));
        (found, broken)
    }

    /// Removes one session's directory, its record and audit trail, and nothing else.
    pub fn delete(&self, id: &str) -> Result<(), RecordError> {
        let dir = self.session_dir(id)?;
        // A record handed over before is written first, so it is removed rather than left to
        // come back after.
        finish_writes();
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {
                forget(&dir);
                std::fs::remove_dir_all(&dir).map_err(io("could not remove", &dir))
            }
            Ok(_) => Err(RecordError::BadId(id.to_string())),
            Err(_) => Err(RecordError::Missing(id.to_string())),
        }
    }

    /// Keeps a session under a new id: its directory (record, audit trail and checkpoints) moves
    /// to `new_id` and its record is rewritten under that id, so it is listed and resumed as a
    /// session of its own and `id` is free for a new session (ACP's `/new`). Answers `false`, and
    /// moves nothing, when `id` has no record: a session never prompted has nothing to keep.
    pub fn set_aside(&self, id: &str, new_id: &str) -> Result<bool, RecordError> {
        let from = self.session_dir(id)?;
        let to = self.session_dir(new_id)?;
        // A record handed over before is written first, so the one moved is the newest.
        finish_writes();
        let path = from.join(RECORD_FILE);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io("could not read", &path)(e)),
        };
        let corrupt = |reason: String| RecordError::Corrupt {
            path: path.display().to_string(),
            reason,
        };
        let value = read_record(&text).map_err(corrupt)?;
        let Value::Object(mut record) = value else {
            return Err(corrupt("it is not an object".into()));
        };
        record.insert("id".into(), Value::from(new_id));
        let conversation = record.remove("conversation").unwrap_or(Value::Null);
        let journal = Journal::of(Value::Object(record), conversation)?;
        if std::fs::symlink_metadata(&to).is_ok() {
            return Err(io("could not move to", &to)(std::io::Error::from(
                std::io::ErrorKind::AlreadyExists,
            )));
        }
        std::fs::rename(&from, &to).map_err(io("could not move", &from))?;
        forget(&from);
        forget(&to);
        write_atomically(&to.join(RECORD_FILE), &journal.whole())?;
        Ok(true)
    }

    /// Appends a prompt to the history, keeping the newest [`HISTORY_KEPT`].
    pub fn remember_prompt(&self, entry: &HistoryEntry) -> Result<(), RecordError> {
        self.remember_prompt_keeping(entry, HISTORY_KEPT)
    }

    /// Hands a prompt to the thread that writes records, to be appended to the history after
    /// every write handed over before it; returns at once.
    pub fn remember_prompt_later(&self, entry: HistoryEntry) {
        WRITES.hand(Job::Prompt {
            state: self.clone(),
            entry,
        });
    }

    fn remember_prompt_keeping(
        &self,
        entry: &HistoryEntry,
        kept: usize,
    ) -> Result<(), RecordError> {
        create_private_dir(&self.root)?;
        let path = self.history_path();
        let mut lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        let text = match entry.text.char_indices().nth(HISTORY_ENTRY_CHARS) {
            Some((at, _)) => &entry.text[..at],
            None => entry.text.as_str(),
        };
        lines.push(
            json!({"text": text, "time": entry.time, "sessionId": entry.session_id, "cwd": entry.cwd})
                .to_string(),
        );
        let keep_from = lines.len().saturating_sub(kept);
        let text = lines[keep_from..].join("\n") + "\n";
        write_atomically(&path, text.as_bytes())
    }

    /// The history, newest first, at most `limit` entries. A line that is not an entry is
    /// passed over.
    pub fn history(&self, limit: usize) -> Vec<HistoryEntry> {
        finish_writes();
        let text = std::fs::read_to_string(self.history_path()).unwrap_or_default();
        text.lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| {
                Some(HistoryEntry {
                    text: v.get("text")?.as_str()?.to_string(),
                    time: v.get("time").and_then(Value::as_u64).unwrap_or(0),
                    session_id: v
                        .get("sessionId")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    cwd: v
                        .get("cwd")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .take(limit)
            .collect()
    }
}

/// What a record is written from: borrowed from the session, the conversation as the planner's
/// own type and nothing else (SESS-2).
pub struct SessionRecord<'a> {
    pub id: &'a str,
    pub cwd: &'a Path,
    pub title: &'a str,
    pub created: u64,
    pub updated: u64,
    pub mode: Mode,
    pub model: String,
    pub conversation: &'a Conversation,
    pub trust: &'a [TrustRule],
    pub added_dirs: &'a [PathBuf],
    /// What the planner's context had been shown, and what was released into it.
    pub context: (Label, Option<Label>),
    /// The next slot number: a resumed session numbers its slots past every reference the
    /// conversation names.
    pub next_slot: usize,
    /// What the session's model calls cost so far, and how often its conversation was compacted:
    /// a resumed session's meter goes on from them (USAGE-14).
    pub usage: (UsageTotals, u64),
}

/// A tally as the record keeps it. The cost is a string: it is a `u128`, which JSON numbers do
/// not hold exactly.
fn tally_json(t: &Tally) -> Value {
    json!({
        "calls": t.calls,
        "unreported": t.unreported,
        "input": t.input,
        "output": t.output,
        "cachedInput": t.cached_input,
        "cacheWriteInput": t.cache_write_input,
        "priced": t.priced,
        "cost": t.cost_micros_per_million.to_string(),
    })
}

/// A tally read back; `None` for anything but what [`tally_json`] writes, so a record edited by
/// hand starts the meter at nothing rather than at a guess.
fn tally_of(v: &Value) -> Option<Tally> {
    let n = |key: &str| v.get(key).and_then(Value::as_u64);
    Some(Tally {
        calls: n("calls")?,
        unreported: n("unreported")?,
        input: n("input")?,
        output: n("output")?,
        cached_input: n("cachedInput")?,
        cache_write_input: n("cacheWriteInput")?,
        priced: n("priced")?,
        cost_micros_per_million: v.get("cost")?.as_str()?.parse().ok()?,
    })
}

/// The session's usage as the record keeps it, read back; `None` where it is missing (a record of
/// an earlier build) or not as written.
fn usage_of(v: &Value) -> Option<(UsageTotals, u64)> {
    let usage = v.get("usage")?;
    Some((
        UsageTotals {
            planner: tally_of(usage.get("planner")?)?,
            protection: tally_of(usage.get("protection")?)?,
        },
        usage.get("compactions")?.as_u64()?,
    ))
}

impl SessionRecord<'_> {
    /// Everything but the conversation, as the journal's `meta` line holds it.
    fn meta(&self) -> Value {
        json!({
            "version": RECORD_VERSION,
            "id": self.id,
            "cwd": self.cwd,
            "title": self.title,
            "created": self.created,
            "updated": self.updated,
            "mode": self.mode.as_str(),
            "model": self.model,
            "trust": self.trust.iter().map(|r| json!({
                "path": r.path,
                "scope": match r.scope { Scope::File => "file", Scope::Directory => "directory" },
                "origin": r.origin.as_str(),
            })).collect::<Vec<_>>(),
            "addedDirectories": self.added_dirs,
            "context": {
                "label": self.context.0.to_string(),
                "released": self.context.1.map(|l| l.to_string()),
            },
            "nextSlot": self.next_slot,
            "usage": {
                "planner": tally_json(&self.usage.0.planner),
                "protection": tally_json(&self.usage.0.protection),
                "compactions": self.usage.1,
            },
        })
    }
}

/// A record read back.
#[derive(Debug)]
pub struct Restored {
    pub listed: Listed,
    pub cwd: PathBuf,
    pub mode: Mode,
    pub conversation: Conversation,
    pub trust: Vec<TrustRule>,
    pub added_dirs: Vec<PathBuf>,
    pub context: (Label, Option<Label>),
    pub next_slot: usize,
    /// The session's usage totals and compactions when the record was written, where it says.
    pub usage: Option<(UsageTotals, u64)>,
    /// The index of the session's checkpoints, as kept beside their contents, when there is one.
    pub checkpoints: Option<Vec<u8>>,
}

/// The index of a session's checkpoints, in `checkpoints/` beside its record
/// (the checkpoint module writes it).
pub const CHECKPOINT_INDEX: &str = "index.json";
/// Most bytes of a checkpoint index read back; a larger one is not taken up.
pub const MAX_CHECKPOINT_INDEX_BYTES: u64 = 16 << 20;

/// Reads a session's checkpoint index from its directory, bounded. Blocking.
fn read_checkpoint_index(session_dir: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(session_dir.join("checkpoints").join(CHECKPOINT_INDEX)).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_CHECKPOINT_INDEX_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_CHECKPOINT_INDEX_BYTES).then_some(bytes)
}

/// A label as a record writes it. Anything else reads as the worst label there is: a record
/// can only take away.
fn parse_label(text: Option<&str>) -> Label {
    [
        Label::TRUSTED_PUBLIC,
        Label::TRUSTED_PRIVATE,
        Label::UNTRUSTED_PUBLIC,
        Label::UNTRUSTED_PRIVATE,
    ]
    .into_iter()
    .find(|l| text == Some(l.to_string().as_str()))
    .unwrap_or(Label::UNTRUSTED_PRIVATE)
}

/// A rule's origin as a record writes it. An origin this build does not know grants nothing: it
/// reads as [`RuleOrigin::Unrecognised`], which is untrusted, so the path it names is withheld
/// rather than released, and no check or default hands it back.
pub fn parse_origin(word: &str) -> RuleOrigin {
    match word {
        "person" => RuleOrigin::Person,
        "instructions" => RuleOrigin::Instructions,
        "agentWrite" => RuleOrigin::AgentWroteUntrusted,
        "personDeny" => RuleOrigin::Denied,
        "settingsDeny" => RuleOrigin::DeniedBySettings,
        _ => RuleOrigin::Unrecognised,
    }
}

impl Restored {
    fn from_json(v: &Value) -> Result<Restored, String> {
        let version = v.get("version").and_then(Value::as_u64);
        if version != Some(RECORD_VERSION) {
            return Err(format!(
                "it is format {}, and this build reads format {RECORD_VERSION}",
                version.map_or("unknown".to_string(), |n| n.to_string())
            ));
        }
        let string = |key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("it has no `{key}`"))
        };
        let number = |key: &str| {
            v.get(key)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("it has no `{key}`"))
        };
        let mode_word = string("mode")?;
        let mode = Mode::parse(&mode_word).ok_or_else(|| format!("unknown mode `{mode_word}`"))?;
        let mut trust = Vec::new();
        for r in v
            .get("trust")
            .and_then(Value::as_array)
            .ok_or("it has no trust map")?
        {
            let path = r
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| Path::new(p).is_absolute())
                .ok_or("a trust rule names no absolute path")?;
            let origin = parse_origin(r.get("origin").and_then(Value::as_str).unwrap_or(""));
            // A scope this build does not know is read as the wider one, and then only an
            // untrusted rule may stand on it.
            let (scope, origin) = match r.get("scope").and_then(Value::as_str) {
                Some("file") => (Scope::File, origin),
                Some("directory") => (Scope::Directory, origin),
                _ => (Scope::Directory, RuleOrigin::Unrecognised),
            };
            trust.push(TrustRule {
                path: PathBuf::from(path),
                scope,
                origin,
            });
        }
        let added_dirs = v
            .get("addedDirectories")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .collect();
        let context = v.get("context");
        let label = parse_label(context.and_then(|c| c.get("label")).and_then(Value::as_str));
        let released = match context.and_then(|c| c.get("released")) {
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(parse_label(Some(s))),
            _ => Some(Label::UNTRUSTED_PRIVATE),
        };
        let conversation =
            Conversation::from_record(v.get("conversation").ok_or("it has no conversation")?)
                .map_err(|e| e.to_string())?;
        let cwd = PathBuf::from(string("cwd")?);
        if !cwd.is_absolute() {
            return Err("its working directory is not absolute".into());
        }
        Ok(Restored {
            listed: Listed {
                id: string("id")?,
                title: string("title")?,
                created: number("created")?,
                updated: number("updated")?,
                mode: mode_word,
                model: string("model")?,
                cwd: cwd.display().to_string(),
            },
            cwd,
            mode,
            conversation,
            trust,
            added_dirs,
            checkpoints: None,
            context: (label, released),
            next_slot: v
                .get("nextSlot")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0),
            usage: usage_of(v),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::policy::PlannerText;
    use std::os::unix::fs::MetadataExt;

    fn sample<'a>(
        conversation: &'a Conversation,
        trust: &'a [TrustRule],
        id: &'a str,
    ) -> SessionRecord<'a> {
        SessionRecord {
            id,
            cwd: Path::new("/w"),
            title: "fix the build",
            created: 10,
            updated: 20,
            mode: Mode::AcceptEdits,
            model: "fake-model".into(),
            conversation,
            trust,
            added_dirs: &[],
            context: (Label::TRUSTED_PRIVATE, None),
            next_slot: 3,
            usage: (UsageTotals::default(), 0),
        }
    }

    // Verifies: USAGE-14
    #[test]
    fn a_record_keeps_the_sessions_usage_and_one_without_it_restores_none() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("fix the build"));
        let planner = Tally {
            calls: 3,
            unreported: 1,
            input: 4200,
            output: 90,
            cached_input: 800,
            cache_write_input: 300,
            priced: 2,
            // Past what a JSON number holds exactly.
            cost_micros_per_million: u128::from(u64::MAX) * 3,
        };
        let protection = Tally {
            calls: 1,
            input: 300,
            output: 5,
            ..Tally::default()
        };
        let kept = (
            UsageTotals {
                planner,
                protection,
            },
            2,
        );
        state
            .save(&SessionRecord {
                usage: kept,
                ..sample(&c, &[], "usage-1")
            })
            .expect("saved");
        assert_eq!(state.load("usage-1").expect("loads").usage, Some(kept));
        // A record of an earlier build, or one whose usage is not as written, restores none.
        let path = state.session_dir("usage-1").expect("dir").join(RECORD_FILE);
        for usage in [
            json!(null),
            json!({"planner": {"calls": -1}}),
            json!("lots"),
        ] {
            let mut v = read_record(&std::fs::read(&path).expect("read")).expect("parses");
            v["usage"] = usage.clone();
            write_atomically(&path, v.to_string().as_bytes()).expect("written");
            forget(&state.session_dir("usage-1").expect("dir"));
            assert_eq!(state.load("usage-1").expect("loads").usage, None, "{usage}");
        }
    }

    // Verifies: SESS-14
    #[test]
    fn records_and_prompts_handed_over_are_written_in_order_before_anything_reads_them() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("fix the build"));
        let titles: Vec<String> = (0..40).map(|n| format!("title {n}")).collect();
        for (n, title) in titles.iter().enumerate() {
            let record = SessionRecord {
                title,
                ..sample(&c, &[], "later-1")
            };
            state.save_later(&record).expect("handed over");
            state.remember_prompt_later(HistoryEntry {
                text: format!("prompt {n}"),
                time: n as u64,
                session_id: "later-1".into(),
                cwd: "/w".into(),
            });
        }
        // Each reader waits for what was handed over before it: the newest record, every prompt
        // in the order given.
        assert_eq!(
            state.load("later-1").expect("loads").listed.title,
            "title 39"
        );
        let (listed, broken) = state.list();
        assert_eq!((listed.len(), broken.len()), (1, 0));
        let history = state.history(usize::MAX);
        let texts: Vec<&str> = history.iter().map(|e| e.text.as_str()).collect();
        let expected: Vec<String> = (0..40).rev().map(|n| format!("prompt {n}")).collect();
        assert_eq!(texts, expected);
        let record = SessionRecord {
            title: "after",
            ..sample(&c, &[], "later-1")
        };
        state.save_later(&record).expect("handed over");
        // A record handed over before a delete is removed with it, not written after.
        state.delete("later-1").expect("deleted");
        finish_writes();
        assert!(!state.session_dir("later-1").expect("id").exists());
    }

    /// A record as a build before the journal wrote it: one pretty-printed object.
    const OLD_RECORD: &str = r#"{
  "addedDirectories": [
    "/elsewhere"
  ],
  "context": {
    "label": "(T,priv)",
    "released": null
  },
  "conversation": {
    "messages": [
      {
        "said": "prompt",
        "text": "fix the build"
      },
      {
        "said": "reply",
        "text": "on it",
        "toolCalls": [
          {
            "arguments": "{\"path\":\"a.rs\"}",
            "id": "call_1",
            "name": "read_file"
          }
        ]
      },
      {
        "callId": "call_1",
        "said": "tool",
        "text": "fn main() {}"
      }
    ],
    "summary": null
  },
  "created": 10,
  "cwd": "/w",
  "id": "old-1",
  "mode": "acceptEdits",
  "model": "fake-model",
  "nextSlot": 4,
  "title": "fix the build",
  "trust": [
    {
      "origin": "person",
      "path": "/w/a.md",
      "scope": "file"
    }
  ],
  "updated": 20,
  "version": 1
}
"#;

    // Verifies: SESS-16
    #[test]
    fn a_record_an_earlier_build_wrote_lists_restores_and_becomes_a_journal_on_its_next_save() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let dir = state.session_dir("old-1").expect("id");
        create_private_dir(&state.sessions()).expect("sessions");
        create_private_dir(&dir).expect("dir");
        write_atomically(&dir.join(RECORD_FILE), OLD_RECORD.as_bytes()).expect("fixture");
        let (listed, broken) = state.list();
        assert_eq!(listed.len(), 1, "{broken:?}");
        assert_eq!(listed[0].title, "fix the build");
        let back = state.load("old-1").expect("loads");
        assert_eq!(back.next_slot, 4);
        assert_eq!(back.added_dirs, vec![PathBuf::from("/elsewhere")]);
        assert_eq!(back.trust.len(), 1);
        let messages = back.conversation.messages();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(matches!(
            &messages[1],
            crate::model::Message::Assistant { tool_calls, .. }
                if tool_calls[0].arguments == "{\"path\":\"a.rs\"}"
        ));
        // The next save writes it as a journal, and it reads back the same.
        let mut c = back.conversation;
        c.push_reply("done".into(), Vec::new(), false);
        state
            .save(&sample(&c, &back.trust, "old-1"))
            .expect("saved");
        let text = std::fs::read_to_string(dir.join(RECORD_FILE)).expect("record");
        assert!(text.starts_with("{\"meta\":"), "{text}");
        assert_eq!(text.lines().count(), 2 + 4, "{text}");
        let again = state.load("old-1").expect("loads");
        assert_eq!(again.conversation.messages().len(), 4);
        assert_eq!(
            again.conversation.prompts(),
            vec!["fix the build".to_string()]
        );
    }

    // Verifies: SESS-16
    #[test]
    fn a_save_appends_only_the_new_messages_and_a_changed_conversation_is_written_whole() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let path = state.session_dir("grow-1").expect("id").join(RECORD_FILE);
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("first prompt"));
        c.push_reply("first answer".into(), Vec::new(), false);
        state.save(&sample(&c, &[], "grow-1")).expect("saved");
        let before = std::fs::read(&path).expect("record");
        c.push_prompt(PlannerText::driver("second prompt"));
        c.push_reply("second answer".into(), Vec::new(), false);
        state
            .save(&SessionRecord {
                next_slot: 9,
                ..sample(&c, &[], "grow-1")
            })
            .expect("saved");
        let after = std::fs::read(&path).expect("record");
        assert!(
            after.starts_with(&before),
            "the earlier lines stay as they were"
        );
        let added = String::from_utf8_lossy(&after[before.len()..]).into_owned();
        let added: Vec<&str> = added.lines().collect();
        assert_eq!(
            added.len(),
            3,
            "a meta line and the two new messages: {added:?}"
        );
        assert!(added[0].starts_with("{\"meta\":") && added[0].contains("\"nextSlot\":9"));
        assert!(added[1].contains("second prompt") && added[2].contains("second answer"));
        assert_eq!(
            std::fs::metadata(&path).expect("file").mode() & 0o777,
            0o600,
            "appending keeps the file private"
        );
        let back = state.load("grow-1").expect("loads");
        assert_eq!(back.next_slot, 9, "the newest meta line is the record's");
        assert_eq!(back.conversation.messages().len(), 4);
        // A conversation that lost entries (compaction) is written whole, without them.
        let mut fitted = Conversation::default();
        fitted.push_prompt(PlannerText::driver("second prompt"));
        state.save(&sample(&fitted, &[], "grow-1")).expect("saved");
        let text = std::fs::read_to_string(&path).expect("record");
        assert!(!text.contains("first prompt"), "{text}");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert_eq!(
            state
                .load("grow-1")
                .expect("loads")
                .conversation
                .messages()
                .len(),
            1
        );
    }

    // Verifies: SESS-17
    #[test]
    fn a_torn_last_line_is_passed_over_and_nothing_before_it_is_lost() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let path = state.session_dir("torn-1").expect("id").join(RECORD_FILE);
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("kept prompt"));
        c.push_reply("kept answer".into(), Vec::new(), false);
        state.save(&sample(&c, &[], "torn-1")).expect("saved");
        let whole = std::fs::read(&path).expect("record");
        // A crash part way through an append: a meta line whole, a message cut short.
        let mut torn = whole.clone();
        torn.extend_from_slice(b"{\"meta\":{\"version\":1}}\n{\"message\":{\"said\":\"pro");
        std::fs::write(&path, &torn).expect("torn");
        let err = state
            .load("torn-1")
            .expect_err("a meta line without its fields is read");
        assert!(err.to_string().contains("has no"), "{err}");
        let mut torn = whole.clone();
        torn.extend_from_slice(b"{\"message\":{\"said\":\"prompt\",\"te");
        std::fs::write(&path, &torn).expect("torn");
        let back = state.load("torn-1").expect("the torn line is passed over");
        assert_eq!(back.conversation.messages().len(), 2);
        assert_eq!(state.list().0.len(), 1);
        // Zeros where the filesystem extended the file but the bytes never came.
        let mut zeros = whole.clone();
        zeros.extend_from_slice(&[0u8; 64]);
        std::fs::write(&path, &zeros).expect("zeros");
        assert_eq!(
            state
                .load("torn-1")
                .expect("loads")
                .conversation
                .messages()
                .len(),
            2
        );
        // A bad line with good lines after it is no torn write: the record is unreadable.
        let mut broken = whole.clone();
        broken.extend_from_slice(b"not json\n");
        broken.extend_from_slice(&whole[whole.len() - 20..]);
        broken.extend_from_slice(b"{\"message\":{\"said\":\"prompt\",\"text\":\"x\"}}\n");
        std::fs::write(&path, &broken).expect("broken");
        assert!(state.load("torn-1").is_err());
        // This process wrote a journal of another length: the next save writes it whole again.
        c.push_prompt(PlannerText::driver("after the crash"));
        state.save(&sample(&c, &[], "torn-1")).expect("saved");
        let back = state.load("torn-1").expect("loads");
        assert_eq!(back.conversation.messages().len(), 3);
    }

    // Verifies: SESS-1, SESS-3
    #[test]
    fn a_record_is_private_atomic_and_reads_back_with_its_origins() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("fix the build"));
        let trust = vec![
            TrustRule {
                path: "/w/a.md".into(),
                scope: Scope::File,
                origin: RuleOrigin::Person,
            },
            TrustRule {
                path: "/w/out.txt".into(),
                scope: Scope::File,
                origin: RuleOrigin::AgentWroteUntrusted,
            },
        ];
        state.save(&sample(&c, &trust, "abc-1")).expect("saved");
        let dir = state.session_dir("abc-1").expect("id");
        assert_eq!(std::fs::metadata(&dir).expect("dir").mode() & 0o777, 0o700);
        assert_eq!(
            std::fs::metadata(dir.join(RECORD_FILE))
                .expect("file")
                .mode()
                & 0o777,
            0o600
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .expect("read")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from(RECORD_FILE)],
            "no temporary file is left"
        );
        let back = state.load("abc-1").expect("loads");
        assert_eq!(back.trust, trust);
        assert_eq!(back.mode, Mode::AcceptEdits);
        assert_eq!(back.next_slot, 3);
        assert_eq!(back.listed.title, "fix the build");
        assert_eq!(
            back.conversation.prompts(),
            vec!["fix the build".to_string()]
        );
    }

    // Verifies: ACP-50
    #[test]
    fn a_session_set_aside_moves_whole_under_its_new_id_and_frees_the_old() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("fix the build"));
        state.save(&sample(&c, &[], "host-1")).expect("saved");
        let old = state.session_dir("host-1").expect("id");
        std::fs::write(old.join("audit.jsonl"), "{}\n").expect("audit");
        assert_eq!(state.set_aside("host-1", "kept-2").ok(), Some(true));
        assert!(!old.exists(), "the old id is free");
        let kept = state.load("kept-2").expect("loads under the new id");
        assert_eq!(kept.listed.id, "kept-2");
        assert_eq!(kept.listed.title, "fix the build");
        assert!(
            state
                .session_dir("kept-2")
                .expect("id")
                .join("audit.jsonl")
                .exists(),
            "the audit trail went with it"
        );
        // Nothing recorded: nothing moves. A taken id is not overwritten.
        assert_eq!(state.set_aside("never-3", "kept-4").ok(), Some(false));
        state.save(&sample(&c, &[], "host-5")).expect("saved");
        assert!(state.set_aside("host-5", "kept-2").is_err());
        assert!(
            state.load("host-5").is_ok(),
            "a refused move leaves it where it was"
        );
    }

    // Verifies: SESS-3, TRUST-1, TRUST-7
    #[test]
    fn an_origin_this_build_does_not_know_grants_nothing() {
        assert_eq!(parse_origin("checkerOfTheFuture"), RuleOrigin::Unrecognised);
        // A deny written into a record reads back as the deny it was.
        for origin in [RuleOrigin::Denied, RuleOrigin::DeniedBySettings] {
            assert_eq!(parse_origin(origin.as_str()), origin);
        }
        assert_eq!(
            RuleOrigin::Unrecognised.integrity(),
            crate::kernel::label::Integrity::Untrusted
        );
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let c = Conversation::default();
        state.save(&sample(&c, &[], "abc-2")).expect("saved");
        let path = state.session_dir("abc-2").expect("id").join(RECORD_FILE);
        // Written back as one object, as an earlier build would have: read the same way.
        let mut v: Value = read_record(&std::fs::read(&path).expect("read")).expect("json");
        v["trust"] = json!([
            {"path": "/w/x", "scope": "file", "origin": "vouchedByTheMoon"},
            {"path": "/w/y", "scope": "galaxy", "origin": "person"},
        ]);
        v["context"] = json!({"label": "(T,maybe)", "released": 7});
        std::fs::write(&path, v.to_string()).expect("write");
        let back = state.load("abc-2").expect("loads");
        assert!(
            back.trust
                .iter()
                .all(|r| r.origin == RuleOrigin::Unrecognised)
        );
        assert_eq!(back.context.0, Label::UNTRUSTED_PRIVATE);
        assert_eq!(back.context.1, Some(Label::UNTRUSTED_PRIVATE));
    }

    // Verifies: SESS-4, SESS-5
    #[test]
    fn a_corrupt_record_is_an_error_and_the_list_passes_over_it() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let c = Conversation::default();
        let mut older = sample(&c, &[], "a-1");
        older.updated = 5;
        state.save(&older).expect("saved");
        state.save(&sample(&c, &[], "b-2")).expect("saved");
        let broken = state.session_dir("c-3").expect("id");
        create_private_dir(&broken).expect("dir");
        std::fs::write(broken.join(RECORD_FILE), "{not json").expect("write");
        let (listed, skipped) = state.list();
        let ids: Vec<_> = listed.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, vec!["b-2", "a-1"], "newest first");
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].1.to_string().contains("could not be read"));
        assert!(matches!(
            state.load("c-3"),
            Err(RecordError::Corrupt { .. })
        ));
        state.delete("a-1").expect("deleted");
        let (listed, _) = state.list();
        assert_eq!(listed.len(), 1, "only that session went");
        assert!(state.session_dir("../x").is_err());
        assert!(state.delete("..").is_err());
    }

    // Verifies: SESS-8
    #[test]
    fn the_history_keeps_the_newest_prompts_privately() {
        let home = tempfile::tempdir().expect("tempdir");
        let state = StateDir::in_home(home.path());
        let entry = |n: usize| HistoryEntry {
            text: format!("prompt {n}"),
            time: n as u64,
            session_id: "s".into(),
            cwd: "/w".into(),
        };
        state.remember_prompt(&entry(0)).expect("remembered");
        for n in 1..15 {
            state
                .remember_prompt_keeping(&entry(n), 10)
                .expect("remembered");
        }
        let all = state.history(usize::MAX);
        assert_eq!(all.len(), 10);
        assert_eq!(all[0].text, "prompt 14");
        assert_eq!(all[9].text, "prompt 5");
        assert_eq!(state.history(3).len(), 3);
        state
            .remember_prompt(&HistoryEntry {
                text: "y".repeat(HISTORY_ENTRY_CHARS + 10),
                ..entry(99)
            })
            .expect("remembered");
        assert_eq!(
            state.history(1)[0].text.chars().count(),
            HISTORY_ENTRY_CHARS,
            "one prompt is bounded"
        );
        assert_eq!(
            std::fs::metadata(state.history_path())
                .expect("file")
                .mode()
                & 0o777,
            0o600
        );
    }

    #[test]
    fn a_title_is_the_first_line_bounded() {
        assert_eq!(title_of("\n  fix it  \nmore"), "fix it");
        assert_eq!(title_of(&"x".repeat(200)).chars().count(), TITLE_CHARS + 1);
    }
}
