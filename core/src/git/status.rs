//! `status`: staged, unstaged and untracked paths, printed as `git status --short --no-renames`
//! prints them, from the index, `HEAD`'s tree and the working tree.
//!
//! The index is compared with `HEAD` entry by entry. The working tree is compared with the index
//! as git does it: a file whose size, times and inode still match what the index recorded (and
//! that was not written in the same second as the index) is unchanged; any other is hashed as a
//! blob and its id compared. No filter, no `core.fsmonitor` and no untracked cache is consulted:
//! the bytes on disk are hashed as they are. A file that an attribute (`filter`, `ident`,
//! `working-tree-encoding`, or `text`, `eol` or `crlf` with a carriage return in it) or
//! `core.autocrlf` would convert on its way in, and a submodule, is therefore not compared, and
//! the answer lists it as such. Untracked paths come from gitoxide's directory walk, which reads
//! `.gitignore` files (never following a link), `.git/info/exclude` and nothing outside the
//! repository; a wholly untracked directory is listed once with a trailing `/`, as git does.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::log::Cut;
use super::text::quote_path;
use super::{Budget, Error, MAX_TREE_DEPTH, MAX_TREE_ENTRIES, ObjectId, Repository, read_error};

/// Why one path was not compared with the working tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NotCompared {
    /// A submodule: its working tree is another repository.
    Submodule,
    /// An attribute or `core.autocrlf` would convert the file on its way into the index.
    Converted,
}

/// What a status found.
#[derive(Debug, Default)]
pub struct Status {
    /// `XY path` lines in git's order: changed tracked paths by path, then untracked ones.
    pub lines: Vec<String>,
    /// Paths left out because they were not compared, in path order.
    pub not_compared: Vec<(Vec<u8>, NotCompared)>,
}

