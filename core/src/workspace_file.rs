//! Reading a file from disk without being led somewhere else: the one way the system prompt, the
//! tools and a withheld listing entry get a file's bytes.
//!
//! A path is resolved to its real path first (every link followed), and that real path must lie
//! in a place the person opened: the workspace, a directory they added, or a file they named.
//! The real path is then opened one component at a time with links refused, so a link put in place
//! after the path was resolved makes the open fail instead of leading outside. The handle, not the
//! path, is asked what it is: anything but a regular file (a directory, a FIFO, a device, a socket)
//! is refused before a byte is read, and a file larger than the bound the caller names is refused
//! rather than cut. The file is opened non-blocking, so a FIFO cannot hold the open, and the work
//! runs on the blocking pool, so a slow filesystem holds one of its threads and never a worker of
//! the async runtime.
//!
//! Every answer here is decided from metadata and paths. The bytes are handed back unread.

use std::fs::{File, Metadata};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::files::Files;
use crate::kernel::label::Integrity;
use crate::kernel::trust::{FileId, NamedFiles, TrustMap, TrustStore};

/// Most bytes an ordinary read takes: a file the planner reads, a check is shown, an edit is
/// matched in or a write replaces.
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;

/// Most bytes of `AGENTS.md` that go into the system prompt, which every planner request resends.
pub const INSTRUCTIONS_LIMIT: u64 = 256 * 1024;

/// Why a file was not read. Every variant is worded from metadata, never from content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Nothing is at the path, or a link there points at nothing.
    Missing,
    /// Its real path is outside the places the person opened.
    Outside,
    Directory,
    /// Something other than a regular file or a directory: a FIFO, a device, a socket.
    NotRegular(&'static str),
    /// Larger than the bound the caller named.
    TooLarge {
        limit: u64,
    },
    /// The operating system refused, or the path changed while it was being opened.
    Unreadable(String),
    /// A deny rule the person wrote (or their settings' `read.deny`) covers it (TRUST-7).
    Denied,
}

impl Refusal {
    /// Why, as a clause that completes "it was not read:".
    pub fn reason(&self) -> String {
        match self {
            Refusal::Missing => "it does not exist".into(),
            Refusal::Outside => {
                "it resolves outside the workspace and the directories the person added".into()
            }
            Refusal::Directory => "it is a directory".into(),
            Refusal::NotRegular(kind) => format!("it is not a regular file but {kind}"),
            Refusal::TooLarge { limit } => format!("it is larger than {}", size_words(*limit)),
            Refusal::Unreadable(why) => format!("it could not be opened ({why})"),
            Refusal::Denied => "the person's deny rule covers it, so nothing there is read".into(),
        }
    }
}

/// `TooLarge` where `text` (an open buffer's, already in memory) is over `limit`: the bound a
/// confined read puts on the disk, put on the editor's copy before anything copies it.
pub fn over_bound(text: &str, limit: u64) -> Option<Refusal> {
    (text.len() as u64 > limit).then_some(Refusal::TooLarge { limit })
}

fn size_words(bytes: u64) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// The few facts a confined read needs of whoever reads (the session, for every seat): where
/// the workspace is, what is within reach, the trust store for deny rules and integrity, and the
/// editor's buffers. The reader stands below the session and knows nothing else of it.
pub trait ReadScope: Send + Sync {
    fn cwd(&self) -> &Path;
    /// The workspace, the directories added to it and the files the person named.
    fn reach(&self) -> Reach;
    fn trust(&self) -> &TrustStore;
    fn files(&self) -> &dyn Files;
}

/// The places a read may land, as the session knows them. Paths are kept as given and resolved
/// where the read happens, on the blocking pool; a file the person named is resolved once, the
/// first time a read asks after it (TRUST-22).
#[derive(Clone, Debug)]
pub struct Reach {
    /// Directories: the workspace and the ones the person added.
    roots: Vec<PathBuf>,
    /// Single files the person named (origin `person`), wherever they are: shared with the trust
    /// map, which keeps what they resolved to.
    files: Arc<NamedFiles>,
}

impl Reach {
    pub fn new(roots: Vec<PathBuf>, files: Vec<PathBuf>) -> Reach {
        Reach {
            roots,
            files: Arc::new(NamedFiles::of(files)),
        }
    }

    /// The session's reach: its workspace, the directories added to it and the files the person
    /// named.
    pub fn of(scope: &dyn ReadScope) -> Reach {
        scope.reach()
    }

