//! The history reader behind `read_git`: a repository's commits, trees, tags and blobs read from
//! the files under its `.git` through gitoxide, with no git process started and nothing its
//! configuration names applied (`specs/read_git.md`).
//!
//! [`open`] declines a repository laid out so that a read would go somewhere else than its own
//! `.git` (borrowed objects, replaced objects, grafts, a shared directory, an included
//! configuration file, `core.worktree`, a `.git` that is a file or a link, a bare repository).
//! Past it, each query is a plain function over [`Repository`]: [`log::log`], [`diff::show`],
//! [`diff::diff`], [`status::status`], [`tags::tags`] and [`grep::grep`]. The history walk, the tree diff, the line
//! diff's hunks and git's path quoting are written here, so what an answer means is fixed by this
//! code and not by anything in the repository.
//!
//! ```no_run
//! use std::path::Path;
//! use bravebot_core::git;
//!
//! let repo = git::open(Path::new("/src/project")).expect("a repository this reader opens");
//! let page = git::log::log(&repo, &git::log::LogQuery::default()).expect("a log");
//! assert!(page.lines.len() <= 20);
//! ```

pub mod diff;
pub mod grep;
pub mod log;
pub mod status;
pub mod tags;
mod text;

use std::path::{Path, PathBuf};

pub use gix::ObjectId;
pub use text::{quote_path, short_date};

/// Lines one answer holds at most; a longer one is cut and says so.
pub const MAX_LINES: usize = 2000;
/// Characters one line holds at most; a longer one is shortened and marked.
pub const MAX_LINE_CHARS: usize = 2000;

/// A repository this reader agreed to open.
pub struct Repository {
    repo: gix::Repository,
    /// The directory holding `.git`.
    pub root: PathBuf,
}

/// Why a repository is not read here: each of these is a layout where reading the files under
/// `.git` as this reader does would answer a different question from the one git answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declined {
    NotARepository,
    GitIsAFile,
    GitIsALink,
    Bare,
    Alternates,
    Replace,
    Grafts,
    CommonDir,
    Include,
    Worktree,
    WorktreeConfig,
    Unreadable(String),
}

impl Declined {
    /// The reason in the reader's words, built from metadata and names only.
    pub fn reason(&self) -> String {
        match self {
            Declined::NotARepository => "there is no .git directory there".into(),
            Declined::GitIsAFile => {
                "its .git is a file pointing elsewhere (a linked worktree or a submodule)".into()
            }
            Declined::GitIsALink => "its .git is a symbolic link".into(),
            Declined::Bare => "it is a bare repository".into(),
            Declined::Alternates => {
                "it borrows objects from another repository (objects/info/alternates)".into()
            }
            Declined::Replace => "it replaces objects through refs/replace".into(),
            Declined::Grafts => "it grafts parents through info/grafts".into(),
            Declined::CommonDir => "it shares its refs and objects through commondir".into(),
            Declined::Include => "its configuration includes another file".into(),
            Declined::Worktree => "its configuration sets core.worktree".into(),
            Declined::WorktreeConfig => {
                "its configuration reads a per-worktree file (extensions.worktreeConfig)".into()
            }
            Declined::Unreadable(why) => format!("it could not be read: {why}"),
        }
    }
}

/// What went wrong answering a question of an opened repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The revision does not name anything here, or names the wrong kind of object.
    #[error("{0}")]
    Revision(String),
    /// An object or ref could not be read.
    #[error("the repository could not be read: {0}")]
    Read(String),
}

fn read_error(e: impl std::fmt::Display) -> Error {
    Error::Read(e.to_string())
}

/// Bytes of resolved delta bases and of whole objects one reader keeps.
const PACK_CACHE_BYTES: usize = 64 << 20;
const OBJECT_CACHE_BYTES: usize = 16 << 20;

/// Bytes of `.git/config` read at most, to decide whether to decline.
const CONFIG_LIMIT: u64 = 1 << 20;