/// Why a status is not answered here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Declined {
    #[error("its index is split (core.splitIndex), so part of it lives in another file")]
    SplitIndex,
    #[error("its index is sparse or its checkout leaves files out (sparse checkout)")]
    Sparse,
    #[error("its configuration names {0} outside the repository")]
    OutsideFile(&'static str),
    #[error("its {0} is a symbolic link")]
    LinkedInfoFile(&'static str),
    #[error("HEAD's tree holds {0}, past what this reader walks")]
    Bounds(String),
}

/// A failure of a status: declined, or the repository could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    #[error("{0}")]
    Declined(Declined),
    #[error(transparent)]
    Read(#[from] Error),
}

/// Attributes whose presence can change the bytes git hashes for a file.
const CONVERTING: &[&str] = &[
    "filter",
    "ident",
    "working-tree-encoding",
    "text",
    "eol",
    "crlf",
];

const MODE_TREE: u32 = 0o040000;
const MODE_LINK: u32 = 0o120000;
const MODE_GITLINK: u32 = 0o160000;

/// The kind of object a mode stands for: file, link or submodule.
fn kind(mode: u32) -> u32 {
    match mode {
        MODE_LINK | MODE_GITLINK => mode,
        _ => 0o100000,
    }
}

/// Whether `path` lies under `filter`, component-wise (the empty filter holds everything).
fn under(path: &[u8], filter: &[u8]) -> bool {
    filter.is_empty()
        || path == filter
        || (path.starts_with(filter) && path.get(filter.len()) == Some(&b'/'))
}

fn os_path(root: &Path, rel: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    root.join(std::ffi::OsStr::from_bytes(rel))
}

/// Declines a configuration naming an ignore or attributes file outside the repository, or an
/// `info/exclude` or `info/attributes` that is a link.
fn check_sources(repo: &Repository) -> Result<(), Declined> {
    let git_dir = repo.root.join(".git");
    for (rel, what) in [
        ("info/exclude", "info/exclude"),
        ("info/attributes", "info/attributes"),
    ] {
        let linked = std::fs::symlink_metadata(git_dir.join(rel))
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if linked {
            return Err(Declined::LinkedInfoFile(what));
        }
    }
    let config = repo.repo.config_snapshot();
    let root = std::fs::canonicalize(&repo.root).unwrap_or_else(|_| repo.root.clone());
    for (key, what) in [
        ("core.excludesFile", "an ignore file (core.excludesFile)"),
        (
            "core.attributesFile",
            "an attributes file (core.attributesFile)",
        ),
    ] {
        let Some(value) = config.string(key) else {
            continue;
        };
        let text = value.to_string();
        let named = Path::new(&text);
        let inside = !text.starts_with('~')
            && !text.starts_with("%(")
            && std::fs::canonicalize(repo.root.join(named))
                .map(|p| p.starts_with(&root))
                .unwrap_or(false);
        if !inside {
            return Err(Declined::OutsideFile(what));
        }
    }
    Ok(())
}

/// Whether the configuration sets `core.autocrlf` to `true` or `input`.
fn autocrlf(repo: &Repository) -> bool {
    let config = repo.repo.config_snapshot();
    match config.string("core.autocrlf") {
        Some(v) => {
            let v = v.to_string().to_ascii_lowercase();
            v == "input" || config.boolean("core.autocrlf") == Some(true)
        }
        None => false,
    }
}

/// Every blob and submodule of a tree, by path: a loop over a stack of directories, within the
/// budget's depth, entries and deadline. Every path is needed to compare, so a subtree met again
/// is walked again (its entries counted again), and a cut makes the whole status declined.
fn flatten(
    repo: &Repository,
    tree: ObjectId,
    budget: &mut Budget,
) -> Result<BTreeMap<Vec<u8>, (u32, ObjectId)>, StatusError> {
    let mut out = BTreeMap::new();
    // Trees read once, by id: a tree met again is counted again but not read again.
    let mut read: HashMap<ObjectId, std::rc::Rc<Vec<super::Entry>>> = HashMap::new();
    // Trees still to read: the path of each, its id and how deep its entries lie.
    let mut pending = vec![(Vec::new(), tree, 1usize)];
    while let Some((prefix, id, depth)) = pending.pop() {
        if !budget.may_enter(depth) {
            break;
        }
        let entries = match read.get(&id) {
            Some(known) => {
                if !budget.count(known.len()) {
                    break;
                }
                known.clone()
            }
            None => {
                let Some(entries) = budget.tree(repo, id)? else {
                    break;
                };
                let entries = std::rc::Rc::new(entries);
                read.insert(id, entries.clone());
                entries
            }
        };
        for e in entries.iter() {
            let path = if prefix.is_empty() {
                e.name.clone()
            } else {
                [prefix.as_slice(), b"/", &e.name].concat()
            };
            if e.mode == MODE_TREE {
                pending.push((path, e.id, depth + 1));
            } else {
                out.insert(path, (e.mode, e.id));
            }
        }
    }
    if let Some(cut) = budget.cuts.first() {
        let why = match cut {
            Cut::Depth => format!("trees nested deeper than {MAX_TREE_DEPTH}"),
            Cut::Entries => format!("more than {MAX_TREE_ENTRIES} tree entries"),
            _ => "more than its ten seconds".to_string(),
        };
        return Err(StatusError::Declined(Declined::Bounds(why)));
    }
    Ok(out)
}

/// How the file on disk compares with its index entry.
enum Worktree {
    Same,
    Modified,
    Deleted,
    TypeChanged,
    NotCompared(NotCompared),
}

/// Whether a directory above `rel` is missing, not a directory, or a link (git then treats the
/// file as deleted rather than following the link).
fn leading_path_broken(root: &Path, rel: &[u8], known: &mut BTreeMap<Vec<u8>, bool>) -> bool {
    let mut end = 0;
    while let Some(slash) = rel[end..].iter().position(|b| *b == b'/') {
        let dir = &rel[..end + slash];
        let broken = *known.entry(dir.to_vec()).or_insert_with(|| {
            std::fs::symlink_metadata(os_path(root, dir)).map_or(true, |m| !m.is_dir())
        });
        if broken {
            return true;
        }
        end += slash + 1;
    }
    false
}

struct Compare<'a> {
    repo: &'a Repository,
    /// When the index was written: an entry changed in that second or later is hashed.
    /// (Whole seconds, as git compares them without `USE_NSEC`.)
    written: i64,
    autocrlf: bool,
    dirs: BTreeMap<Vec<u8>, bool>,
}