    /// The reach of a workspace with the directories added to it, and the files the person's
    /// rules in `trust` name.
    pub fn with_rules(roots: Vec<PathBuf>, trust: &TrustStore) -> Reach {
        let files = trust.lock().named();
        Reach { roots, files }
    }

    /// The workspace alone, for what is trusted before the person has done anything.
    pub fn workspace(cwd: &Path) -> Reach {
        Reach::new(vec![cwd.to_path_buf()], Vec::new())
    }

    /// Whether a path lies within reach once its links are resolved. `lexical` is the path as
    /// named; the real path is that of its nearest existing ancestor with the rest appended, so a
    /// file about to be created resolves too. Returns the real path. A named file answers by its
    /// own path or by the real path it resolved to when first asked after (TRUST-22): looked up,
    /// never searched for among every file named.
    pub fn admits(&self, lexical: &Path) -> Option<PathBuf> {
        let real = real_path(lexical);
        let inside = self
            .roots
            .iter()
            .any(|root| real.starts_with(std::fs::canonicalize(root).unwrap_or(root.clone())));
        let named = || {
            self.files.contains(lexical)
                || self.files.contains(&real)
                || self
                    .files
                    .resolves_to(&real, |f| std::fs::canonicalize(f).ok())
        };
        (inside || named()).then_some(real)
    }
}

/// The path with every link resolved: the nearest ancestor that exists is canonicalised and the
/// rest appended.
pub fn real_path(lexical: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = lexical;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return missing.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                at = parent;
            }
            _ => return lexical.to_path_buf(),
        }
    }
}

/// Why a path the session would trust by default must not be: once its links are resolved it
/// lies outside the workspace, it is a link to nothing, or it is not the kind of thing the default
/// is for (a regular file for `AGENTS.md`, a directory for `.bravebot/skills/`). Nothing there at
/// all is no reason: a file created later is read under the same checks as any other. Looks at
/// metadata only, and opens nothing.
pub fn default_refusal(cwd: &Path, path: &Path, directory: bool) -> Option<Refusal> {
    let real = real_path(path);
    let root = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    if !real.starts_with(&root) {
        return Some(Refusal::Outside);
    }
    let Ok(own) = std::fs::symlink_metadata(path) else {
        return None;
    };
    let meta = match std::fs::metadata(&real) {
        Ok(meta) => meta,
        Err(_) if own.file_type().is_symlink() => {
            return Some(Refusal::Unreadable("it is a link to nothing".into()));
        }
        Err(e) => return Some(from_io(&e)),
    };
    match (directory, meta.is_dir()) {
        (true, true) => None,
        (true, false) => Some(Refusal::NotRegular("not a directory")),
        (false, _) => kind_of(&meta).err(),
    }
}

/// What the trust map says about a read of `lexical` whose links lead to `real`. A link cannot
/// hand back the trust a path lost: an untrusted rule at either end wins, so a trusted default
/// that links to a file marked untrusted reads as untrusted. Otherwise a rule at either end
/// answers, and a link within the workspace lends its trust to its target (COST-11).
///
/// `file` is the identity on disk of what was read, where the caller has it: a mark on the same
/// file under any other name (a hard link) that is newer than the rule answering here holds it
/// back too (TRUST-11).
pub fn integrity_through_links(
    trust: &TrustMap,
    lexical: &Path,
    real: &Path,
    file: Option<FileId>,
) -> Option<Integrity> {
    match (
        trust.integrity_of_file(lexical, file),
        trust.integrity_of_file(real, file),
    ) {
        (Some(Integrity::Untrusted), _) | (_, Some(Integrity::Untrusted)) => {
            Some(Integrity::Untrusted)
        }
        (Some(Integrity::Trusted), _) | (_, Some(Integrity::Trusted)) => Some(Integrity::Trusted),
        (None, None) => None,
    }
}

/// What a read got.
pub struct Contents {
    /// Exactly the bytes that were read, unshaped and unlabelled: the caller labels them.
    pub bytes: Vec<u8>,
    /// The change token of what was read: from the opened handle, or from the buffer's version.
    pub token: String,
    /// The open buffer's version when the bytes came from the editor.
    pub version: Option<i32>,
    /// Where the file really is, every link followed.
    pub real: PathBuf,
    /// Its identity on disk (device and inode), from the opened handle or, for an open buffer,
    /// the disk's copy; `None` for a buffer with nothing on disk.
    pub file: Option<FileId>,
}

