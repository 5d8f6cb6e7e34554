//! The walk and read of a search: which files, in which order, under which caps.
//!
//! The walk is breadth first and sorted: each directory's entries are sorted by name, its own
//! files are read before anything deeper, and the directories of one level are taken in order
//! before the next level. A search stopped early has therefore read the shallow part of the tree,
//! the same part on every machine. Directories are skipped by name alone from a fixed list
//! ([`SKIPPED_DIRECTORIES`]); the project's `.gitignore` is not consulted, and no symbolic link
//! is followed, to a file or a directory, so the walk stays inside the directory it was given.
//!
//! This module decides nothing about trust: it reports every file whose bytes it read, and the
//! tool labels the result from that list.

use std::ffi::OsString;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::include::Include;
use super::pattern::Pattern;
use crate::tools::Files;

/// Directory names a search never walks: version control, build output and caches, and
/// dependencies fetched or vendored. Names no project uses for its own sources; `build`, `out`
/// and `dist` are walked because some projects keep sources under them.
pub const SKIPPED_DIRECTORIES: &[&str] = &[
    // Version control.
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".jj",
    "_darcs",
    "CVS",
    // Build output and caches.
    "target",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".venv",
    ".gradle",
    ".next",
    ".nuxt",
    ".parcel-cache",
    ".turbo",
    ".zig-cache",
    "zig-cache",
    ".stack-work",
    ".terraform",
    // Dependencies fetched or vendored.
    "node_modules",
    "bower_components",
    "jspm_packages",
    "vendor",
    "Pods",
];

/// Longest line shown in a result, in characters; longer ones are shortened and marked.
pub const MAX_LINE_CHARS: usize = 2000;

/// The caps one search runs under.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Matches returned before the search stops and says where to continue.
    pub max_matches: usize,
    /// Files the walk may meet, whether or not `include` selects them.
    pub max_files: u64,
    /// When reading stops. Checked before each directory is read and each file is opened, so a
    /// deadline already passed reads nothing.
    pub deadline: Option<Instant>,
    /// Files larger than this are not read, and counted.
    pub max_file_bytes: u64,
}

/// One search: where, what, which files, and which match to start from.
pub struct Request<'a> {
    /// The file or directory searched, absolute.
    pub root: &'a Path,
    /// The workspace root, for an `include` written from it.
    pub workspace: &'a Path,
    pub pattern: &'a Pattern,
    pub include: Option<&'a Include>,
    /// Matches to pass over before the first one returned.
    pub offset: usize,
    pub limits: Limits,
}

/// A matching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    /// The line as written, decoded lossily and shortened past [`MAX_LINE_CHARS`].
    pub text: String,
}

/// Why a search stopped before the end of the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Stopped at the match cap; `next_offset` is the first match left behind.
    MatchCap { next_offset: usize },
    /// Stopped before meeting every file.
    FileCap,
    /// Ran out of time before reading every file.
    Time,
    /// The turn was cancelled.
    Cancelled,
}

/// What a search found and what it did to find it.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The matches from `offset` on, in walk order.
    pub matches: Vec<Match>,
    /// Matches counted, those passed over by `offset` included.
    pub counted: usize,
    /// Files the walk met.
    pub files_met: u64,
    /// Files `include` selected.
    pub files_selected: usize,
    /// Files whose bytes were read, in order: what the result's label is the meet of.
    pub files_read: Vec<PathBuf>,
    /// Files with a match.
    pub files_matched: usize,
    /// Files read and found to hold a NUL byte: not searched.
    pub binary: usize,
    /// Files larger than the size cap: not read.
    pub too_large: usize,
    /// Files and directories that could not be read.
    pub unreadable: usize,
    /// Names from [`SKIPPED_DIRECTORIES`] the walk passed over, each once, sorted.
    pub skipped: Vec<&'static str>,
    /// Symbolic links not followed.
    pub links: usize,
    pub stop: Option<Stop>,
    /// The bytes of files with a returned match, as they were searched, where [`Keep`] asked for
    /// them: what a check is shown, so the lines shown after it are cut from the bytes it judged.
    pub kept: Vec<(PathBuf, Vec<u8>)>,
}

/// Which searched files' bytes a search keeps for a check: those `wanted` says, with a returned
/// match, no larger than `max_bytes`, the first `files` of them in walk order.
pub struct Keep<'a> {
    pub files: usize,
    pub max_bytes: u64,
    pub wanted: &'a (dyn Fn(&Path) -> bool + Sync),
}

impl Keep<'_> {
    /// Keeps nothing.
    pub fn nothing() -> Keep<'static> {
        Keep {
            files: 0,
            max_bytes: 0,
            wanted: &|_| false,
        }
    }
}

/// Searches `request.root` (a directory, or one file) and returns the matches and facts.
///
/// `files` is asked for an open buffer before each file is read from disk, so an editor's unsaved
/// text is what is searched. `cancelled` is polled before each file.
pub fn search_tree(
    request: &Request<'_>,
    files: &dyn Files,
    cancelled: &dyn Fn() -> bool,
) -> Outcome {
    search_tree_keeping(request, files, cancelled, &Keep::nothing())
}