impl Compare<'_> {
    fn entry(
        &mut self,
        rel: &[u8],
        entry: &gix::index::Entry,
        converts: impl FnOnce() -> Result<Conversion, Error>,
    ) -> Result<Worktree, Error> {
        let mode = entry.mode.bits();
        if mode == MODE_GITLINK {
            return Ok(Worktree::NotCompared(NotCompared::Submodule));
        }
        let root = &self.repo.root;
        if leading_path_broken(root, rel, &mut self.dirs) {
            return Ok(Worktree::Deleted);
        }
        let path = os_path(root, rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(Worktree::Deleted);
        };
        let on_disk = if meta.file_type().is_symlink() {
            MODE_LINK
        } else if meta.is_file() {
            0o100000
        } else {
            // A directory (or anything else) where a file was: git reports the file deleted,
            // and the directory walk lists what is there now.
            return Ok(Worktree::Deleted);
        };
        if on_disk != kind(mode) {
            return Ok(Worktree::TypeChanged);
        }
        if entry.flags.contains(gix::index::entry::Flags::ASSUME_VALID) {
            return Ok(Worktree::Same);
        }
        if on_disk == MODE_LINK {
            use std::os::unix::ffi::OsStrExt;
            let target = std::fs::read_link(&path).map_err(read_error)?;
            let id = blob_id(self.repo, target.as_os_str().as_bytes())?;
            return Ok(if id == entry.id {
                Worktree::Same
            } else {
                Worktree::Modified
            });
        }
        use std::os::unix::fs::PermissionsExt;
        let executable = meta.permissions().mode() & 0o111 != 0;
        if executable != (mode == 0o100755) {
            return Ok(Worktree::Modified);
        }
        let conversion = converts()?;
        if conversion == Conversion::Always {
            return Ok(Worktree::NotCompared(NotCompared::Converted));
        }
        if conversion == Conversion::None
            && u64::from(entry.stat.size) != (meta.len() & 0xffff_ffff)
        {
            return Ok(Worktree::Modified);
        }
        if conversion == Conversion::None && self.stat_matches(entry, &path) {
            return Ok(Worktree::Same);
        }
        let bytes = std::fs::read(&path).map_err(read_error)?;
        if conversion == Conversion::IfCarriageReturn && bytes.contains(&b'\r') {
            return Ok(Worktree::NotCompared(NotCompared::Converted));
        }
        let id = blob_id(self.repo, &bytes)?;
        Ok(if id == entry.id {
            Worktree::Same
        } else {
            Worktree::Modified
        })
    }

    /// Whether the file's stat still matches the entry's and the entry is not racy: git's
    /// shortcut for an unchanged file.
    fn stat_matches(&self, entry: &gix::index::Entry, path: &Path) -> bool {
        let Ok(meta) = gix::index::fs::Metadata::from_path_no_follow(path) else {
            return false;
        };
        let Ok(stat) = gix::index::entry::Stat::from_fs(&meta) else {
            return false;
        };
        let options = gix::index::entry::stat::Options::default();
        let racy = i64::from(entry.stat.mtime.secs) >= self.written;
        !racy && entry.stat.matches(&stat, options)
    }
}

/// What converting a file on its way in could do to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conversion {
    None,
    /// End-of-line conversion: only a file holding a carriage return changes.
    IfCarriageReturn,
    /// A filter, `ident` or an encoding: the bytes may change whatever they are.
    Always,
}

