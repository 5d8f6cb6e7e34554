//! Checkpoints: before each turn (and each restore), the workspace as that turn found every file it
//! went on to change, so the person can go back.
//!
//! A checkpoint is made when a turn starts and holds nothing until the turn changes a file: the
//! first change to a path records what the path held before it ([`Image`]: its bytes, stored once
//! by content hash, and its permissions; or that nothing was there; or that the turn changed it
//! in a way nothing saw coming, so what it held is not known), and every change records what the
//! agent left there. Keeping a checkpoint costs what the turn changes, never the workspace's size.
//! The contents live under `~/.bravebot/sessions/<id>/checkpoints/` (directories `0700`, files
//! `0600`), or in memory for a session that keeps nothing on disk; the session's delegates and
//! jobs record into the same checkpoints as the turn that started them.
//!
//! Restoring is `restore.rs`'s: this module keeps the record and answers what a restore to a
//! checkpoint would bring back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::kernel::label::Integrity;
use crate::workspace_file::{ReadScope, Refusal};

pub use crate::record::CHECKPOINT_INDEX as INDEX_FILE;

/// Most bytes one file's content may hold and still be kept; a larger file is recorded as not
/// kept, and a restore names it rather than bringing it back.
pub const MAX_FILE_BYTES: usize = 8 << 20;
/// Most bytes of content one session keeps; past it the oldest checkpoints are dropped first and
/// the person is told.
pub const MAX_SESSION_BYTES: usize = 512 << 20;

/// What a path held at one moment.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Image {
    /// Nothing was there.
    Absent,
    /// A regular file, or an open buffer (whose text the editor held): its content by hash and
    /// its permission bits where it was on disk.
    Kept { hash: String, mode: Option<u32> },
    /// It changed in a way nothing saw coming (a run's program wrote it without naming it), or it
    /// was too large to keep: what it held is not known.
    NotKept { why: NotKept },
}

/// Why an image was not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NotKept {
    /// A program a run started changed it without the line naming it.
    Unforeseen,
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge,
    /// Not a regular file (a directory, a link out of reach) or unreadable.
    NotAFile,
}

impl NotKept {
    /// Why a restore leaves the path as it is, in words for the person.
    pub fn reason(self) -> &'static str {
        match self {
            NotKept::Unforeseen => {
                "a program changed it without its command line naming it, so what it held before was not kept"
            }
            NotKept::TooLarge => "it was larger than a checkpoint keeps (8 MiB)",
            NotKept::NotAFile => "it was not a regular file bravebot could read",
        }
    }
}

/// One path a checkpoint's turn changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub path: PathBuf,
    /// What it held when the checkpoint was made (before the turn's first change to it).
    pub before: Image,
    /// Whether the trust map held it untrusted then: a restore of those bytes marks it again.
    pub before_untrusted: bool,
    /// What the agent's last change left there.
    pub after: Image,
}

/// Whether a checkpoint stands before a turn or before a restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    Turn,
    Restore,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Turn => "turn",
            Kind::Restore => "restore",
        }
    }
}

/// The workspace before one turn or restore, as far as that turn changed it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub id: String,
    /// Seconds since the epoch.
    pub created: u64,
    pub title: String,
    pub kind: Kind,
    pub changes: Vec<Change>,
}

/// Where contents are kept: bytes nobody vouched for in memory only, since nothing untrusted is
/// ever written under `~/.bravebot` (SESS-9); trusted bytes on disk where the session keeps a
/// record.
struct Blobs {
    disk: Option<PathBuf>,
    memory: Mutex<HashMap<String, Vec<u8>>>,
}

impl Blobs {
    fn memory(&self) -> MutexGuard<'_, HashMap<String, Vec<u8>>> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }
}

struct Inner {
    /// Oldest first.
    list: Vec<Checkpoint>,
    next: u32,
    /// The checkpoint the running turn records into.
    open: Option<String>,
    /// Bytes of content kept, by hash.
    sizes: HashMap<String, usize>,
    /// Checkpoints dropped for room and not yet told to the person.
    dropped: Vec<String>,
}

