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
/// Trees nested deeper than this are not entered: git's own fail-safe (`core.maxTreeDepth`).
pub const MAX_TREE_DEPTH: usize = 4096;
/// Tree entries one answer reads at most, over every walk it makes.
pub const MAX_TREE_ENTRIES: usize = 200_000;
/// Bytes of one tree object read at most (well over 200,000 entries).
pub const MAX_TREE_BYTES: u64 = 16 << 20;
/// Bytes of one commit or annotated tag read at most.
pub const MAX_COMMIT_BYTES: u64 = 1 << 20;
/// Annotated tags followed at most from a name to what it finally names.
pub const MAX_TAG_CHAIN: usize = 64;
/// Repeated subtrees named one by one in an answer; past these they are counted.
const REPEATS_NAMED: usize = 8;

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
    /// An object is larger than this reader reads (a commit, tag or tree past its bound).
    #[error("{0}; use run with git instead, which asks the person unless a rule covers it")]
    Oversized(String),
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
    /// Refuses an object past `limit` bytes, from its header alone, before it is read.
    fn within(&self, id: ObjectId, limit: u64, what: &str) -> Result<(), Error> {
        let size = self.size(id)?;
        if size > limit {
            return Err(Error::Oversized(format!(
                "{what} {} is {size} bytes, past the {} MiB this reader reads",
                id.to_hex(),
                limit >> 20
            )));
        }
        Ok(())
    }

    /// A commit's object, no larger than [`MAX_COMMIT_BYTES`].
    fn find_commit(&self, id: ObjectId) -> Result<gix::Commit<'_>, Error> {
        self.within(id, MAX_COMMIT_BYTES, "commit")?;
        self.repo.find_commit(id).map_err(read_error)
    }

    /// A tree's object, no larger than [`MAX_TREE_BYTES`].
    fn find_tree(&self, id: ObjectId) -> Result<gix::Tree<'_>, Error> {
        self.within(id, MAX_TREE_BYTES, "tree")?;
        self.repo.find_tree(id).map_err(read_error)
    }

    /// Reads a commit.
    pub fn commit(&self, id: ObjectId) -> Result<Commit, Error> {
        let commit = self.find_commit(id)?;
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
        let commit = self.find_commit(id)?;
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
        let commit = self.find_commit(id)?;
        Ok(
            gix::objs::CommitRefIter::from_bytes(&commit.data, self.repo.object_hash())
                .parent_ids()
                .collect(),
        )
    }

    /// The entry named `name` in a tree, found without decoding the others.
    pub fn child(&self, tree: ObjectId, name: &[u8]) -> Result<Option<Entry>, Error> {
        let tree = self.find_tree(tree)?;
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
        let tree = self.find_tree(id)?;
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
        self.peel(id)?
            .ok_or_else(|| Error::Revision(format!("`{revision}` does not name a commit")))
    }

    /// The commit an object leads to through at most [`MAX_TAG_CHAIN`] annotated tags, each
    /// within [`MAX_COMMIT_BYTES`], if it leads to one.
    pub fn peel_to_commit(&self, id: ObjectId) -> Option<ObjectId> {
        self.peel(id).ok().flatten()
    }

    /// As [`Repository::peel_to_commit`], saying why a tag on the way could not be read.
    pub fn peel(&self, id: ObjectId) -> Result<Option<ObjectId>, Error> {
        let mut id = id;
        for _ in 0..=MAX_TAG_CHAIN {
            match self.kind(id)? {
                gix::object::Kind::Commit => return Ok(Some(id)),
                gix::object::Kind::Tag => match self.annotated_tag(id)? {
                    Some(tag) => id = tag.target,
                    None => return Ok(None),
                },
                _ => return Ok(None),
            }
        }
        Err(Error::Oversized(format!(
            "{} is a chain of more than {MAX_TAG_CHAIN} tags",
            id.to_hex()
        )))
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
        self.within(id, MAX_COMMIT_BYTES, "tag")?;
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

/// What one answer may spend walking trees, shared by every walk it makes: one deadline, one
/// count of tree entries read, and what the walks cut or passed over, for the answer to say.
///
/// Every walk over trees is a loop over a stack of its own (never recursion, so no shape of a
/// repository can exhaust the thread's stack), enters no tree nested past [`MAX_TREE_DEPTH`],
/// reads at most [`MAX_TREE_ENTRIES`] entries, stops at the deadline, and walks a subtree met
/// again under another path only once (a "git bomb" names billions of paths with a few objects).
#[derive(Debug, Default)]
pub struct Budget {
    pub deadline: Deadline,
    entries: usize,
    /// Why the walks stopped or left something out, each once, in the order met.
    pub cuts: Vec<log::Cut>,
    /// Subtrees passed over because the same tree was walked already: the path passed over and
    /// the path walked, the first [`REPEATS_NAMED`] of them.
    pub repeats: Vec<(Vec<u8>, Vec<u8>)>,
    /// Every subtree passed over so, named or not.
    pub repeated: usize,
    /// Lines of file diffs past which no more are made (an answer shows [`MAX_LINES`]); `None`
    /// makes them all, within the deadline.
    pub lines: Option<usize>,
}

impl Budget {
    /// An answer's budget: the deadline, and diffs made only as far as an answer shows them.
    pub fn new(deadline: Deadline) -> Budget {
        Budget {
            deadline,
            lines: Some(MAX_LINES),
            ..Budget::default()
        }
    }

    /// Notes a cut once.
    pub fn cut(&mut self, cut: log::Cut) {
        if !self.cuts.contains(&cut) {
            self.cuts.push(cut);
        }
    }

    /// Whether the walks must stop: the deadline passed or the entries are spent.
    pub fn stopped(&mut self) -> bool {
        if self.cuts.contains(&log::Cut::Deadline) || self.cuts.contains(&log::Cut::Entries) {
            return true;
        }
        if self.deadline.passed() {
            self.cut(log::Cut::Deadline);
            return true;
        }
        false
    }

    /// Whether a tree whose entries lie at `depth` (1 for the root tree's own) may be read; one
    /// whose entries lie deeper than [`MAX_TREE_DEPTH`] is not, and the cut is noted.
    pub fn may_enter(&mut self, depth: usize) -> bool {
        if depth > MAX_TREE_DEPTH {
            self.cut(log::Cut::Depth);
            return false;
        }
        true
    }

    /// A tree's entries, counted against [`MAX_TREE_ENTRIES`]; `None` once the walks must stop.
    pub fn tree(&mut self, repo: &Repository, id: ObjectId) -> Result<Option<Vec<Entry>>, Error> {
        if self.stopped() {
            return Ok(None);
        }
        let entries = repo.tree(id)?;
        Ok(self.count(entries.len()).then_some(entries))
    }

    /// Counts `n` entries walked again without reading their tree; whether the walk may go on.
    pub fn count(&mut self, n: usize) -> bool {
        if self.stopped() {
            return false;
        }
        self.entries += n;
        if self.entries > MAX_TREE_ENTRIES {
            self.cut(log::Cut::Entries);
            return false;
        }
        true
    }

    /// Notes that the subtree at `path` was passed over as the same tree as the one at `first`.
    /// The shallowest are the ones named, as each stands for the most that was passed over.
    pub fn repeat(&mut self, path: &[u8], first: &[u8]) {
        self.repeated += 1;
        let depth = |p: &[u8]| p.iter().filter(|b| **b == b'/').count();
        if self.repeats.len() == REPEATS_NAMED
            && self
                .repeats
                .last()
                .is_some_and(|(last, _)| depth(last) <= depth(path))
        {
            return;
        }
        self.repeats.push((path.to_vec(), first.to_vec()));
        self.repeats.sort_by_key(|(p, _)| depth(p));
        self.repeats.truncate(REPEATS_NAMED);
    }
}

/// A bound on how long a query may take; `None` is no bound.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadline(pub Option<std::time::Instant>);

impl Deadline {
    pub fn passed(&self) -> bool {
        self.0.is_some_and(|d| std::time::Instant::now() >= d)
    }
}