/// Opens the repository whose working tree is `root`, or says why it is declined.
pub fn open(root: &Path) -> Result<Repository, Declined> {
    let git_dir = root.join(".git");
    let meta = std::fs::symlink_metadata(&git_dir).map_err(|_| {
        if root.join("HEAD").is_file() && root.join("objects").is_dir() {
            Declined::Bare
        } else {
            Declined::NotARepository
        }
    })?;
    if meta.file_type().is_symlink() {
        return Err(Declined::GitIsALink);
    }
    if meta.is_file() {
        return Err(Declined::GitIsAFile);
    }
    if !meta.is_dir() {
        return Err(Declined::NotARepository);
    }
    let exists = |rel: &str| std::fs::symlink_metadata(git_dir.join(rel)).is_ok();
    if exists("objects/info/alternates") {
        return Err(Declined::Alternates);
    }
    if exists("info/grafts") {
        return Err(Declined::Grafts);
    }
    if exists("commondir") {
        return Err(Declined::CommonDir);
    }
    if replace_refs(&git_dir) {
        return Err(Declined::Replace);
    }
    check_config(&git_dir)?;
    let options = gix::open::Options::isolated()
        .open_path_as_is(true)
        .strict_config(true);
    let mut repo =
        gix::open_opts(&git_dir, options).map_err(|e| Declined::Unreadable(e.to_string()))?;
    if repo.is_bare() {
        return Err(Declined::Bare);
    }
    // Caches of our own sizes (the repository's configuration is not asked how big to make
    // them): resolved delta bases, so a tree or blob stored as a chain of deltas is not rebuilt
    // from its base each time, and whole objects, so a tree read for a commit and again for its
    // child is read once.
    repo.objects.set_pack_cache(|| {
        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
            PACK_CACHE_BYTES,
        ))
    });
    repo.object_cache_size(Some(OBJECT_CACHE_BYTES));
    Ok(Repository {
        repo,
        root: root.to_path_buf(),
    })
}

/// Whether any ref lives under `refs/replace/`, loose or packed.
fn replace_refs(git_dir: &Path) -> bool {
    let loose = std::fs::read_dir(git_dir.join("refs").join("replace"))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    let packed = std::fs::read(git_dir.join("packed-refs"))
        .map(|b| b.windows(14).any(|w| w == b" refs/replace/"))
        .unwrap_or(false);
    loose || packed
}

/// Declines a configuration that would send a read elsewhere. It is read without following any
/// include, so what it names is only looked at, never loaded.
fn check_config(git_dir: &Path) -> Result<(), Declined> {
    use std::io::Read;
    let path = git_dir.join("config");
    let Ok(file) = std::fs::File::open(&path) else {
        return Ok(());
    };
    let mut bytes = Vec::new();
    file.take(CONFIG_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Declined::Unreadable(e.to_string()))?;
    if bytes.len() as u64 > CONFIG_LIMIT {
        return Err(Declined::Unreadable(
            "its configuration is larger than 1 MiB".into(),
        ));
    }
    let meta = gix::config::file::Metadata::from(gix::config::Source::Local);
    let config = gix::config::File::from_bytes_no_includes(&bytes, meta, Default::default())
        .map_err(|e| Declined::Unreadable(e.to_string()))?;
    let includes = config.sections().any(|s| {
        let name = s.header().name();
        name.eq_ignore_ascii_case(b"include") || name.eq_ignore_ascii_case(b"includeIf")
    });
    if includes {
        return Err(Declined::Include);
    }
    if config.string("core.worktree").is_some() {
        return Err(Declined::Worktree);
    }
    if config.boolean("core.bare").ok().flatten() == Some(true) {
        return Err(Declined::Bare);
    }
    if config.boolean("extensions.worktreeConfig").ok().flatten() == Some(true) {
        return Err(Declined::WorktreeConfig);
    }
    Ok(())
}

/// One entry of a tree: its name, mode and object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: Vec<u8>,
    pub mode: u32,
    pub id: ObjectId,
}

impl Entry {
    pub fn is_tree(&self) -> bool {
        self.mode == 0o040000
    }

    pub fn is_submodule(&self) -> bool {
        self.mode == 0o160000
    }
}

/// A commit as this reader uses it.
pub struct Commit {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub author: Signature,
    pub committer: Signature,
    pub message: Vec<u8>,
}

/// What a history walk needs of a commit.
#[derive(Clone, Debug)]
pub struct Header {
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    /// The committer's time, in seconds since the epoch.
    pub committed: i64,
}