/// A session's checkpoints, shared by every seat of it.
pub struct Checkpoints {
    inner: Mutex<Inner>,
    blobs: Blobs,
    /// `false` where the person turned checkpoints off: nothing is kept or listed.
    enabled: bool,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints").finish_non_exhaustive()
    }
}

impl Checkpoints {
    /// Checkpoints whose contents go under `dir` (made `0700` when the first is kept).
    pub fn on_disk(dir: PathBuf) -> Checkpoints {
        Checkpoints::with(Blobs {
            disk: Some(dir),
            memory: Mutex::new(HashMap::new()),
        })
    }

    /// Checkpoints kept in memory only (an incognito session).
    pub fn in_memory() -> Checkpoints {
        Checkpoints::with(Blobs {
            disk: None,
            memory: Mutex::new(HashMap::new()),
        })
    }

    /// No checkpoints (`checkpoints.enabled: false`): nothing is kept, nothing listed.
    pub fn off() -> Checkpoints {
        Checkpoints {
            enabled: false,
            ..Checkpoints::in_memory()
        }
    }

    fn with(blobs: Blobs) -> Checkpoints {
        Checkpoints {
            enabled: true,
            inner: Mutex::new(Inner {
                list: Vec::new(),
                next: 1,
                open: None,
                sizes: HashMap::new(),
                dropped: Vec::new(),
            }),
            blobs,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes the checkpoint a turn (or a restore) records into from now on, and returns its id.
    pub fn begin(&self, title: &str, kind: Kind, now: u64) -> String {
        if !self.enabled {
            return String::new();
        }
        let mut inner = self.lock();
        let id = format!("c{}", inner.next);
        inner.next += 1;
        let title: String = title
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(120)
            .collect();
        inner.list.push(Checkpoint {
            id: id.clone(),
            created: now,
            title,
            kind,
            changes: Vec::new(),
        });
        inner.open = Some(id.clone());
        id
    }

    /// Closes the open checkpoint and returns it, with the paths it changed.
    pub fn end(&self) -> Option<Checkpoint> {
        let mut inner = self.lock();
        let id = inner.open.take()?;
        inner.list.iter().find(|c| c.id == id).cloned()
    }

    /// Whether a checkpoint is open (a turn or a restore is recording).
    pub fn is_open(&self) -> bool {
        self.lock().open.is_some()
    }

    /// The paths the open checkpoint's turn has changed so far, in the order it first changed
    /// them: the files a `diagnostics` call with no path asks about (DIAG-6).
    pub fn changed_now(&self) -> Vec<PathBuf> {
        let inner = self.lock();
        open_of(&inner).map_or_else(Vec::new, |c| {
            c.changes.iter().map(|ch| ch.path.clone()).collect()
        })
    }

    /// Whether the open checkpoint has a record of `path` already.
    pub fn has(&self, path: &Path) -> bool {
        let inner = self.lock();
        open_of(&inner).is_some_and(|c| c.changes.iter().any(|ch| ch.path == path))
    }

    /// Records what `path` held before the open checkpoint's turn first changed it. A path
    /// recorded already keeps its first image. Nothing is recorded where no checkpoint is open.
    pub fn before(&self, path: &Path, image: Image, untrusted: bool) {
        let mut inner = self.lock();
        let Some(open) = open_mut(&mut inner) else {
            return;
        };
        if open.changes.iter().any(|c| c.path == path) {
            return;
        }
        open.changes.push(Change {
            path: path.to_path_buf(),
            after: image.clone(),
            before: image,
            before_untrusted: untrusted,
        });
    }

    /// Records what the agent's change left at `path` (after [`Checkpoints::before`]).
    pub fn after(&self, path: &Path, image: Image) {
        let mut inner = self.lock();
        if let Some(open) = open_mut(&mut inner)
            && let Some(change) = open.changes.iter_mut().find(|c| c.path == path)
        {
            change.after = image;
        }
    }

    /// Records what the turn left at `path` as it ends; a path that holds what it held before
    /// (a file a line named but did not change) is no change, and is let go.
    fn settled(&self, path: &Path, image: Image) {
        let mut inner = self.lock();
        if let Some(open) = open_mut(&mut inner) {
            open.changes.retain(|c| {
                c.path != path || matches!(c.before, Image::NotKept { .. }) || c.before != image
            });
            if let Some(change) = open.changes.iter_mut().find(|c| c.path == path) {
                change.after = image;
            }
        }
    }

    /// Keeps `bytes` (once per content) and returns the image naming them.
    /// `trusted` says whether the bytes may be written under `~/.bravebot`: bytes nobody vouched
    /// for are kept in memory only, and a later run of the session finds them no longer kept.
    pub fn keep(&self, bytes: &[u8], mode: Option<u32>, trusted: bool) -> std::io::Result<Image> {
        if bytes.len() > MAX_FILE_BYTES {
            return Ok(Image::NotKept {
                why: NotKept::TooLarge,
            });
        }
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        let hash: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        let known = self.lock().sizes.contains_key(&hash);
        if !known {
            match (&self.blobs.disk, trusted) {
                (Some(dir), true) => write_private(dir, &hash, bytes)?,
                _ => {
                    self.blobs.memory().insert(hash.clone(), bytes.to_vec());
                }
            }
            let mut inner = self.lock();
            inner.sizes.insert(hash.clone(), bytes.len());
            self.make_room(&mut inner);
        }
        Ok(Image::Kept { hash, mode })
    }

    /// The bytes an image names.
    pub fn content(&self, image: &Image) -> Option<Vec<u8>> {
        let Image::Kept { hash, .. } = image else {
            return None;
        };
        if let Some(bytes) = self.blobs.memory().get(hash) {
            return Some(bytes.clone());
        }
        let dir = self.blobs.disk.as_ref()?;
        std::fs::read(dir.join("objects").join(hash)).ok()
    }

    /// Every checkpoint, newest first.
    pub fn list(&self) -> Vec<Checkpoint> {
        let mut out = self.lock().list.clone();
        out.reverse();
        out
    }

    /// The checkpoint of this id.
    pub fn get(&self, id: &str) -> Option<Checkpoint> {
        self.lock().list.iter().find(|c| c.id == id).cloned()
    }

    /// What a restore to checkpoint `id` brings back: for every path a checkpoint from `id` on
    /// changed, what it held at `id` (the first image recorded from `id` on), whether it was
    /// untrusted then, and what the agent's (or a restore's) last change left there. `None` for
    /// an id the session does not have.
    pub fn plan(&self, id: &str) -> Option<Vec<Planned>> {
        let inner = self.lock();
        let at = inner.list.iter().position(|c| c.id == id)?;
        let mut out: Vec<Planned> = Vec::new();
        for checkpoint in &inner.list[at..] {
            for change in &checkpoint.changes {
                match out.iter_mut().find(|p| p.path == change.path) {
                    Some(planned) => planned.left = change.after.clone(),
                    None => out.push(Planned {
                        path: change.path.clone(),
                        then: change.before.clone(),
                        then_untrusted: change.before_untrusted,
                        left: change.after.clone(),
                    }),
                }
            }
        }
        Some(out)
    }

    /// The index of this session's checkpoints as it is kept beside their contents, and where:
    /// `None` for checkpoints kept in memory. Written whole after each turn and restore
    /// ([`write_index`]), read back when the session is resumed ([`Checkpoints::load_index`]).
    pub fn index(&self) -> Option<(PathBuf, Vec<u8>)> {
        let dir = self.blobs.disk.as_ref()?;
        if !self.enabled {
            return None;
        }
        let inner = self.lock();
        let index = serde_json::json!({"next": inner.next, "checkpoints": inner.list});
        let bytes = serde_json::to_vec(&index).ok()?;
        Some((dir.join(INDEX_FILE), bytes))
    }

    /// Takes up the checkpoints an earlier run of the session kept (the index [`Checkpoints::index`]
    /// wrote). An index that does not read leaves the list as it is: nothing is restored from a
    /// record that cannot be read whole.
    pub fn load_index(&self, bytes: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Index {
            next: u32,
            checkpoints: Vec<Checkpoint>,
        }
        let Ok(index) = serde_json::from_slice::<Index>(bytes) else {
            return;
        };
        let mut inner = self.lock();
        if !self.enabled || !inner.list.is_empty() {
            return;
        }
        for image in index
            .checkpoints
            .iter()
            .flat_map(|c| c.changes.iter())
            .flat_map(|ch| [&ch.before, &ch.after])
        {
            if let Image::Kept { hash, .. } = image {
                // Counted as nothing until its size is known: the bound holds for what this run
                // keeps (COST-42).
                inner.sizes.entry(hash.clone()).or_insert(0);
            }
        }
        inner.next = index.next.max(1);
        inner.list = index.checkpoints;
    }

    /// Checkpoints dropped for room since the last call, for telling the person.
    pub fn take_dropped(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().dropped)
    }

    /// Drops the oldest checkpoints (never the open one) until the contents they alone keep fit
    /// in [`MAX_SESSION_BYTES`].
    fn make_room(&self, inner: &mut Inner) {
        while inner.sizes.values().sum::<usize>() > MAX_SESSION_BYTES && inner.list.len() > 1 {
            if inner.open.as_deref() == inner.list.first().map(|c| c.id.as_str()) {
                break;
            }
            let gone = inner.list.remove(0);
            inner.dropped.push(gone.id.clone());
            let used: std::collections::HashSet<&str> = inner
                .list
                .iter()
                .flat_map(|c| c.changes.iter())
                .flat_map(|ch| [&ch.before, &ch.after])
                .filter_map(|i| match i {
                    Image::Kept { hash, .. } => Some(hash.as_str()),
                    _ => None,
                })
                .collect();
            let unused: Vec<String> = inner
                .sizes
                .keys()
                .filter(|h| !used.contains(h.as_str()))
                .cloned()
                .collect();
            for hash in unused {
                inner.sizes.remove(&hash);
                if self.blobs.memory().remove(&hash).is_none()
                    && let Some(dir) = &self.blobs.disk
                {
                    let _ = std::fs::remove_file(dir.join("objects").join(&hash));
                }
            }
        }
    }
}

/// What `path` holds now, kept: the editor's buffer where one is open, else the regular file on
/// disk (read as every read is: inside reach after links, bounded, off the runtime's workers).
pub async fn image_now(
    scope: &dyn ReadScope,
    checkpoints: &Arc<Checkpoints>,
    path: &Path,
) -> Image {
    match crate::workspace_file::read(scope, path, MAX_FILE_BYTES as u64).await {
        Ok(contents) => {
            let mode = match contents.version {
                Some(_) => None,
                None => std::fs::metadata(&contents.real).ok().map(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o7777
                }),
            };
            // Only bytes the trust map holds trusted are written under ~/.bravebot (SESS-9).
            let trusted = scope
                .trust()
                .lock()
                .integrity_of_file(&contents.real, contents.file)
                == Some(Integrity::Trusted)
                && scope.trust().lock().integrity_of(path) == Some(Integrity::Trusted);
            let kept = Arc::clone(checkpoints);
            match tokio::task::spawn_blocking(move || kept.keep(&contents.bytes, mode, trusted))
                .await
            {
                Ok(Ok(image)) => image,
                _ => Image::NotKept {
                    why: NotKept::NotAFile,
                },
            }
        }
        Err(Refusal::Missing) => Image::Absent,
        Err(Refusal::TooLarge { .. }) => Image::NotKept {
            why: NotKept::TooLarge,
        },
        Err(_) => Image::NotKept {
            why: NotKept::NotAFile,
        },
    }
}