/// The identity on disk of what is at `path` now, links followed; `None` where nothing is. One
/// `stat`, for marking a file the agent just wrote.
pub fn identity(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().map(|m| FileId::of(&m))
}

/// Where a path really is, checked without opening it: within reach after resolving links, and a
/// regular file. Used where the file is about to be replaced rather than read.
pub async fn locate(session: &dyn ReadScope, path: &Path) -> Result<PathBuf, Refusal> {
    let reach = Reach::of(session);
    let path = path.to_path_buf();
    off_the_workers(move || {
        let real = std::fs::canonicalize(&path).map_err(|e| from_io(&e))?;
        reach.admits(&real).ok_or(Refusal::Outside)?;
        let meta = std::fs::symlink_metadata(&real).map_err(|e| from_io(&e))?;
        kind_of(&meta)?;
        Ok(real)
    })
    .await
}

/// Reads a file the session may reach: the editor's buffer when one is open and the file on disk
/// (if there is one) passes the same confinement, else the disk through [`read_disk`]. At most
/// `limit` bytes either way.
pub async fn read(session: &dyn ReadScope, path: &Path, limit: u64) -> Result<Contents, Refusal> {
    read_within(session, Reach::of(session), path, limit).await
}

/// Reads a file the session trusts before anybody did anything (`AGENTS.md`): within the
/// workspace alone, however far the person's reach has grown, and at most
/// [`INSTRUCTIONS_LIMIT`] bytes.
pub async fn read_instructions(session: &dyn ReadScope, path: &Path) -> Result<Contents, Refusal> {
    let reach = Reach::workspace(session.cwd());
    read_within(session, reach, path, INSTRUCTIONS_LIMIT).await
}

async fn read_within(
    session: &dyn ReadScope,
    reach: Reach,
    path: &Path,
    limit: u64,
) -> Result<Contents, Refusal> {
    // A deny rule on the path as named, or on where its links lead, refuses the read: the bytes
    // of a file read through a link are dropped unseen when its real path is denied.
    if session.trust().lock().denied(path).is_some() {
        return Err(Refusal::Denied);
    }
    let contents = read_unchecked(session, reach, path, limit).await?;
    if session.trust().lock().denied(&contents.real).is_some() {
        return Err(Refusal::Denied);
    }
    Ok(contents)
}

async fn read_unchecked(
    session: &dyn ReadScope,
    reach: Reach,
    path: &Path,
    limit: u64,
) -> Result<Contents, Refusal> {
    // Only a path inside the places the person opened is asked of an editor that is asked.
    if session.files().refreshes() {
        let admitted = {
            let (reach, path) = (reach.clone(), path.to_path_buf());
            off_the_workers(move || Ok(reach.admits(&path).is_some())).await?
        };
        if admitted {
            session.files().refresh(path).await;
        }
    }
    let buffer = session.files().buffer(path);
    let path = path.to_path_buf();
    off_the_workers(move || match buffer {
        Some((text, version)) => {
            reach.admits(&path).ok_or(Refusal::Outside)?;
            let file = match std::fs::metadata(real_path(&path)) {
                Ok(meta) => {
                    kind_of(&meta)?;
                    Some(FileId::of(&meta))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(from_io(&e)),
            };
            if text.len() as u64 > limit {
                return Err(Refusal::TooLarge { limit });
            }
            Ok(Contents {
                token: buffer_token(&path, version),
                bytes: text.as_bytes().to_vec(),
                version: Some(version),
                real: real_path(&path),
                file,
            })
        }
        None => read_blocking(&path, &reach, limit),
    })
    .await
}

/// Reads a file from disk only, whatever the editor holds: for a change, whose landing compares
/// against the disk.
pub async fn read_disk(
    session: &dyn ReadScope,
    path: &Path,
    limit: u64,
) -> Result<Contents, Refusal> {
    let reach = Reach::of(session);
    let path = path.to_path_buf();
    off_the_workers(move || read_blocking(&path, &reach, limit)).await
}

/// What [`read_disk`] checks, without reading the bytes: the file resolves within reach, opens
/// without following a link, is a regular file and is within `limit`. Gives where it really is.
/// For a file whose text is taken from the editor's buffer, whose copy on
/// disk must still pass the confined reader (WRITE-12).
pub async fn check_disk(
    session: &dyn ReadScope,
    path: &Path,
    limit: u64,
) -> Result<PathBuf, Refusal> {
    let reach = Reach::of(session);
    let path = path.to_path_buf();
    off_the_workers(move || {
        let (real, file) = open_confined(&path, &reach)?;
        measure(&file, limit)?;
        Ok(real)
    })
    .await
}

/// Runs a filesystem call on the blocking pool.
async fn off_the_workers<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Refusal> + Send + 'static,
) -> Result<T, Refusal> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|_| Err(Refusal::Unreadable("the read did not finish".into())))
}