/// A name, an email and a time in the signer's own zone.
#[derive(Clone, Debug)]
pub struct Signature {
    pub name: Vec<u8>,
    pub email: Vec<u8>,
    pub time: gix::date::Time,
}

fn signature(s: gix::actor::SignatureRef<'_>) -> Signature {
    let s = s.trim();
    Signature {
        name: s.name.to_vec(),
        email: s.email.to_vec(),
        time: s.time().unwrap_or_default(),
    }
}

impl Repository {
    /// Reads a commit.
    pub fn commit(&self, id: ObjectId) -> Result<Commit, Error> {
        let commit = self.repo.find_commit(id).map_err(read_error)?;
        let decoded = commit.decode().map_err(read_error)?;
        Ok(Commit {
            id,
            tree: decoded.tree(),
            parents: decoded.parents().collect(),
            author: signature(decoded.author().map_err(read_error)?),
            committer: signature(decoded.committer().map_err(read_error)?),
            message: decoded.message.to_vec(),
        })
    }

    /// What a walk needs of a commit (its tree, its parents and when it was committed), read
    /// without decoding its signatures' names or copying its message.
    pub fn header(&self, id: ObjectId) -> Result<Header, Error> {
        use gix::objs::commit::ref_iter::Token;
        let commit = self.repo.find_commit(id).map_err(read_error)?;
        let mut header = Header {
            tree: ObjectId::null(self.repo.object_hash()),
            parents: Vec::new(),
            committed: 0,
        };
        for token in gix::objs::CommitRefIter::from_bytes(&commit.data, self.repo.object_hash()) {
            match token.map_err(read_error)? {
                Token::Tree { id } => header.tree = id,
                Token::Parent { id } => header.parents.push(id),
                Token::Committer { signature } => {
                    header.committed = signature.time().map(|t| t.seconds).unwrap_or_default();
                    break;
                }
                _ => {}
            }
        }
        Ok(header)
    }

    /// A commit's parents, read without decoding the rest of it.
    pub fn parents(&self, id: ObjectId) -> Result<Vec<ObjectId>, Error> {
        let commit = self.repo.find_commit(id).map_err(read_error)?;
        Ok(
            gix::objs::CommitRefIter::from_bytes(&commit.data, self.repo.object_hash())
                .parent_ids()
                .collect(),
        )
    }

    /// The entry named `name` in a tree, found without decoding the others.
    pub fn child(&self, tree: ObjectId, name: &[u8]) -> Result<Option<Entry>, Error> {
        let tree = self.repo.find_tree(tree).map_err(read_error)?;
        for e in gix::objs::TreeRefIter::from_bytes(&tree.data, self.repo.object_hash()) {
            let e = e.map_err(read_error)?;
            if e.filename == name {
                return Ok(Some(Entry {
                    name: e.filename.to_vec(),
                    mode: u32::from(e.mode.value()),
                    id: e.oid.to_owned(),
                }));
            }
        }
        Ok(None)
    }