/// Records what `path` holds, and whether the trust map holds it untrusted, before the open
/// checkpoint's turn first changes it. Called by every seat right before a change lands.
pub async fn before_change(scope: &dyn ReadScope, checkpoints: &Arc<Checkpoints>, path: &Path) {
    if !checkpoints.is_open() || checkpoints.has(path) {
        return;
    }
    let image = image_now(scope, checkpoints, path).await;
    let untrusted = scope.trust().lock().integrity_of(path) == Some(Integrity::Untrusted);
    checkpoints.before(path, image, untrusted);
}

/// Records what the turn left at every path its open checkpoint holds, as the turn ends: by then
/// an edit the editor applied has come back as the buffer's text. (A person who typed into such a
/// file during the turn is counted with the agent: COST-42.)
pub async fn settle(scope: &dyn ReadScope, checkpoints: &Arc<Checkpoints>) {
    let paths: Vec<PathBuf> = {
        let inner = checkpoints.lock();
        open_of(&inner)
            .map(|c| c.changes.iter().map(|ch| ch.path.clone()).collect())
            .unwrap_or_default()
    };
    for path in paths {
        let image = image_now(scope, checkpoints, &path).await;
        checkpoints.settled(&path, image);
    }
}

/// Records that a program changed `path` without its line naming it: what it held is not known.
pub fn unforeseen_change(checkpoints: &Checkpoints, path: &Path) {
    checkpoints.before(
        path,
        Image::NotKept {
            why: NotKept::Unforeseen,
        },
        false,
    );
}