/// The read itself, on the calling thread: resolve, confine, open without links, ask the handle
/// what it is, read at most `limit` bytes.
pub fn read_blocking(path: &Path, reach: &Reach, limit: u64) -> Result<Contents, Refusal> {
    let (real, file) = open_confined(path, reach)?;
    read_handle(file, limit, real)
}

/// Resolves `path`, refuses it outside `reach`, and opens where it really is without following
/// a link: the first half of every confined read, and all of [`check_disk`]'s but the measure.
fn open_confined(path: &Path, reach: &Reach) -> Result<(PathBuf, File), Refusal> {
    let real = std::fs::canonicalize(path).map_err(|e| from_io(&e))?;
    reach.admits(&real).ok_or(Refusal::Outside)?;
    let file = open_without_links(&real).map_err(|e| refusal_of_open(&real, &e))?;
    Ok((real, file))
}

/// Why an open failed: what is at the path when it is not a regular file (a socket cannot be
/// opened at all, so its handle is never there to ask), else the operating system's reason.
fn refusal_of_open(path: &Path, e: &std::io::Error) -> Refusal {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_symlink() => {
            kind_of(&meta).err().unwrap_or_else(|| from_io(e))
        }
        _ => from_io(e),
    }
}

/// Reads a file whose path the caller has already confined (a search walk that passes over links,
/// a language-server question about a confined path): opened without following a link in its last
/// component and without blocking, refused unless the handle is a regular file within `limit`.
/// The path should be a real one, as a walk's entries are.
pub fn read_regular(path: &Path, limit: u64) -> Result<Contents, Refusal> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| refusal_of_open(path, &e))?;
    read_handle(file, limit, path.to_path_buf())
}

/// What both readers do once a handle is open: ask it what it is, then read within the bound.
fn read_handle(file: File, limit: u64, real: PathBuf) -> Result<Contents, Refusal> {
    let mut bytes = Vec::new();
    let meta = read_measured_into(file, limit, &mut bytes)?;
    Ok(Contents {
        bytes,
        token: metadata_token(Some(&meta)),
        version: None,
        real,
        file: Some(FileId::of(&meta)),
    })
}

/// As [`read_regular`], into `bytes` (emptied first) rather than a new buffer, so a caller that
/// reads many files in a row (the search walk) reuses one; gives the change token.
pub fn read_regular_into(path: &Path, limit: u64, bytes: &mut Vec<u8>) -> Result<String, Refusal> {
    let meta = read_regular_into_measured(path, limit, bytes)?;
    Ok(metadata_token(Some(&meta)))
}

/// As [`read_regular_into`], giving the metadata the file was measured by rather than its token.
pub fn read_regular_into_measured(
    path: &Path,
    limit: u64,
    bytes: &mut Vec<u8>,
) -> Result<Metadata, Refusal> {
    use std::os::unix::fs::OpenOptionsExt;
    bytes.clear();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| refusal_of_open(path, &e))?;
    read_measured_into(file, limit, bytes)
}