    /// The entries of a tree, in the order the tree stores them (git's order).
    pub fn tree(&self, id: ObjectId) -> Result<Vec<Entry>, Error> {
        let tree = self.repo.find_tree(id).map_err(read_error)?;
        let decoded = tree.decode().map_err(read_error)?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| Entry {
                name: e.filename.to_vec(),
                mode: u32::from(e.mode.value()),
                id: e.oid.to_owned(),
            })
            .collect())
    }

    /// The bytes of a blob.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Error> {
        let blob = self.repo.find_blob(id).map_err(read_error)?;
        Ok(blob.data.clone())
    }

    /// The size of an object, from its header alone.
    pub fn size(&self, id: ObjectId) -> Result<u64, Error> {
        self.repo
            .find_header(id)
            .map(|h| h.size())
            .map_err(read_error)
    }

    /// The entry at `path` (components separated by `/`) under a tree; the empty path is the tree
    /// itself.
    pub fn entry_at(&self, tree: ObjectId, path: &[u8]) -> Result<Option<Entry>, Error> {
        let mut current = Entry {
            name: Vec::new(),
            mode: 0o040000,
            id: tree,
        };
        for part in path.split(|b| *b == b'/').filter(|p| !p.is_empty()) {
            if !current.is_tree() {
                return Ok(None);
            }
            match self.child(current.id, part)? {
                Some(e) => current = e,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// Resolves one revision in git's syntax to an object id.
    pub fn resolve(&self, revision: &str) -> Result<ObjectId, Error> {
        let spec = self
            .repo
            .rev_parse_single(revision)
            .map_err(|e| Error::Revision(format!("`{revision}` names nothing here: {e}")))?;
        Ok(spec.detach())
    }

    /// Resolves a revision to the commit it names, peeling tags.
    pub fn resolve_commit(&self, revision: &str) -> Result<ObjectId, Error> {
        let id = self.resolve(revision)?;
        self.peel_to_commit(id)
            .ok_or_else(|| Error::Revision(format!("`{revision}` does not name a commit")))
    }

    /// The commit an object leads to through tags, if it leads to one.
    pub fn peel_to_commit(&self, id: ObjectId) -> Option<ObjectId> {
        let object = self.repo.find_object(id).ok()?;
        object.peel_to_commit().ok().map(|c| c.id)
    }

    /// The object's kind.
    pub fn kind(&self, id: ObjectId) -> Result<gix::object::Kind, Error> {
        self.repo
            .find_header(id)
            .map(|h| h.kind())
            .map_err(read_error)
    }

    /// The id shortened as git shortens it: long enough for the number of objects, and longer
    /// where that would be ambiguous.
    pub fn short(&self, id: ObjectId) -> String {
        if let Ok(prefix) = gix::prelude::ObjectIdExt::attach(id, &self.repo).shorten() {
            return prefix.to_string();
        }
        // An object that is not here (a submodule's commit): git prints the shortest prefix, at
        // least the usual length, that no object here shares.
        let hex = id.to_hex().to_string();
        let mut len = self.abbrev_len();
        while len < hex.len() {
            let Ok(prefix) = gix::hash::Prefix::new(&id, len) else {
                break;
            };
            match self.repo.objects.lookup_prefix(prefix, None) {
                Ok(None) => break,
                _ => len += 1,
            }
        }
        hex[..len.min(hex.len())].to_string()
    }

    /// The length git abbreviates to before disambiguating, for the all-zero id of a missing side.
    pub fn abbrev_len(&self) -> usize {
        let count = self.repo.objects.packed_object_count().unwrap_or(0);
        let bits = (u64::BITS - count.leading_zeros()) as usize;
        bits.div_ceil(2).max(7)
    }

    /// Every tag: its short name and the object it points at.
    pub fn tag_refs(&self) -> Result<Vec<(String, ObjectId)>, Error> {
        let platform = self.repo.references().map_err(read_error)?;
        let mut out = Vec::new();
        for r in platform.tags().map_err(read_error)? {
            let r = r.map_err(|e| Error::Read(e.to_string()))?;
            let name = r.name().shorten().to_string();
            // The ref's own target: an annotated tag's object, or a commit. A symbolic tag is
            // not a tag git lists by what it names, so it is left out.
            if let Some(target) = r.target().try_id() {
                out.push((name, target.to_owned()));
            }
        }
        Ok(out)
    }

    /// An annotated tag: its name, tagger, message and target, or `None` for any other object.
    pub fn annotated_tag(&self, id: ObjectId) -> Result<Option<Tag>, Error> {
        if self.kind(id)? != gix::object::Kind::Tag {
            return Ok(None);
        }
        let tag = self.repo.find_tag(id).map_err(read_error)?;
        let decoded = tag.decode().map_err(read_error)?;
        Ok(Some(Tag {
            name: decoded.name.to_vec(),
            target: decoded.target(),
            tagger: decoded.tagger().ok().flatten().map(signature),
            message: decoded.message.to_vec(),
            pgp: decoded.signature.map(|s| s.to_vec()),
        }))
    }
}

/// An annotated tag.
pub struct Tag {
    pub name: Vec<u8>,
    pub target: ObjectId,
    pub tagger: Option<Signature>,
    pub message: Vec<u8>,
    pub pgp: Option<Vec<u8>>,
}

/// A bound on how long a query may take; `None` is no bound.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadline(pub Option<std::time::Instant>);

impl Deadline {
    pub fn passed(&self) -> bool {
        self.0.is_some_and(|d| std::time::Instant::now() >= d)
    }
}