/// Most entries the walk for files a run changed unnamed looks at.
pub const SCAN_MAX_ENTRIES: usize = 100_000;

/// The regular files under `root` modified at or after `since`, by a walk that is iterative,
/// skips the directories a search skips (`.git`, `node_modules`, `target`, ...), follows no link
/// and stops after [`SCAN_MAX_ENTRIES`] entries. Blocking: call it off the runtime's workers.
pub fn changed_since(root: &Path, since: std::time::SystemTime) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SCAN_MAX_ENTRIES {
                return out;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                let name = entry.file_name();
                if !crate::search::SKIPPED_DIRECTORIES
                    .iter()
                    .any(|s| name.to_str() == Some(*s))
                {
                    pending.push(path);
                }
            } else if kind.is_file()
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|m| m >= since)
            {
                out.push(path);
            }
        }
    }
    out
}

/// One path of a restore's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub path: PathBuf,
    /// What it held at the checkpoint.
    pub then: Image,
    pub then_untrusted: bool,
    /// What the last change since left there.
    pub left: Image,
}

fn open_of(inner: &Inner) -> Option<&Checkpoint> {
    let id = inner.open.as_deref()?;
    inner.list.iter().find(|c| c.id == id)
}

fn open_mut(inner: &mut Inner) -> Option<&mut Checkpoint> {
    let id = inner.open.clone()?;
    inner.list.iter_mut().find(|c| c.id == id)
}