/// Reads the entry `name` of a directory already open as `directory` into `bytes` (emptied first),
/// as [`read_regular_into`] reads a path: the name is looked up in that directory alone, opened
/// without following a link, without blocking and without becoming a terminal, and refused unless
/// the handle is a regular file within `limit`. Gives the file's metadata (what its change token is
/// made from). A walk that lists a directory and then reads its files this way has the kernel look
/// up one name per file rather than every component of its path, and a directory on the way
/// swapped for a link after it was opened changes nothing.
pub fn read_entry_into(
    directory: &std::os::fd::OwnedFd,
    name: &std::ffi::OsStr,
    limit: u64,
    bytes: &mut Vec<u8>,
) -> Result<Metadata, Refusal> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    bytes.clear();
    let name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| Refusal::Unreadable("a NUL in a file name".into()))?;
    let flags =
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: `name` is a NUL-terminated string that outlives the call, and `directory` is an
    // open descriptor the caller owns for the duration of the call.
    let fd = unsafe { libc::openat(directory.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(from_io(&std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just returned by openat and nothing else owns it.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    read_measured_into(file, limit, bytes)
}

/// What the readers into a caller's buffer do once a handle is open: ask it what it is, then read
/// within the bound; gives the metadata the handle was measured by.
fn read_measured_into(file: File, limit: u64, bytes: &mut Vec<u8>) -> Result<Metadata, Refusal> {
    let meta = measure(&file, limit)?;
    // Room for the size measured and the one byte past it, so the read takes two calls rather
    // than a probe and a run of doublings.
    bytes.reserve(usize::try_from(meta.len().saturating_add(1)).unwrap_or(0));
    // One byte past the bound tells a file that grew since it was measured from one that did not.
    file.take(limit.saturating_add(1))
        .read_to_end(bytes)
        .map_err(|e| from_io(&e))?;
    if bytes.len() as u64 > limit {
        return Err(Refusal::TooLarge { limit });
    }
    Ok(meta)
}

/// Asks an open handle what it is: a regular file within `limit` passes.
fn measure(file: &File, limit: u64) -> Result<Metadata, Refusal> {
    let meta = file.metadata().map_err(|e| from_io(&e))?;
    kind_of(&meta)?;
    if meta.len() > limit {
        return Err(Refusal::TooLarge { limit });
    }
    Ok(meta)
}

/// A regular file passes; everything else is named.
fn kind_of(meta: &Metadata) -> Result<(), Refusal> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_file() {
        Ok(())
    } else if kind.is_dir() {
        Err(Refusal::Directory)
    } else if kind.is_fifo() {
        Err(Refusal::NotRegular("a FIFO"))
    } else if kind.is_socket() {
        Err(Refusal::NotRegular("a socket"))
    } else if kind.is_char_device() || kind.is_block_device() {
        Err(Refusal::NotRegular("a device"))
    } else if kind.is_symlink() {
        Err(Refusal::NotRegular("a link"))
    } else {
        Err(Refusal::NotRegular("something else"))
    }
}

fn from_io(e: &std::io::Error) -> Refusal {
    match e.kind() {
        std::io::ErrorKind::NotFound => Refusal::Missing,
        _ if e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::ENOTDIR) => {
            Refusal::Unreadable("a link was put in place while it was being opened".into())
        }
        _ => Refusal::Unreadable(e.to_string()),
    }
}

/// Opens an absolute path that should hold no links, one component at a time, refusing a link at
/// every step. The directories are opened only to be walked through; the last component is
/// opened for reading without blocking, so a FIFO answers at once.
fn open_without_links(real: &Path) -> std::io::Result<File> {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    #[cfg(target_os = "linux")]
    const THROUGH: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    #[cfg(not(target_os = "linux"))]
    const THROUGH: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    const LAST: libc::c_int = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;

    let mut names = Vec::new();
    for component in real.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) => names.push(name),
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a resolved absolute path",
                ));
            }
        }
    }
    if !real.is_absolute() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a resolved absolute path",
        ));
    }
    let Some((last, through)) = names.split_last() else {
        return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
    };
    let open_at = |dir: Option<&OwnedFd>, name: &[u8], flags: libc::c_int| {
        let name = CString::new(name).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in a path")
        })?;
        let at = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
        // SAFETY: `name` is a NUL-terminated string that outlives the call, and `at` is either
        // AT_FDCWD or a descriptor this function owns.
        let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            // SAFETY: `fd` was just returned by openat and nothing else owns it.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    let mut dir = open_at(None, b"/", THROUGH)?;
    for name in through {
        dir = open_at(Some(&dir), name.as_bytes(), THROUGH)?;
    }
    open_at(Some(&dir), last.as_bytes(), LAST).map(File::from)
}

/// The change token of a file on disk: from its size, modification time and inode. A file that
/// is not there has a token too, the same one every time.
pub fn metadata_token(meta: Option<&Metadata>) -> String {
    let mut h = DefaultHasher::new();
    if let Some(meta) = meta {
        meta.len().hash(&mut h);
        meta.modified().ok().hash(&mut h);
        std::os::unix::fs::MetadataExt::ino(meta).hash(&mut h);
    }
    format!("{:08x}", h.finish() & 0xffff_ffff)
}