/// As [`search_tree`], keeping the bytes of the files `keep` asks for in [`Outcome::kept`].
pub fn search_tree_keeping(
    request: &Request<'_>,
    files: &dyn Files,
    cancelled: &dyn Fn() -> bool,
    keep: &Keep<'_>,
) -> Outcome {
    let mut search = Search {
        request,
        files,
        cancelled,
        keep,
        out: Outcome::default(),
    };
    let flow = match std::fs::symlink_metadata(request.root) {
        Ok(meta) if meta.is_dir() || meta.file_type().is_symlink() && request.root.is_dir() => {
            search.walk()
        }
        Ok(_) => search.file(request.root.to_path_buf(), true),
        Err(_) => {
            search.out.unreadable += 1;
            ControlFlow::Continue(())
        }
    };
    let _ = flow;
    search.out.skipped.sort_unstable();
    search.out
}

struct Search<'a> {
    request: &'a Request<'a>,
    files: &'a dyn Files,
    cancelled: &'a dyn Fn() -> bool,
    keep: &'a Keep<'a>,
    out: Outcome,
}

impl Search<'_> {
    fn out_of_time(&mut self) -> ControlFlow<()> {
        if (self.cancelled)() {
            self.out.stop = Some(Stop::Cancelled);
            return ControlFlow::Break(());
        }
        if self
            .request
            .limits
            .deadline
            .is_some_and(|d| Instant::now() >= d)
        {
            self.out.stop = Some(Stop::Time);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn walk(&mut self) -> ControlFlow<()> {
        let mut level = vec![self.request.root.to_path_buf()];
        while !level.is_empty() {
            let mut next = Vec::new();
            for directory in level {
                self.out_of_time()?;
                let mut entries: Vec<(OsString, std::fs::FileType)> =
                    match std::fs::read_dir(&directory) {
                        Ok(read) => read
                            .filter_map(Result::ok)
                            .filter_map(|e| e.file_type().ok().map(|t| (e.file_name(), t)))
                            .collect(),
                        Err(_) => {
                            self.out.unreadable += 1;
                            continue;
                        }
                    };
                entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                let mut subdirectories = Vec::new();
                for (name, kind) in entries {
                    let path = directory.join(&name);
                    if kind.is_symlink() {
                        self.out.links += 1;
                    } else if kind.is_dir() {
                        match SKIPPED_DIRECTORIES.iter().find(|s| name == **s) {
                            Some(skipped) => {
                                if !self.out.skipped.contains(skipped) {
                                    self.out.skipped.push(skipped);
                                }
                            }
                            None => subdirectories.push(path),
                        }
                    } else if kind.is_file() {
                        self.file(path, false)?;
                    }
                }
                next.extend(subdirectories);
            }
            level = next;
        }
        ControlFlow::Continue(())
    }

    /// Meets one file: counts it, asks `include`, then reads and searches it.
    fn file(&mut self, path: PathBuf, named: bool) -> ControlFlow<()> {
        if self.out.files_met >= self.request.limits.max_files {
            self.out.stop = Some(Stop::FileCap);
            return ControlFlow::Break(());
        }
        self.out.files_met += 1;
        // A file named as the root is searched whatever the include says.
        if !named
            && self
                .request
                .include
                .is_some_and(|i| !i.selects(&path, self.request.root, self.request.workspace))
        {
            return ControlFlow::Continue(());
        }
        self.out.files_selected += 1;
        self.out_of_time()?;
        let bytes = match self.files.buffer(&path) {
            Some((text, _)) if text.len() as u64 > self.request.limits.max_file_bytes => {
                self.out.too_large += 1;
                return ControlFlow::Continue(());
            }
            Some((text, _)) => text.into_bytes(),
            // Opened without following a link or waiting on a FIFO: an entry swapped after the
            // directory was listed is unreadable rather than a way out or a hang. A root named
            // directly was confined by its real path, which is the one opened.
            None => {
                let at = if named {
                    crate::workspace_file::real_path(&path)
                } else {
                    path.clone()
                };
                match crate::workspace_file::read_regular(&at, self.request.limits.max_file_bytes) {
                    Ok(file) => file.bytes,
                    Err(crate::workspace_file::Refusal::TooLarge { .. }) => {
                        self.out.too_large += 1;
                        return ControlFlow::Continue(());
                    }
                    Err(_) => {
                        self.out.unreadable += 1;
                        return ControlFlow::Continue(());
                    }
                }
            }
        };
        self.out.files_read.push(path.clone());
        if bytes.contains(&0) {
            self.out.binary += 1;
            return ControlFlow::Continue(());
        }
        let (offset, cap) = (self.request.offset, self.request.limits.max_matches);
        let shown_before = self.out.matches.len();
        let out = &mut self.out;
        let mut matched_here = false;
        let flow = self
            .request
            .pattern
            .each_matching_line(&bytes, |line, text| {
                let index = out.counted;
                if index >= offset && out.matches.len() >= cap {
                    out.stop = Some(Stop::MatchCap { next_offset: index });
                    return ControlFlow::Break(());
                }
                out.counted += 1;
                matched_here = true;
                if index >= offset {
                    out.matches.push(Match {
                        path: path.clone(),
                        line,
                        text: shorten(text),
                    });
                }
                ControlFlow::Continue(())
            });
        if matched_here {
            self.out.files_matched += 1;
        }
        let keep = self.keep;
        if self.out.matches.len() > shown_before
            && self.out.kept.len() < keep.files
            && bytes.len() as u64 <= keep.max_bytes
            && (keep.wanted)(&path)
        {
            self.out.kept.push((path, bytes));
        }
        flow
    }
}

fn shorten(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}… [line shortened]", &text[..cut]),
        None => text.into_owned(),
    }
}