/// Writes a checkpoint index (`0600`, whole, renamed into place) where [`Checkpoints::index`] says.
/// Blocking: call it off the runtime's workers.
pub fn write_index(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = path.parent().ok_or(std::io::ErrorKind::InvalidInput)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = dir.join(format!("{INDEX_FILE}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Keeps the session's checkpoint index on disk, off the runtime's workers.
pub async fn keep_index(checkpoints: &Checkpoints) {
    if let Some((path, bytes)) = checkpoints.index() {
        let written = tokio::task::spawn_blocking(move || write_index(&path, &bytes)).await;
        if !matches!(written, Ok(Ok(()))) {
            tracing::warn!("checkpoint index not written");
        }
    }
}

/// Writes a content file `0600` under `dir/objects/` (made `0700`), once.
fn write_private(dir: &Path, hash: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let objects = dir.join("objects");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&objects)?;
    let path = objects.join(hash);
    if path.exists() {
        return Ok(());
    }
    let tmp = objects.join(format!("{hash}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: CKPT-1
    #[test]
    fn a_restore_plan_brings_back_the_first_image_from_the_checkpoint_on() {
        let c = Checkpoints::in_memory();
        let a = Path::new("/w/a.txt");
        let b = Path::new("/w/b.txt");
        let first = c.begin("edit a", Kind::Turn, 1);
        let one = c.keep(b"one\n", Some(0o644), true).expect("kept");
        let two = c.keep(b"two\n", Some(0o644), true).expect("kept");
        c.before(a, one.clone(), false);
        c.after(a, two.clone());
        c.before(a, two.clone(), true); // a second change keeps the first image
        c.end();
        let second = c.begin("write b", Kind::Turn, 2);
        let three = c.keep(b"three\n", Some(0o644), true).expect("kept");
        c.before(a, two.clone(), true);
        c.after(a, three.clone());
        c.before(b, Image::Absent, false);
        c.after(b, three.clone());
        c.end();
        let plan = c.plan(&first).expect("a plan");
        assert_eq!(plan.len(), 2);
        assert_eq!((plan[0].then.clone(), plan[0].then_untrusted), (one, false));
        assert_eq!(plan[0].left, three);
        assert_eq!(plan[1].then, Image::Absent);
        let plan = c.plan(&second).expect("a plan");
        assert_eq!((plan[0].then.clone(), plan[0].then_untrusted), (two, true));
        assert!(c.plan("c99").is_none());
        assert_eq!(c.list()[0].id, second);
        assert_eq!(c.content(&plan[0].then).as_deref(), Some(&b"two\n"[..]));
    }

    // Verifies: CKPT-7
    #[test]
    fn the_walk_for_unnamed_changes_finds_files_written_since_and_skips_tool_directories() {
        let dir = tempfile::tempdir().expect("a directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).expect("made");
        std::fs::create_dir_all(root.join("node_modules/x")).expect("made");
        std::fs::write(root.join("old.txt"), "old").expect("written");
        let since = std::time::SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("src/deep/new.rs"), "new").expect("written");
        std::fs::write(root.join("node_modules/x/skip.js"), "x").expect("written");
        let old = std::fs::File::options()
            .write(true)
            .open(root.join("old.txt"))
            .expect("opened");
        old.set_modified(since - std::time::Duration::from_secs(60))
            .expect("set");
        assert_eq!(changed_since(root, since), [root.join("src/deep/new.rs")]);
    }

    // Verifies: CKPT-2
    #[test]
    fn contents_on_disk_are_the_owners_alone_and_kept_once() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a directory");
        let c = Checkpoints::on_disk(dir.path().join("checkpoints"));
        let image = c.keep(b"same", None, true).expect("kept");
        assert_eq!(c.keep(b"same", None, true).expect("kept"), image);
        let objects = dir.path().join("checkpoints/objects");
        let files: Vec<_> = std::fs::read_dir(&objects).expect("objects").collect();
        assert_eq!(files.len(), 1);
        let mode = |p: &Path| std::fs::metadata(p).expect("there").permissions().mode() & 0o777;
        assert_eq!(mode(&objects), 0o700);
        assert_eq!(mode(&files[0].as_ref().expect("entry").path()), 0o600);
        assert_eq!(c.content(&image).as_deref(), Some(&b"same"[..]));
        // Bytes nobody vouched for stay in memory: nothing untrusted goes under ~/.bravebot.
        let untrusted = c.keep(b"CANARY", None, false).expect("kept");
        assert_eq!(std::fs::read_dir(&objects).expect("objects").count(), 1);
        assert_eq!(c.content(&untrusted).as_deref(), Some(&b"CANARY"[..]));
        assert_eq!(
            c.keep(&vec![0; MAX_FILE_BYTES + 1], None, true)
                .expect("judged"),
            Image::NotKept {
                why: NotKept::TooLarge
            }
        );
    }
}