/// The change token of an open buffer: from its path and version.
pub fn buffer_token(path: &Path, version: i32) -> String {
    let mut h = DefaultHasher::new();
    ("buffer", path, version).hash(&mut h);
    format!("{:08x}", h.finish() & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::ffi::OsStr;
    use std::os::fd::OwnedFd;

    fn reach(dir: &Path) -> Reach {
        Reach::workspace(dir)
    }

    fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
    }

    // Verifies: READ-8
    #[test]
    fn a_regular_file_in_the_workspace_is_read_whole_with_its_token() {
        let (ws, _) = workspace();
        let p = ws.path().join("a.txt");
        std::fs::write(&p, "hello\n").unwrap();
        let got = read_blocking(&p, &reach(ws.path()), READ_LIMIT).unwrap();
        assert_eq!(got.bytes, b"hello\n");
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(got.token, metadata_token(Some(&meta)));
        assert_eq!(got.version, None);
    }

    // Verifies: READ-8
    #[test]
    fn a_link_out_of_the_workspace_is_outside_and_a_link_within_it_is_read() {
        let (ws, elsewhere) = workspace();
        let secret = elsewhere.path().join("credentials");
        std::fs::write(&secret, "secret-3141\n").unwrap();
        std::fs::write(ws.path().join("CLAUDE.md"), "inside\n").unwrap();
        std::os::unix::fs::symlink(&secret, ws.path().join("out.md")).unwrap();
        std::os::unix::fs::symlink("CLAUDE.md", ws.path().join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), ws.path().join("linked-dir")).unwrap();
        let r = reach(ws.path());
        assert_eq!(
            read_blocking(&ws.path().join("out.md"), &r, READ_LIMIT).err(),
            Some(Refusal::Outside)
        );
        assert_eq!(
            read_blocking(&ws.path().join("linked-dir/credentials"), &r, READ_LIMIT).err(),
            Some(Refusal::Outside)
        );
        let inside = read_blocking(&ws.path().join("AGENTS.md"), &r, READ_LIMIT).unwrap();
        assert_eq!(inside.bytes, b"inside\n");
    }

    // Verifies: READ-8
    #[test]
    fn a_fifo_a_device_and_a_directory_are_refused_without_blocking() {
        let (ws, _) = workspace();
        let fifo = ws.path().join("pipe");
        let c = CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", ws.path().join("zero")).unwrap();
        std::fs::create_dir(ws.path().join("AGENTS.md")).unwrap();
        let r = reach(ws.path());
        assert_eq!(
            read_blocking(&fifo, &r, READ_LIMIT).err(),
            Some(Refusal::NotRegular("a FIFO"))
        );
        assert_eq!(
            read_blocking(&ws.path().join("zero"), &r, READ_LIMIT).err(),
            Some(Refusal::Outside)
        );
        let everywhere = Reach::new(vec![PathBuf::from("/")], Vec::new());
        assert_eq!(
            read_blocking(Path::new("/dev/zero"), &everywhere, READ_LIMIT).err(),
            Some(Refusal::NotRegular("a device"))
        );
        assert_eq!(
            read_blocking(&ws.path().join("AGENTS.md"), &r, READ_LIMIT).err(),
            Some(Refusal::Directory)
        );
    }
    use std::ffi::CString;

    // Verifies: READ-8
    #[test]
    fn a_file_over_the_bound_is_refused_not_cut() {
        let (ws, _) = workspace();
        let p = ws.path().join("big.md");
        std::fs::write(&p, vec![b'a'; 2049]).unwrap();
        assert_eq!(
            read_blocking(&p, &reach(ws.path()), 2048).err(),
            Some(Refusal::TooLarge { limit: 2048 })
        );
        assert_eq!(
            read_blocking(&p, &reach(ws.path()), 2049)
                .unwrap()
                .bytes
                .len(),
            2049
        );
        assert_eq!(
            Refusal::TooLarge {
                limit: INSTRUCTIONS_LIMIT
            }
            .reason(),
            "it is larger than 256 KiB"
        );
    }

    // Verifies: READ-8
    #[test]
    fn a_link_met_while_walking_a_resolved_path_fails_the_open() {
        let (ws, elsewhere) = workspace();
        std::fs::write(elsewhere.path().join("x"), "secret\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), ws.path().join("d")).unwrap();
        // As though `d` had been a real directory when the path was resolved and was swapped for a
        // link before the open.
        let swapped = std::fs::canonicalize(ws.path()).unwrap().join("d/x");
        assert!(open_without_links(&swapped).is_err());
        std::os::unix::fs::symlink(elsewhere.path().join("x"), ws.path().join("f")).unwrap();
        let last = std::fs::canonicalize(ws.path()).unwrap().join("f");
        assert!(open_without_links(&last).is_err());
    }

    // Verifies: READ-8
    #[test]
    fn read_regular_refuses_a_fifo_and_a_last_link_without_blocking() {
        let (ws, elsewhere) = workspace();
        let fifo = ws.path().join("pipe");
        let c = CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            read_regular(&fifo, READ_LIMIT).err(),
            Some(Refusal::NotRegular("a FIFO"))
        );
        std::fs::write(elsewhere.path().join("x"), "secret\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("x"), ws.path().join("l")).unwrap();
        assert!(read_regular(&ws.path().join("l"), READ_LIMIT).is_err());
        std::fs::write(ws.path().join("f"), "plain\n").unwrap();
        assert_eq!(
            read_regular(&ws.path().join("f"), READ_LIMIT)
                .unwrap()
                .bytes,
            b"plain\n"
        );
    }

    // Verifies: SEARCH-40
    #[test]
    fn an_entry_is_read_by_its_name_in_the_directory_held_open_never_through_a_link() {
        let (ws, elsewhere) = workspace();
        let listed = ws.path().join("d");
        std::fs::create_dir(&listed).unwrap();
        std::fs::write(listed.join("x"), "listed\n").unwrap();
        std::fs::write(elsewhere.path().join("x"), "secret\n").unwrap();
        let held = OwnedFd::from(File::open(&listed).unwrap());
        // The directory is moved away after it was opened and a link to elsewhere put in its place:
        // the entry is still the one in the directory held open, never the link's.
        std::fs::rename(&listed, ws.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &listed).unwrap();
        let mut bytes = Vec::new();
        let meta = read_entry_into(&held, OsStr::new("x"), READ_LIMIT, &mut bytes).unwrap();
        assert_eq!((bytes.as_slice(), meta.len()), (&b"listed\n"[..], 7));
        assert_eq!(std::fs::read(listed.join("x")).unwrap(), b"secret\n");
        // An entry that is a link, a FIFO or too large is refused at once and reads nothing.
        let moved = OwnedFd::from(File::open(ws.path().join("moved")).unwrap());
        std::os::unix::fs::symlink(elsewhere.path().join("x"), ws.path().join("moved/l")).unwrap();
        assert!(read_entry_into(&moved, OsStr::new("l"), READ_LIMIT, &mut bytes).is_err());
        let c = CString::new(ws.path().join("moved/pipe").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            read_entry_into(&moved, OsStr::new("pipe"), READ_LIMIT, &mut bytes).err(),
            Some(Refusal::NotRegular("a FIFO"))
        );
        assert_eq!(
            read_entry_into(&moved, OsStr::new("x"), 3, &mut bytes).err(),
            Some(Refusal::TooLarge { limit: 3 })
        );
        assert!(bytes.len() <= 4);
    }

    // Verifies: READ-8
    #[test]
    fn a_file_the_person_named_is_within_reach_wherever_it_is() {
        let (ws, elsewhere) = workspace();
        let named = elsewhere.path().join("notes.md");
        std::fs::write(&named, "mine\n").unwrap();
        let r = Reach::new(vec![ws.path().to_path_buf()], vec![named.clone()]);
        assert_eq!(
            read_blocking(&named, &r, READ_LIMIT).unwrap().bytes,
            b"mine\n"
        );
        let other = elsewhere.path().join("other.md");
        std::fs::write(&other, "x\n").unwrap();
        assert_eq!(
            read_blocking(&other, &r, READ_LIMIT).err(),
            Some(Refusal::Outside)
        );
    }

    // Verifies: TRUST-22
    #[test]
    fn a_named_file_is_within_reach_by_its_real_path_resolved_once() {
        use crate::kernel::trust::{RuleOrigin, Scope, TrustRule};
        let (ws, elsewhere) = workspace();
        let at = |name: &str| std::fs::canonicalize(elsewhere.path()).unwrap().join(name);
        for name in ["notes.md", "other.md", "third.md"] {
            std::fs::write(at(name), "x\n").unwrap();
        }
        std::os::unix::fs::symlink(at("notes.md"), at("link.md")).unwrap();
        let person = |path: PathBuf| TrustRule {
            path,
            scope: Scope::File,
            origin: RuleOrigin::Person,
        };
        let store = TrustStore::default();
        store.lock().restore(person(at("link.md")));
        let roots = vec![ws.path().to_path_buf()];
        let reach = Reach::with_rules(roots.clone(), &store);
        assert_eq!(reach.admits(&at("link.md")), Some(at("notes.md")));
        assert_eq!(reach.admits(&at("notes.md")), Some(at("notes.md")));
        assert_eq!(reach.admits(&at("other.md")), None);
        // Pointed elsewhere after it was resolved: the reach stays with what the person named.
        std::fs::remove_file(at("link.md")).unwrap();
        std::os::unix::fs::symlink(at("other.md"), at("link.md")).unwrap();
        let reach = Reach::with_rules(roots.clone(), &store);
        assert_eq!(reach.admits(&at("other.md")), None);
        assert_eq!(reach.admits(&at("notes.md")), Some(at("notes.md")));
        // A file named later is resolved by the next read.
        std::os::unix::fs::symlink(at("third.md"), at("second.md")).unwrap();
        store.lock().restore(person(at("second.md")));
        let reach = Reach::with_rules(roots.clone(), &store);
        assert_eq!(reach.admits(&at("third.md")), Some(at("third.md")));
        // A mark on the named path replaces its rule: what it resolved to is out of reach again.
        store.lock().mark_written_untrusted(at("link.md"), None);
        let reach = Reach::with_rules(roots, &store);
        assert_eq!(reach.admits(&at("notes.md")), None);
        assert_eq!(reach.admits(&at("third.md")), Some(at("third.md")));
    }

    // Verifies: READ-10
    #[test]
    fn a_link_cannot_hand_back_the_trust_its_target_lost() {
        use crate::kernel::trust::Scope;
        let mut trust = TrustMap::default();
        let (agents, claude, other) = (
            Path::new("/w/AGENTS.md"),
            Path::new("/w/CLAUDE.md"),
            Path::new("/w/other.md"),
        );
        assert!(trust.add_default(agents.to_path_buf(), Scope::File));
        assert_eq!(
            integrity_through_links(&trust, agents, claude, None),
            Some(Integrity::Trusted)
        );
        trust.mark_written_untrusted(claude.to_path_buf(), None);
        assert_eq!(
            integrity_through_links(&trust, agents, claude, None),
            Some(Integrity::Untrusted)
        );
        assert_eq!(integrity_through_links(&trust, other, other, None), None);
    }

    // Verifies: TRUST-6
    #[test]
    fn a_default_leading_out_of_the_workspace_or_of_the_wrong_kind_is_refused() {
        let (ws, elsewhere) = workspace();
        let cwd = ws.path();
        assert_eq!(default_refusal(cwd, &cwd.join("AGENTS.md"), false), None);
        std::fs::write(elsewhere.path().join("credentials"), "x\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("credentials"), cwd.join("AGENTS.md"))
            .unwrap();
        assert_eq!(
            default_refusal(cwd, &cwd.join("AGENTS.md"), false),
            Some(Refusal::Outside)
        );
        std::fs::create_dir(cwd.join(".bravebot")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), cwd.join(".bravebot/skills")).unwrap();
        assert_eq!(
            default_refusal(cwd, &cwd.join(".bravebot/skills"), true),
            Some(Refusal::Outside)
        );
        let (ws2, _) = workspace();
        let cwd2 = ws2.path();
        std::fs::create_dir(cwd2.join("AGENTS.md")).unwrap();
        assert_eq!(
            default_refusal(cwd2, &cwd2.join("AGENTS.md"), false),
            Some(Refusal::Directory)
        );
        std::os::unix::fs::symlink("missing.md", cwd2.join("CLAUDE.md")).unwrap();
        assert!(default_refusal(cwd2, &cwd2.join("CLAUDE.md"), false).is_some());
        std::fs::create_dir_all(cwd2.join(".bravebot/skills")).unwrap();
        assert_eq!(
            default_refusal(cwd2, &cwd2.join(".bravebot/skills"), true),
            None
        );
    }
}