fn blob_id(repo: &Repository, bytes: &[u8]) -> Result<ObjectId, Error> {
    gix::objs::compute_hash(repo.repo.object_hash(), gix::object::Kind::Blob, bytes)
        .map_err(read_error)
}

/// Reads `.git/index` as it is, without dissolving a split index into its shared part (such an
/// index is declined), and the second it was written. A repository without an index has an
/// empty one.
fn read_index(repo: &Repository) -> Result<(gix::index::File, i64), StatusError> {
    let path = repo.root.join(".git").join("index");
    let hash = repo.repo.object_hash();
    let empty = gix::index::State::new(hash);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Ok((gix::index::File::from_state(empty, path), 0));
    };
    if !meta.is_file() {
        return Err(StatusError::Read(Error::Read(
            "its index is not a regular file".into(),
        )));
    }
    let written = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let bytes = std::fs::read(&path).map_err(read_error)?;
    let (state, _) = gix::index::State::from_bytes(
        &bytes,
        empty.timestamp(),
        hash,
        gix::index::decode::Options::default(),
    )
    .map_err(read_error)?;
    if state.link().is_some() {
        return Err(StatusError::Declined(Declined::SplitIndex));
    }
    Ok((gix::index::File::from_state(state, path), written))
}

/// Lists the repository's status under `filter`.
pub fn status(
    repo: &Repository,
    filter: &[u8],
    budget: &mut Budget,
) -> Result<Status, StatusError> {
    check_sources(repo).map_err(StatusError::Declined)?;
    let (mut index, written) = read_index(repo)?;
    let skips = index
        .entries()
        .iter()
        .any(|e| e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE));
    if index.is_sparse() || skips {
        return Err(StatusError::Declined(Declined::Sparse));
    }
    let head = match repo.repo.head_id() {
        Ok(id) => Some(repo.commit(id.detach())?.tree),
        Err(_) => None,
    };
    let tree = match head {
        Some(t) => flatten(repo, t, budget)?,
        None => BTreeMap::new(),
    };
    let mut compare = Compare {
        repo,
        written,
        autocrlf: autocrlf(repo),
        dirs: BTreeMap::new(),
    };
    let mut attributes = repo
        .repo
        .attributes_only(
            &index,
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
        )
        .map_err(read_error)?;
    let mut outcome = attributes.selected_attribute_matches(CONVERTING.iter().copied());

    // Changed tracked paths, by path: (X, Y).
    let mut changed: BTreeMap<Vec<u8>, (char, char)> = BTreeMap::new();
    let mut not_compared = Vec::new();
    let mut unmerged: BTreeMap<Vec<u8>, u8> = BTreeMap::new();
    let mut in_index = std::collections::BTreeSet::new();
    for entry in index.entries() {
        let rel = entry.path(&index).to_vec();
        if entry.stage_raw() != 0 {
            *unmerged.entry(rel.clone()).or_insert(0) |= 1 << (entry.stage_raw() - 1);
            in_index.insert(rel);
            continue;
        }
        in_index.insert(rel.clone());
        if !under(&rel, filter) {
            continue;
        }
        let mode = entry.mode.bits();
        let x = match tree.get(&rel) {
            None => 'A',
            Some((m, _)) if kind(*m) != kind(mode) => 'T',
            Some((m, id)) if *m != mode || *id != entry.id => 'M',
            Some(_) => ' ',
        };
        let intent = entry
            .flags
            .contains(gix::index::entry::Flags::INTENT_TO_ADD);
        let autocrlf = compare.autocrlf;
        let mut attributes_for = |rel: &[u8]| -> Result<Conversion, Error> {
            let platform = attributes
                .at_entry(gix::bstr::BStr::new(rel), Some(entry.mode))
                .map_err(read_error)?;
            platform.matching_attributes(&mut outcome);
            let (mut always, mut binary, mut text) = (false, false, false);
            for m in outcome.iter_selected() {
                use gix::attrs::StateRef;
                let set = matches!(m.assignment.state, StateRef::Set | StateRef::Value(_));
                let unset = m.assignment.state == StateRef::Unset;
                match m.assignment.name.as_str() {
                    "filter" | "working-tree-encoding" | "ident" => always |= set,
                    "text" | "crlf" => {
                        binary |= unset;
                        text |= set;
                    }
                    "eol" => text |= set,
                    _ => {}
                }
            }
            // `-text` (or `-crlf`) makes a file binary: no end-of-line conversion, whatever
            // `eol` or core.autocrlf say.
            let conversion = if always {
                Conversion::Always
            } else if binary {
                Conversion::None
            } else if text || autocrlf {
                Conversion::IfCarriageReturn
            } else {
                Conversion::None
            };
            Ok(conversion)
        };
        let y = if intent {
            'A'
        } else {
            match compare.entry(&rel, entry, || attributes_for(&rel))? {
                Worktree::Same => ' ',
                Worktree::Modified => 'M',
                Worktree::Deleted => 'D',
                Worktree::TypeChanged => 'T',
                Worktree::NotCompared(why) => {
                    not_compared.push((rel, why));
                    continue;
                }
            }
        };
        let x = if intent { ' ' } else { x };
        if x != ' ' || y != ' ' {
            changed.insert(rel, (x, y));
        }
    }
    for (path, _) in tree.iter() {
        if !in_index.contains(path) && under(path, filter) {
            changed.insert(path.clone(), ('D', ' '));
        }
    }
    let mut lines: BTreeMap<Vec<u8>, String> = BTreeMap::new();
    for (path, (x, y)) in changed {
        lines.insert(path.clone(), format!("{x}{y} {}", quote_path(&path)));
    }
    for (path, stages) in unmerged {
        if !under(&path, filter) {
            continue;
        }
        let code = match stages {
            0b001 => "DD",
            0b010 => "AU",
            0b011 => "UD",
            0b100 => "UA",
            0b101 => "DU",
            0b110 => "AA",
            _ => "UU",
        };
        lines.insert(path.clone(), format!("{code} {}", quote_path(&path)));
    }
    let mut out = Status {
        lines: lines.into_values().collect(),
        not_compared,
    };
    // The directory walk counts an entry as tracked only when it is marked up to date.
    for entry in index.entries_mut() {
        entry.flags.insert(gix::index::entry::Flags::UPTODATE);
    }
    let options = repo
        .repo
        .dirwalk_options()
        .map_err(read_error)?
        .emit_untracked(gix::dir::walk::EmissionMode::CollapseDirectory)
        .emit_ignored(None)
        .emit_tracked(false)
        .recurse_repositories(false)
        .emit_empty_directories(false);
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    // Under a path, the walk is limited to it as git's pathspec limits it, so a file inside a
    // wholly untracked directory is named itself; the path is taken literally, not as a glob.
    let patterns: Vec<Vec<u8>> = if filter.is_empty() {
        Vec::new()
    } else {
        vec![[b":(literal)".as_slice(), filter].concat()]
    };
    repo.repo
        .dirwalk(
            &index,
            patterns.iter().map(|p| gix::bstr::BStr::new(p.as_slice())),
            &interrupt,
            options,
            &mut collect,
        )
        .map_err(read_error)?;
    for (entry, _) in collect.into_entries_by_path() {
        if entry.status != gix::dir::entry::Status::Untracked {
            continue;
        }
        let rel = entry.rela_path.to_vec();
        if !under(&rel, filter) {
            continue;
        }
        let dir = matches!(
            entry.disk_kind,
            Some(gix::dir::entry::Kind::Directory | gix::dir::entry::Kind::Repository)
        );
        let mut shown = rel.clone();
        if dir {
            shown.push(b'/');
        }
        out.lines.push(format!("?? {}", quote_path(&shown)));
    }
    Ok(out)
}
