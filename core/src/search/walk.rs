//! The walk and read of a search: which files, in which order, under which caps.
//!
//! The walk is depth first and sorted: each directory's entries are sorted by name, its own
//! files are read before anything deeper, and each of its subdirectories, in order, is walked
//! whole before the next. A page of matches is therefore found in few neighbouring directories
//! rather than across every shallow level of the tree, and a search stopped early has read the
//! same part on every machine. Directories are skipped by name alone from a fixed list
//! ([`SKIPPED_DIRECTORIES`]); the project's `.gitignore` is not consulted, and no symbolic link
//! is followed, to a file or a directory, so the walk stays inside the directory it was given.
//!
//! Files are met (counted, selected) in walk order and read and searched on up to [`READERS`]
//! threads while the walk goes on, handed over [`BATCH`] at a time and at most [`AHEAD`] files
//! ahead of the one taken next (so a search that stops at the cap reads few files past it); their
//! results are taken in walk order, so the outcome is the one reading them one by one gives,
//! whatever the threads did first. Each listed file is opened by its name in the directory the
//! walk holds open, so the kernel looks up one name rather than the whole path.
//!
//! This module decides nothing about trust: it reports every file whose bytes it read, and the
//! tool labels the result from that list.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::time::Instant;

use super::directory::{Cut, Kept, read_sorted};
use super::include::Include;
use super::pattern::{LineNumbers, LineSearcher, Pattern};
use crate::files::Files;

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
    /// Where the page before this one stopped, when `offset` is the one it named: the files
    /// before that place are met but not read again, unless one of them changed.
    pub resume: Option<&'a Resume>,
}

/// Where a search stopped at the match cap, kept so that the page it names can start there
/// rather than read every file before it again.
///
/// It names the file holding the first match left behind (by its place among the files the walk
/// selected, and its path), how many matches lay before that file, and a digest of the path and
/// stamp (size, modification time and inode, or an open buffer's version) of every file selected
/// before it. A page resumes only where the walk meets the same file at the same place with the
/// same digest; otherwise it reads from the start, as a search without it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// The offset the capped result named.
    pub next_offset: usize,
    /// The file's place among the files selected, from 1.
    selected: usize,
    path: PathBuf,
    /// Matches counted before the file.
    counted: usize,
    /// The digest of the files selected before it.
    before: u64,
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
    /// Files and directories the walk met that a deny rule covers, in walk order: left out
    /// unread.
    pub denied: Vec<PathBuf>,
    /// Where the next page starts, when the search stopped at the match cap.
    pub resume: Option<Resume>,
    /// Whether this search started where the page before it stopped, reading none of the files
    /// before that place.
    pub resumed: bool,
    /// The most bytes of files read ahead of the one taken next that their readings held at once
    /// (SEARCH-43): never more than the budget for reading ahead, which a file is kept to until
    /// it is the next one taken.
    pub most_held_ahead: u64,
}

/// Which searched files' bytes a search keeps for a check: those `wanted` says, with a returned
/// match, no larger than `max_bytes`, the first `files` of them in walk order.
pub struct Keep<'a> {
    pub files: usize,
    pub max_bytes: u64,
    pub wanted: &'a (dyn Fn(&Path) -> bool + Sync),
    /// Paths a deny rule covers: neither read nor descended into, and listed in
    /// [`Outcome::denied`] (TRUST-9).
    pub denied: &'a (dyn Fn(&Path) -> bool + Sync),
}

impl Keep<'_> {
    /// Keeps nothing.
    pub fn nothing() -> Keep<'static> {
        Keep {
            files: 0,
            max_bytes: 0,
            wanted: &|_| false,
            denied: &|_| false,
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
    search_reading(request, files, cancelled, keep, Reading::for_this_machine())
}

/// How a search reads beside its walk: on how many threads, and how many bytes the readings of
/// files ahead of the one taken next may hold at once.
#[derive(Clone, Copy, Debug)]
struct Reading {
    /// The walk's thread reads alone at 1 or less.
    readers: usize,
    ahead_bytes: u64,
}

impl Reading {
    /// One reading thread for each of the machine's cores, at most [`READERS`], holding at most
    /// [`AHEAD_BYTES`] ahead.
    fn for_this_machine() -> Reading {
        Reading {
            readers: std::thread::available_parallelism()
                .map_or(1, std::num::NonZeroUsize::get)
                .clamp(1, READERS),
            ahead_bytes: AHEAD_BYTES,
        }
    }
}

/// As [`search_tree_keeping`], reading as `reading` says.
fn search_reading(
    request: &Request<'_>,
    files: &dyn Files,
    cancelled: &dyn Fn() -> bool,
    keep: &Keep<'_>,
    reading: Reading,
) -> Outcome {
    if let Some(resume) = request.resume {
        let resumed = search_from(request, files, cancelled, keep, reading, Some(resume));
        // A page whose place the walk did not meet as it was left is read from the start.
        if let Ok(outcome) = resumed {
            return outcome;
        }
    }
    search_from(request, files, cancelled, keep, reading, None).unwrap_or_default()
}

/// One search, resuming at `resume` when given; `Err` where the walk did not meet the place it
/// names as it was left.
fn search_from(
    request: &Request<'_>,
    files: &dyn Files,
    cancelled: &dyn Fn() -> bool,
    keep: &Keep<'_>,
    reading: Reading,
    resume: Option<&Resume>,
) -> Result<Outcome, ()> {
    let spare = Arc::new(Mutex::new(Spare::default()));
    let mut search = Search {
        request,
        files,
        cancelled,
        keep,
        out: Outcome::default(),
        pending: VecDeque::new(),
        unreadable_directories: 0,
        arrived: VecDeque::new(),
        taken: 0,
        sent: 0,
        batch: Vec::new(),
        jobs: None,
        results: None,
        halt: Arc::new(AtomicBool::new(false)),
        ahead: Arc::new(Ahead::new(reading.ahead_bytes)),
        floor: Arc::new(AtomicUsize::new(0)),
        spare: spare.clone(),
        reader: Reader {
            spare,
            ..Reader::default()
        },
        resuming: resume,
        stale: false,
        digest: DefaultHasher::new(),
    };
    match std::fs::symlink_metadata(request.root) {
        Ok(meta) if meta.is_dir() || meta.file_type().is_symlink() && request.root.is_dir() => {
            if reading.readers <= 1 {
                let _ = search.walk();
            } else {
                search.walk_with_readers(reading.readers);
            }
        }
        Ok(_) => {
            let _ = search.file(request.root.to_path_buf(), true);
        }
        Err(_) => search.out.unreadable += 1,
    }
    if search.stale || search.resuming.is_some() {
        return Err(());
    }
    search.out.skipped.sort_unstable();
    search.out.most_held_ahead = search.ahead.most();
    Ok(search.out)
}

/// How far the walk had got when it handed a file to the reading threads: the files met and
/// selected, and the denied paths, links, skipped names and unreadable directories it had passed
/// over. Where that file's reading reaches the match cap, the outcome's account goes back to
/// these, as reading one by one would have left it.
#[derive(Clone, Copy)]
struct Reached {
    files_met: u64,
    files_selected: usize,
    denied: usize,
    links: usize,
    skipped: usize,
    unreadable_directories: usize,
}

/// Files for a reading thread: the place in walk order of the first, and a run of consecutive
/// files from there.
type Job = (usize, Vec<Entry>);

/// A file the walk met: its path, and the directory it was listed in, held open so that the file
/// is opened by its name in that directory (`None` where the directory could not be held open: the
/// file is then opened by its path).
type Entry = (Option<Arc<OwnedFd>>, PathBuf);

/// What a reading thread sends back for a run of one [`Job`]'s files: the place of the first and
/// each file's path and reading, in order.
type Readings = (usize, Vec<(PathBuf, (Read, Stamp))>);

struct Search<'a> {
    request: &'a Request<'a>,
    files: &'a dyn Files,
    cancelled: &'a dyn Fn() -> bool,
    keep: &'a Keep<'a>,
    out: Outcome,
    /// Files met and selected and handed to the reading threads, not yet taken, in walk order,
    /// each with how far the walk had got once it was.
    pending: VecDeque<Reached>,
    /// Directories the walk could not read, counted in `out.unreadable` too.
    unreadable_directories: usize,
    /// Readings that came back and are not yet taken, by place from the next one to be taken:
    /// `None` where a file's reading has not come back.
    arrived: VecDeque<Option<(PathBuf, (Read, Stamp))>>,
    /// Files taken so far: the place of the first pending one.
    taken: usize,
    /// Files handed to the reading threads so far, or gathered into `batch` to be.
    sent: usize,
    /// Files met and selected, not yet handed to the reading threads: sent together, so that a
    /// run of files costs one message and one wake-up rather than one for each file.
    batch: Vec<Entry>,
    /// Where files go to be read; `None` when this thread reads them itself.
    jobs: Option<mpsc::Sender<Job>>,
    results: Option<mpsc::Receiver<Readings>>,
    /// Tells the reading threads to read nothing more.
    halt: Arc<AtomicBool>,
    /// The bytes the readings of files ahead of the one taken next hold, kept within a budget.
    ahead: Arc<Ahead>,
    /// The matches counted in the files taken so far, for the reading threads: no file they
    /// read has fewer matches before it, so none needs a line this many matches short of the
    /// page's end.
    floor: Arc<AtomicUsize>,
    /// Read buffers the files taken have finished with, for the reading threads to read into
    /// again rather than allocate.
    spare: Arc<Mutex<Spare>>,
    /// The reader of the files this thread reads itself.
    reader: Reader,
    /// The place this search resumes at, until the walk reaches it.
    resuming: Option<&'a Resume>,
    /// Whether the walk met something other than what the place it resumes at was left with.
    stale: bool,
    /// The digest of the path and stamp of every file selected so far, in walk order.
    digest: DefaultHasher,
}

impl Search<'_> {
    /// Tells the reading threads to read and hand back nothing more, waking any that wait for
    /// room to hand a reading back.
    fn halt(&self) {
        self.halt.store(true, Ordering::Relaxed);
        self.ahead.halt();
    }

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
        // Directories still to walk, the next one on top: a directory's subdirectories go on in
        // reverse order, so the first of them, and everything beneath it, is walked before the
        // second. The stack holds names, not open directories, so its depth costs no descriptors.
        let mut stack = vec![self.request.root.to_path_buf()];
        while let Some(directory) = stack.pop() {
            self.out_of_time()?;
            let files_left = self
                .request
                .limits
                .max_files
                .saturating_sub(self.out.files_met);
            let (cancelled, deadline) = (&self.cancelled, self.request.limits.deadline);
            let out_of_time = || cancelled() || deadline.is_some_and(|d| Instant::now() >= d);
            // Every regular file counts here, a denied one too (the walk does not meet it),
            // so the walk's own work per entry stays a name and a type.
            let read = read_sorted(&directory, files_left, out_of_time, |e| {
                let kind = e.file_type().ok()?;
                Some(Kept {
                    name: e.file_name(),
                    value: kind,
                    counts: kind.is_file(),
                })
            });
            let (entries, cut) = match read {
                Ok(read) => read,
                Err(_) => {
                    self.out.unreadable += 1;
                    self.unreadable_directories += 1;
                    continue;
                }
            };
            if cut == Some(Cut::Time) {
                self.out_of_time()?;
            }
            // Held open for its files to be opened by name; on failure they are opened by path.
            let handle = open_directory(&directory).ok().map(Arc::new);
            let mut subdirectories = Vec::new();
            for Kept {
                name, value: kind, ..
            } in entries
            {
                let path = directory.join(&name);
                if (self.keep.denied)(&path) {
                    self.out.denied.push(path);
                } else if kind.is_symlink() {
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
                    self.queue(path, handle.as_ref())?;
                }
            }
            // The directory held more files than the walk could still meet: the read stopped
            // there, so the walk does too (LIST-5), whether or not the cap was met above.
            if cut == Some(Cut::Files) {
                self.out.stop = Some(Stop::FileCap);
                return ControlFlow::Break(());
            }
            stack.extend(subdirectories.into_iter().rev());
        }
        ControlFlow::Continue(())
    }

    /// The walk with `readers` threads reading and searching the files it selects, at most
    /// [`AHEAD`] files ahead of the one taken next; their readings are taken in walk order.
    /// Files met before a cap or the deadline stopped the walk are still read, as they would
    /// have been one by one.
    fn walk_with_readers(&mut self, readers: usize) {
        let request = self.request;
        let files = self.files;
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (result_tx, result_rx) = mpsc::channel();
        let job_rx = Mutex::new(job_rx);
        let halt = self.halt.clone();
        let (floor, spare, ahead) = (self.floor.clone(), self.spare.clone(), self.ahead.clone());
        std::thread::scope(|scope| {
            for _ in 0..readers {
                let (job_rx, result_tx, halt) = (&job_rx, result_tx.clone(), halt.clone());
                let (floor, spare, ahead) = (&floor, spare.clone(), &ahead);
                scope.spawn(move || {
                    // A matcher of its own: the regex engine's scratch space is then this
                    // thread's, taken without a lock, as each of ripgrep's threads has its own.
                    let mut reader = Reader {
                        spare,
                        pattern: Some(request.pattern.clone()),
                        ..Reader::default()
                    };
                    loop {
                        let job = job_rx.lock().map_or(None, |jobs| jobs.recv().ok());
                        let Some((mut first, entries)) = job else {
                            return;
                        };
                        let mut readings = Vec::with_capacity(entries.len());
                        for (place, (directory, path)) in (first..).zip(entries) {
                            if halt.load(Ordering::Relaxed) {
                                return;
                            }
                            let at = At::Listed(directory.as_deref());
                            let floor = floor.load(Ordering::Relaxed);
                            let reading = read_file(request, files, &mut reader, floor, &path, at);
                            let held = reading.0.held_bytes();
                            if held > 0 && !ahead.try_hold(place, held) {
                                // The readings before this one go back first: the walk may be
                                // waiting for them, and only taking them makes room.
                                if !readings.is_empty() {
                                    let sent = std::mem::take(&mut readings);
                                    if result_tx.send((first, sent)).is_err() {
                                        return;
                                    }
                                }
                                first = place;
                                if !ahead.hold(place, held) {
                                    return;
                                }
                            }
                            readings.push((path, reading));
                        }
                        if !readings.is_empty() && result_tx.send((first, readings)).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(result_tx);
            self.jobs = Some(job_tx);
            self.results = Some(result_rx);
            let _ = self.walk();
            // Unless the match cap was reached, what the walk met is read, whether it ended or
            // stopped at the file cap, the clock or a cancellation.
            if !halt.load(Ordering::Relaxed) {
                let _ = self.take_arrived(Wait::ForAll);
            }
            // Closing the queue ends the threads once they finish the file in hand.
            self.halt();
            self.jobs = None;
        });
        self.results = None;
    }

    /// Takes, in walk order, the readings that came back, waiting as `wait` says; breaks where a
    /// reading reached the match cap, after which nothing later is taken or counted.
    fn take_arrived(&mut self, wait: Wait) -> ControlFlow<()> {
        loop {
            if let Some(results) = &self.results {
                while let Ok(readings) = results.try_recv() {
                    arrive(&mut self.arrived, self.taken, readings);
                }
            }
            while self.arrived.front().is_some_and(Option::is_some) {
                let (Some(Some((path, read))), Some(reached)) =
                    (self.arrived.pop_front(), self.pending.pop_front())
                else {
                    break;
                };
                self.taken += 1;
                let held = read.0.held_bytes();
                if self.take(path, read, reached.files_selected).is_break() {
                    // Read one by one, the walk would have met and passed over nothing after
                    // this file.
                    self.go_back_to(reached);
                    self.halt();
                    self.pending.clear();
                    return ControlFlow::Break(());
                }
                self.ahead.taken(self.taken, held);
            }
            let waiting = match wait {
                Wait::ForRoom => self.pending.len() >= AHEAD,
                Wait::ForAll => !self.pending.is_empty(),
            };
            if !waiting {
                return ControlFlow::Continue(());
            }
            // Before waiting, what is gathered goes out: the readings waited for may be in it.
            self.send_batch();
            match self.results.as_ref().map(mpsc::Receiver::recv) {
                Some(Ok(readings)) => arrive(&mut self.arrived, self.taken, readings),
                // Every reading thread is gone: nothing more will come back.
                _ => return ControlFlow::Continue(()),
            }
        }
    }

    /// Meets one file of the walk: counts it and asks `include` now, in walk order, and leaves
    /// reading it to the reading threads, or reads it at once where there are none.
    fn queue(&mut self, path: PathBuf, directory: Option<&Arc<OwnedFd>>) -> ControlFlow<()> {
        if self.meet(&path, false)? {
            if self.resuming.is_some() {
                self.pass_before_resuming(&path, false)?;
                if self.resuming.is_some() {
                    return ControlFlow::Continue(());
                }
            }
            if self.jobs.is_none() {
                let read = read_file(
                    self.request,
                    self.files,
                    &mut self.reader,
                    self.out.counted,
                    &path,
                    At::Listed(directory.map(Arc::as_ref)),
                );
                let selected = self.out.files_selected;
                return self.take(path, read, selected);
            }
            self.batch.push((directory.cloned(), path));
            let reached = self.reached();
            self.pending.push_back(reached);
            if self.batch.len() >= BATCH {
                self.send_batch();
            }
            return self.take_arrived(Wait::ForRoom);
        }
        ControlFlow::Continue(())
    }

    /// How far the walk has got.
    fn reached(&self) -> Reached {
        Reached {
            files_met: self.out.files_met,
            files_selected: self.out.files_selected,
            denied: self.out.denied.len(),
            links: self.out.links,
            skipped: self.out.skipped.len(),
            unreadable_directories: self.unreadable_directories,
        }
    }

    /// Puts the outcome's account of the walk back to where it had got at `reached`, forgetting
    /// what it met and passed over since.
    fn go_back_to(&mut self, reached: Reached) {
        self.out.files_met = reached.files_met;
        self.out.files_selected = reached.files_selected;
        self.out.denied.truncate(reached.denied);
        self.out.links = reached.links;
        self.out.skipped.truncate(reached.skipped);
        let since = self.unreadable_directories - reached.unreadable_directories;
        self.out.unreadable = self.out.unreadable.saturating_sub(since);
        self.unreadable_directories = reached.unreadable_directories;
    }

    /// Hands the files gathered in `batch` to the reading threads as one job.
    fn send_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let paths = std::mem::take(&mut self.batch);
        let first = self.sent;
        self.sent += paths.len();
        if let Some(jobs) = &self.jobs {
            // The threads are gone only once halted, and then nothing more is taken.
            let _ = jobs.send((first, paths));
        }
    }

    /// A file named as the root: met, read and searched at once.
    fn file(&mut self, path: PathBuf, named: bool) -> ControlFlow<()> {
        if !self.meet(&path, named)? {
            return ControlFlow::Continue(());
        }
        if self.resuming.is_some() {
            self.pass_before_resuming(&path, named)?;
        }
        let at = if named { At::Named } else { At::Listed(None) };
        let read = read_file(
            self.request,
            self.files,
            &mut self.reader,
            self.out.counted,
            &path,
            at,
        );
        let selected = self.out.files_selected;
        self.take(path, read, selected)
    }

    /// A file selected while resuming: one before the place resumed at is taken into the digest
    /// unread; at the place itself, the search goes on from the counts left there if the file and
    /// the digest are the ones left, and stops as stale if not.
    fn pass_before_resuming(&mut self, path: &Path, named: bool) -> ControlFlow<()> {
        let Some(resume) = self.resuming else {
            return ControlFlow::Continue(());
        };
        let selected = self.out.files_selected;
        if selected < resume.selected {
            (path.as_os_str(), stamp(self.files, path, named)).hash(&mut self.digest);
            return ControlFlow::Continue(());
        }
        if selected == resume.selected
            && path == resume.path
            && self.digest.finish() == resume.before
        {
            self.resuming = None;
            self.out.resumed = true;
            self.out.counted = resume.counted;
            return ControlFlow::Continue(());
        }
        self.stale = true;
        ControlFlow::Break(())
    }

    /// Counts a file against the file cap and asks `include` about it; `true` when it is to be
    /// read. Breaks at the file cap, the deadline or a cancellation.
    fn meet(&mut self, path: &Path, named: bool) -> ControlFlow<(), bool> {
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
                .is_some_and(|i| !i.selects(path, self.request.root, self.request.workspace))
        {
            return ControlFlow::Continue(false);
        }
        self.out.files_selected += 1;
        self.out_of_time()?;
        ControlFlow::Continue(true)
    }

    /// Takes one file's reading into the outcome, in walk order: counts, matches from `offset`
    /// up to the cap (only these are cut from the bytes and given a path and text; the others
    /// are counted), and the bytes a check may be shown.
    fn take(
        &mut self,
        path: PathBuf,
        (read, stamp): (Read, Stamp),
        selected: usize,
    ) -> ControlFlow<()> {
        let before = self.digest.clone();
        (path.as_os_str(), stamp).hash(&mut self.digest);
        let counted_before = self.out.counted;
        let (lines, bytes) = match read {
            Read::TooLarge => {
                self.out.too_large += 1;
                return ControlFlow::Continue(());
            }
            Read::Unreadable => {
                self.out.unreadable += 1;
                return ControlFlow::Continue(());
            }
            Read::Binary => {
                self.out.files_read.push(path);
                self.out.binary += 1;
                return ControlFlow::Continue(());
            }
            Read::Text { lines, .. } if lines.is_empty() => {
                // Nothing to count, show or keep.
                self.out.files_read.push(path);
                return ControlFlow::Continue(());
            }
            Read::Text { lines, bytes } => (lines, bytes),
        };
        self.out.files_read.push(path.clone());
        let (offset, cap) = (self.request.offset, self.request.limits.max_matches);
        let shown_before = self.out.matches.len();
        let mut flow = ControlFlow::Continue(());
        let matched_here = !lines.is_empty();
        // The matches passed over by `offset` are only counted, and only those from it on are
        // given a path and a text.
        let passed = offset.saturating_sub(counted_before).min(lines.len());
        self.out.counted += passed;
        let searched = bytes.as_ref().map_or(&[][..], Searched::as_bytes);
        // Only the lines shown are numbered, counting the line breaks before them in this file.
        let mut numbers = LineNumbers::default();
        for range in &lines[passed..] {
            let index = self.out.counted;
            if self.out.matches.len() >= cap {
                self.out.stop = Some(Stop::MatchCap { next_offset: index });
                self.out.resume = Some(Resume {
                    next_offset: index,
                    selected,
                    path: path.clone(),
                    counted: counted_before,
                    before: before.finish(),
                });
                flow = ControlFlow::Break(());
                break;
            }
            self.out.counted += 1;
            self.out.matches.push(Match {
                path: path.clone(),
                line: numbers.at(searched, range.start),
                text: shorten(searched.get(range.clone()).unwrap_or_default()),
            });
        }
        self.floor.store(self.out.counted, Ordering::Relaxed);
        if matched_here {
            self.out.files_matched += 1;
        }
        let Some(bytes) = bytes else {
            return flow;
        };
        if self.out.matches.len() > shown_before
            && self.out.kept.len() < self.keep.files
            && bytes.as_bytes().len() as u64 <= self.keep.max_bytes
            && (self.keep.wanted)(&path)
        {
            self.out.kept.push((path, bytes.into_vec()));
        } else if let Searched::Read(buffer) = bytes {
            self.spare
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .give(buffer);
        }
        flow
    }
}

/// Read buffers kept for reuse once the files read into them are taken, at most [`AHEAD`] of them
/// and [`AHEAD_BYTES`] of room in all; past these they are freed. A search that reads many files
/// with matches then reads them into buffers allocated once.
#[derive(Default)]
struct Spare {
    buffers: Vec<Vec<u8>>,
    /// The room the buffers kept have.
    bytes: u64,
}

impl Spare {
    fn give(&mut self, buffer: Vec<u8>) {
        let room = buffer.capacity() as u64;
        if self.buffers.len() < AHEAD && self.bytes.saturating_add(room) <= AHEAD_BYTES {
            self.bytes += room;
            self.buffers.push(buffer);
        }
    }

    fn take(&mut self) -> Vec<u8> {
        let buffer = self.buffers.pop().unwrap_or_default();
        self.bytes = self.bytes.saturating_sub(buffer.capacity() as u64);
        buffer
    }
}

/// The most files handed to the reading threads and not yet taken: how far reading runs ahead of
/// the merge in walk order, and so how many files a search stopped at the match cap may have read
/// past the one where it stopped (their readings are dropped).
const AHEAD: usize = 128;

/// How many files the walk gathers before handing them to a reading thread as one job (fewer
/// when it has to wait for a reading, and at the end of the walk).
const BATCH: usize = 16;

/// The most bytes of files read ahead of the one taken next that their readings may hold at
/// once (SEARCH-43): with [`AHEAD`], what bounds a search's memory beside each reading thread's
/// own buffer. A file larger than this waits until it is the next one taken.
const AHEAD_BYTES: u64 = 16 << 20;

/// The bytes held by the readings handed back and not yet taken (and so by files read ahead of
/// the one taken next), kept within a budget: a reading thread asks before it hands back a
/// reading that holds its file's bytes, and waits while that would pass the budget, unless the
/// file is the next one to be taken, which is never kept waiting.
struct Ahead {
    budget: u64,
    state: Mutex<Held>,
    room: Condvar,
}

#[derive(Default)]
struct Held {
    /// Bytes held by readings handed back and not yet taken, or about to be handed back.
    bytes: u64,
    /// The place of the next file to be taken: how many are.
    taken: usize,
    /// Reading threads waiting for room.
    waiting: usize,
    /// The most bytes held at once by readings of files other than the next one.
    most: u64,
    halted: bool,
}

impl Ahead {
    fn new(budget: u64) -> Ahead {
        Ahead {
            budget,
            state: Mutex::new(Held::default()),
            room: Condvar::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `bytes` of the file at `place` as held if that keeps the bytes held within the
    /// budget or the file is the next to be taken; `false`, counting nothing, if not.
    fn try_hold(&self, place: usize, bytes: u64) -> bool {
        Self::admit(self.budget, &mut self.state(), place, bytes)
    }

    /// As [`Ahead::try_hold`], waiting until it can count them; `false` if the search halted
    /// first.
    fn hold(&self, place: usize, bytes: u64) -> bool {
        let mut state = self.state();
        loop {
            if state.halted {
                return false;
            }
            if Self::admit(self.budget, &mut state, place, bytes) {
                return true;
            }
            state.waiting += 1;
            state = self
                .room
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.waiting -= 1;
        }
    }

    fn admit(budget: u64, state: &mut Held, place: usize, bytes: u64) -> bool {
        let next = place == state.taken;
        let within = state.bytes.saturating_add(bytes) <= budget;
        if !(next || within) {
            return false;
        }
        state.bytes = state.bytes.saturating_add(bytes);
        if !next {
            state.most = state.most.max(state.bytes);
        }
        true
    }

    /// The walk has taken `taken` files, the last of them holding `released` bytes.
    fn taken(&self, taken: usize, released: u64) {
        let mut state = self.state();
        state.taken = taken;
        state.bytes = state.bytes.saturating_sub(released);
        if state.waiting > 0 {
            self.room.notify_all();
        }
    }

    fn halt(&self) {
        self.state().halted = true;
        self.room.notify_all();
    }

    fn most(&self) -> u64 {
        self.state().most
    }
}

/// How long [`Search::take_arrived`] waits for readings.
#[derive(Clone, Copy)]
enum Wait {
    /// Until fewer than [`AHEAD`] files are pending.
    ForRoom,
    /// Until every pending file is taken.
    ForAll,
}
/// The most threads that read and search at once.
const READERS: usize = 4;

/// What reading and searching one file gave.
enum Read {
    TooLarge,
    Unreadable,
    Binary,
    /// The matching lines, each as the range of the bytes it spans (numbered only if it is
    /// shown), at most as many as the request could take from this file, and the bytes searched
    /// when there is a line to cut from them.
    Text {
        lines: Vec<std::ops::Range<usize>>,
        bytes: Option<Searched>,
    },
}

impl Read {
    /// The bytes of the file this reading holds a copy of: those read from disk and kept for
    /// the lines to be cut from (an open buffer's text is the editor's, shared, not a copy).
    fn held_bytes(&self) -> u64 {
        match self {
            Read::Text {
                bytes: Some(Searched::Read(bytes)),
                ..
            } => bytes.len() as u64,
            _ => 0,
        }
    }
}

/// The bytes a file was searched in, handed with its matching lines to the walk's thread, which
/// cuts the lines shown from them and shows a check these very bytes.
enum Searched {
    /// Read from disk into a buffer of the reader's, now the reading's.
    Read(Vec<u8>),
    /// An open buffer's text.
    Buffer(Arc<str>),
}

impl Searched {
    fn as_bytes(&self) -> &[u8] {
        match self {
            Searched::Read(bytes) => bytes,
            Searched::Buffer(text) => text.as_bytes(),
        }
    }

    fn into_vec(self) -> Vec<u8> {
        match self {
            Searched::Read(bytes) => bytes,
            Searched::Buffer(text) => text.as_bytes().to_vec(),
        }
    }
}

/// What one reading thread keeps from file to file: ripgrep's searcher with its line buffer, and
/// the buffer files are read into, so neither is allocated again for each file. A buffer handed
/// on with a file's lines is replaced from the spare ones the walk gives back.
#[derive(Default)]
struct Reader {
    searcher: LineSearcher,
    buffer: Vec<u8>,
    spare: Arc<Mutex<Spare>>,
    /// The reading thread's own copy of the request's pattern; `None` on the walk's thread,
    /// which uses the request's.
    pattern: Option<Pattern>,
}

/// Where a file to be read was found.
#[derive(Clone, Copy)]
enum At<'a> {
    /// Named as the root of the search: confined by its real path, which is the one opened.
    Named,
    /// Listed by the walk, in the directory held open here when it could be.
    Listed(Option<&'a OwnedFd>),
}

/// Reads one file (an open buffer first) and finds its matching lines. Touches nothing shared
/// but the spare buffers. `floor` is a number of matches no fewer than lie before this file.
fn read_file(
    request: &Request<'_>,
    files: &dyn Files,
    reader: &mut Reader,
    floor: usize,
    path: &Path,
    at: At<'_>,
) -> (Read, Stamp) {
    use crate::workspace_file::{Refusal, read_entry_into};
    let open = files.buffer(path);
    let limit = request.limits.max_file_bytes;
    if reader.buffer.capacity() == 0 {
        reader.buffer = reader
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
    let stamp = match &open {
        Some((text, _)) if text.len() as u64 > limit => {
            return (Read::TooLarge, buffer_stamp(open.as_ref()));
        }
        Some(_) => buffer_stamp(open.as_ref()),
        // Opened without following a link or waiting on a FIFO: an entry swapped after the
        // directory was listed is unreadable rather than a way out or a hang.
        None => {
            let (read, stamped) = match (at, path.file_name()) {
                (At::Listed(Some(directory)), Some(name)) => (
                    read_entry_into(directory, name, limit, &mut reader.buffer),
                    path.to_path_buf(),
                ),
                (At::Named, _) => {
                    let real = crate::workspace_file::real_path(path);
                    (read_measured(&real, limit, &mut reader.buffer), real)
                }
                _ => (
                    read_measured(path, limit, &mut reader.buffer),
                    path.to_path_buf(),
                ),
            };
            match read {
                Ok(meta) => disk_stamp_of(Some(&meta)),
                Err(Refusal::TooLarge { .. }) => return (Read::TooLarge, disk_stamp(&stamped)),
                Err(_) => return (Read::Unreadable, disk_stamp(&stamped)),
            }
        }
    };
    let bytes: &[u8] = match &open {
        Some((text, _)) => text.as_bytes(),
        None => &reader.buffer,
    };
    // `memchr` scans with the processor's vector instructions, where `contains` goes a byte or a
    // word at a time.
    if memchr::memchr(0, bytes).is_some() {
        return (Read::Binary, stamp);
    }
    // No file can give the outcome more lines than these: the matches passed over, the cap,
    // and the one that shows the cap was reached, less the matches already counted before it.
    let most = request
        .offset
        .saturating_add(request.limits.max_matches)
        .saturating_add(1)
        .saturating_sub(floor)
        .max(1);
    let mut lines = Vec::new();
    let pattern = reader.pattern.as_ref().unwrap_or(request.pattern);
    let _ = pattern.each_matching_line_at(&mut reader.searcher, bytes, |range| {
        if lines.len() >= most {
            return ControlFlow::Break(());
        }
        lines.push(range);
        ControlFlow::Continue(())
    });
    // The bytes go with the lines only where there are lines to cut from them.
    let bytes = match open {
        _ if lines.is_empty() => None,
        Some((text, _)) => Some(Searched::Buffer(text)),
        None => Some(Searched::Read(std::mem::take(&mut reader.buffer))),
    };
    (Read::Text { lines, bytes }, stamp)
}

/// Keeps the readings a thread sent back by place until their turn comes; `taken` is the place
/// of the front of `arrived`, and no reading comes back for a file already taken.
fn arrive(
    arrived: &mut VecDeque<Option<(PathBuf, (Read, Stamp))>>,
    taken: usize,
    (first, readings): Readings,
) {
    let start = first.saturating_sub(taken);
    let end = start + readings.len();
    if arrived.len() < end {
        arrived.resize_with(end, || None);
    }
    for (slot, reading) in arrived.range_mut(start..end).zip(readings) {
        *slot = Some(reading);
    }
}

/// What a page's digest holds of one file besides its path: an open buffer's version, or the
/// size, modification time and inode on disk (all absent for a file that is not there).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Stamp {
    Buffer(i32),
    Disk(Option<(u64, Option<std::time::SystemTime>, u64)>),
}

/// The stamp of a file left unread before the place a page resumes at: what reading it would
/// have stamped it with.
fn stamp(files: &dyn Files, path: &Path, named: bool) -> Stamp {
    if let Some(open) = files.buffer(path) {
        return buffer_stamp(Some(&open));
    }
    if named {
        disk_stamp(&crate::workspace_file::real_path(path))
    } else {
        disk_stamp(path)
    }
}

fn buffer_stamp(open: Option<&(Arc<str>, i32)>) -> Stamp {
    Stamp::Buffer(open.map_or(0, |(_, version)| *version))
}

fn disk_stamp(path: &Path) -> Stamp {
    disk_stamp_of(std::fs::symlink_metadata(path).ok().as_ref())
}

fn disk_stamp_of(meta: Option<&std::fs::Metadata>) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    Stamp::Disk(meta.map(|m| (m.len(), m.modified().ok(), m.ino())))
}

/// A file read by its path, as a listed file is when its directory could not be held open.
fn read_measured(
    path: &Path,
    limit: u64,
    bytes: &mut Vec<u8>,
) -> Result<std::fs::Metadata, crate::workspace_file::Refusal> {
    crate::workspace_file::read_regular_into_measured(path, limit, bytes)
}

/// Opens a directory the walk is about to list, without following a link, to open its files by
/// name in it.
fn open_directory(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    #[cfg(target_os = "linux")]
    const HOLD: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    #[cfg(not(target_os = "linux"))]
    const HOLD: libc::c_int = libc::O_DIRECTORY | libc::O_NOFOLLOW;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(HOLD)
        .open(path)
        .map(OwnedFd::from)
}

fn shorten(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    // A line of no more bytes than the cap has no more characters either.
    if line.len() <= MAX_LINE_CHARS {
        return text.into_owned();
    }
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}… [line shortened]", &text[..cut]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::DiskOnly;

    /// A search of all of `root` (also its workspace) for `pattern`, with no file cap, no
    /// deadline and no page to resume; a test changes what it varies.
    fn whole_tree<'a>(
        root: &'a Path,
        pattern: &'a Pattern,
        offset: usize,
        max_matches: usize,
    ) -> Request<'a> {
        Request {
            root,
            workspace: root,
            pattern,
            include: None,
            offset,
            limits: Limits {
                max_matches,
                max_files: u64::MAX,
                deadline: None,
                max_file_bytes: 1 << 20,
            },
            resume: None,
        }
    }

    // Verifies: SEARCH-18, LIST-5
    #[test]
    fn files_read_in_parallel_give_the_outcome_of_reading_them_in_walk_order() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // 300 files over two levels, more than a few chunks; one match each, two in every
        // tenth, and every seventh holding none.
        for i in 0..300 {
            let dir = if i < 150 {
                tmp.path().to_path_buf()
            } else {
                tmp.path().join("sub")
            };
            std::fs::create_dir_all(&dir).expect("mkdir");
            let text = match i {
                i if i % 7 == 0 => "nothing here\n".to_owned(),
                i if i % 10 == 0 => format!("hit {i}\nno\nhit again {i}\n"),
                i => format!("no\nhit {i}\n"),
            };
            std::fs::write(dir.join(format!("f{i:03}.txt")), text).expect("write");
        }
        let pattern = Pattern::compile(&["hit"], true).expect("compiles");
        let search = |offset: usize, max_matches: usize, max_files: u64| {
            let mut request = whole_tree(tmp.path(), &pattern, offset, max_matches);
            request.limits.max_files = max_files;
            search_tree(&request, &DiskOnly, &|| false)
        };
        // The order one by one: root files, then sub's; each file's lines in order.
        let mut expected: Vec<(String, usize)> = Vec::new();
        for i in 0..300 {
            let name = if i < 150 {
                format!("f{i:03}.txt")
            } else {
                format!("sub/f{i:03}.txt")
            };
            match i {
                i if i % 7 == 0 => {}
                i if i % 10 == 0 => expected.extend([(name.clone(), 1), (name, 3)]),
                _ => expected.push((name, 2)),
            }
        }
        let shown = |out: &Outcome| -> Vec<(String, usize)> {
            out.matches
                .iter()
                .map(|m| {
                    let rel = m.path.strip_prefix(tmp.path()).expect("inside");
                    (rel.to_string_lossy().into_owned(), m.line)
                })
                .collect()
        };
        for _ in 0..5 {
            let all = search(0, usize::MAX, u64::MAX);
            assert_eq!(shown(&all), expected);
            assert_eq!(
                (all.stop, all.files_met, all.files_read.len()),
                (None, 300, 300)
            );
            // A page in the middle stops at the file holding the first match left behind, and
            // nothing after it is counted as met or read.
            let page = search(100, 40, u64::MAX);
            assert_eq!(shown(&page), expected[100..140]);
            assert_eq!(page.stop, Some(Stop::MatchCap { next_offset: 140 }));
            let (stop_file, _) = &expected[140];
            let last_read = page.files_read.last().expect("files read");
            assert!(last_read.ends_with(stop_file), "{last_read:?} {stop_file}");
            assert_eq!(page.files_met as usize, page.files_read.len());
            // The file cap stops the walk, and every file met before it is still read.
            let capped = search(0, usize::MAX, 95);
            assert_eq!(capped.stop, Some(Stop::FileCap));
            assert_eq!((capped.files_met, capped.files_read.len()), (95, 95));
            let within: Vec<_> = expected
                .iter()
                .filter(|(name, _)| {
                    !name.starts_with("sub/") && name[1..4].parse::<usize>().expect("number") < 95
                })
                .cloned()
                .collect();
            assert_eq!(shown(&capped), within);
        }
    }

    // Verifies: SEARCH-43
    #[test]
    fn files_read_ahead_hold_no_more_than_the_budget_and_every_match_comes_in_walk_order() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("real");
        // 90 files with matches throughout: most of 3 KiB, and every fifth of 40 KiB, larger
        // than the whole budget, so that it can be handed back only as the next file taken.
        const BUDGET: u64 = 16 << 10;
        let mut expected: Vec<(String, usize)> = Vec::new();
        for i in 0..90 {
            let name = format!("f{i:02}.txt");
            let lines = if i % 5 == 2 { 800 } else { 60 };
            let mut text = String::new();
            for j in 0..lines {
                if j % 3 == 0 {
                    text.push_str(&format!(
                        "hit {i} {j} ........................................\n"
                    ));
                    expected.push((name.clone(), j + 1));
                } else {
                    text.push_str("filler ................................................\n");
                }
            }
            assert!(
                (text.len() as u64 > BUDGET) == (i % 5 == 2),
                "{i}: {}",
                text.len()
            );
            std::fs::write(root.join(&name), text).expect("write");
        }
        let pattern = Pattern::compile(&["hit"], true).expect("compiles");
        let search = |offset: usize, max_matches: usize, ahead_bytes: u64| {
            let request = whole_tree(&root, &pattern, offset, max_matches);
            let reading = Reading {
                readers: 3,
                ahead_bytes,
            };
            search_reading(&request, &DiskOnly, &|| false, &Keep::nothing(), reading)
        };
        let shown = |out: &Outcome| -> Vec<(String, usize)> {
            out.matches
                .iter()
                .map(|m| {
                    let name = m.path.file_name().expect("a name");
                    (name.to_string_lossy().into_owned(), m.line)
                })
                .collect()
        };
        let total = expected.len();
        for _ in 0..5 {
            let all = search(0, usize::MAX, BUDGET);
            assert_eq!(shown(&all), expected);
            assert_eq!(
                (all.counted, all.stop, all.files_read.len()),
                (total, None, 90)
            );
            assert!(all.most_held_ahead <= BUDGET, "{}", all.most_held_ahead);
            let page = search(1000, 300, BUDGET);
            assert_eq!(shown(&page), expected[1000..1300]);
            assert_eq!(page.stop, Some(Stop::MatchCap { next_offset: 1300 }));
            assert!(page.most_held_ahead <= BUDGET, "{}", page.most_held_ahead);
            let past = search(usize::MAX, 200, BUDGET);
            assert_eq!((past.counted, past.matches.len()), (total, 0));
            assert!(past.most_held_ahead <= BUDGET, "{}", past.most_held_ahead);
        }
        // Without the budget, a large file is held while files before it are still to be taken:
        // the measure is the one the budget restrains. (A reading goes back with its job's
        // others, so a large file that is not the first of its job is never the next taken.)
        let unbounded = search(0, usize::MAX, u64::MAX);
        assert_eq!(shown(&unbounded), expected);
        assert!(
            unbounded.most_held_ahead > BUDGET,
            "{}",
            unbounded.most_held_ahead
        );
    }

    /// Open buffers whose version a test can move.
    struct Buffers(std::sync::Mutex<Vec<(PathBuf, String, i32)>>);

    impl Files for Buffers {
        fn buffer(&self, path: &Path) -> Option<(std::sync::Arc<str>, i32)> {
            let buffers = self.0.lock().expect("lock");
            buffers
                .iter()
                .find(|(p, _, _)| p == path)
                .map(|(_, text, version)| (text.as_str().into(), *version))
        }

        fn apply_edit<'a>(
            &'a self,
            _path: &'a Path,
            _version: i32,
            _original: &'a str,
            _edits: &'a [crate::kernel::proposal::LineEdit],
        ) -> crate::screen::BoxFuture<'a, Result<(), String>> {
            Box::pin(async { Err("not in this test".to_string()) })
        }
    }

    // Verifies: SEARCH-42
    #[test]
    fn matches_passed_over_are_counted_exactly_and_a_page_holds_the_lines_as_written() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("real");
        // 120 files over two levels with 0 to 9 matches each, every line's text its own; some
        // lines end in \r\n, some files lack a final line break, and one is an open buffer.
        let mut expected: Vec<(PathBuf, usize, String)> = Vec::new();
        let mut disk = Vec::new();
        for level in 0..2 {
            for i in 0..60 {
                let dir = if level == 0 {
                    root.clone()
                } else {
                    root.join("deep")
                };
                std::fs::create_dir_all(&dir).expect("mkdir");
                let path = dir.join(format!("f{i:02}.txt"));
                let mut text = String::new();
                for j in 0..(i * 7 + level) % 10 {
                    text.push_str(&format!("no {j}\n"));
                    let line = format!("hit {level} {i} {j} é{}", "x".repeat(j));
                    let number = text.lines().count() + 1;
                    text.push_str(&line);
                    text.push_str(if j % 3 == 0 { "\r\n" } else { "\n" });
                    let shown = if j % 3 == 0 {
                        format!("{line}\r")
                    } else {
                        line
                    };
                    expected.push((path.clone(), number, shown));
                }
                if i % 4 == 0 {
                    text.push_str("last hit without a break");
                    expected.push((
                        path.clone(),
                        text.lines().count(),
                        "last hit without a break".to_string(),
                    ));
                }
                disk.push((path, text));
            }
        }
        // The open buffer's text is searched rather than the disk's.
        let (open_path, open_text) = disk[5].clone();
        for (path, text) in &disk {
            let written = if *path == open_path {
                "nothing\n"
            } else {
                text
            };
            std::fs::write(path, written).expect("write");
        }
        let files = Buffers(std::sync::Mutex::new(vec![(open_path, open_text, 1)]));
        let pattern = Pattern::compile(&["hit"], true).expect("compiles");
        let total = expected.len();
        assert!(total > 300, "{total}");
        let search = |offset: usize, max_matches: usize| {
            let request = whole_tree(&root, &pattern, offset, max_matches);
            search_tree(&request, &files, &|| false)
        };
        let lines = |out: &Outcome| -> Vec<(PathBuf, usize, String)> {
            out.matches
                .iter()
                .map(|m| (m.path.clone(), m.line, m.text.clone()))
                .collect()
        };
        for _ in 0..3 {
            // Every match, each as written.
            let all = search(0, usize::MAX);
            assert_eq!(lines(&all), expected);
            assert_eq!((all.counted, all.stop), (total, None));
            // Pages from offsets before, inside and at the end of files, each the slice of the
            // whole, and stopping where the next page starts.
            for offset in [0, 1, 7, 99, 150, total - 30, total - 25] {
                let page = search(offset, 25);
                assert_eq!(lines(&page), expected[offset..(offset + 25).min(total)]);
                if offset + 25 < total {
                    let next = offset + 25;
                    assert_eq!(page.stop, Some(Stop::MatchCap { next_offset: next }));
                    assert_eq!(page.counted, next);
                } else {
                    assert_eq!((page.stop, page.counted), (None, total));
                }
            }
            // A page past the last match shows nothing and has counted every match.
            for offset in [total, total + 1, usize::MAX] {
                let past = search(offset, 25);
                assert!(past.matches.is_empty());
                assert_eq!((past.counted, past.stop), (total, None));
                assert_eq!(past.files_read.len(), 120);
                assert_eq!(past.files_matched, all.files_matched);
            }
        }
    }

    // Verifies: SEARCH-30, SEARCH-42
    #[test]
    fn a_page_resumed_where_the_one_before_stopped_is_the_page_a_rescan_gives() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("real");
        for i in 0..40 {
            let dir = if i < 20 {
                root.clone()
            } else {
                root.join("sub")
            };
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(format!("f{i:02}.txt")), "hit\nno\nhit\n").expect("write");
        }
        let open = root.join("f03.txt");
        let files = Buffers(std::sync::Mutex::new(vec![(
            open.clone(),
            "hit\nhit\nhit\n".to_string(),
            1,
        )]));
        let pattern = Pattern::compile(&["hit"], true).expect("compiles");
        let search = |offset: usize, resume: Option<&Resume>| {
            let mut request = whole_tree(&root, &pattern, offset, 25);
            request.resume = resume;
            search_tree(&request, &files, &|| false)
        };
        let first = search(0, None);
        assert_eq!(first.stop, Some(Stop::MatchCap { next_offset: 25 }));
        let mark = first
            .resume
            .clone()
            .expect("a capped page leaves its place");
        // Two matches a file, three in f03's open buffer: match 25 is the first of f12.
        let resumed = search(25, Some(&mark));
        let rescanned = search(25, None);
        assert!(resumed.resumed && !rescanned.resumed);
        assert_eq!(resumed.matches, rescanned.matches);
        assert_eq!(resumed.stop, rescanned.stop);
        assert_eq!(resumed.resume, rescanned.resume);
        assert_eq!(resumed.counted, rescanned.counted);
        assert_eq!(resumed.files_met, rescanned.files_met);
        assert!(
            resumed.files_read[0].ends_with("f12.txt"),
            "{:?}",
            resumed.files_read
        );
        assert_eq!(resumed.files_read[..], rescanned.files_read[12..]);
        // The next page resumes from the resumed one's place as well.
        let next = resumed.resume.clone().expect("capped again");
        let third = search(next.next_offset, Some(&next));
        assert!(third.resumed);
        assert_eq!(third.matches, search(next.next_offset, None).matches);
        // An open buffer before the place that moved to a new version: read from the start.
        files.0.lock().expect("lock")[0] = (open.clone(), "hit\n".to_string(), 2);
        let moved = search(25, Some(&mark));
        assert!(!moved.resumed);
        assert_eq!(moved.matches, search(25, None).matches);
        assert_eq!(moved.files_read.len(), search(25, None).files_read.len());
        files.0.lock().expect("lock")[0] = (open, "hit\nhit\nhit\n".to_string(), 1);
        assert!(search(25, Some(&mark)).resumed);
        // A file before the place removed, or the file at the place itself: from the start.
        std::fs::remove_file(root.join("f12.txt")).expect("remove");
        let gone = search(25, Some(&mark));
        assert!(!gone.resumed);
        assert_eq!(gone.matches, search(25, None).matches);
        std::fs::remove_file(root.join("f00.txt")).expect("remove");
        let shifted = search(25, Some(&mark));
        assert!(!shifted.resumed);
        assert_eq!(shifted.matches, search(25, None).matches);
    }

    // Verifies: SEARCH-18
    #[test]
    fn a_match_cap_reached_while_the_walk_ran_ahead_reports_nothing_the_walk_passed_after_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        // The first file holds the match that fills the page; after it, in walk order, come
        // many files, and among them denied files, links and skipped directories, which a walk
        // running ahead of its readers meets before the first reading is taken.
        std::fs::write(root.join("a000.txt"), "hit\nhit\n").expect("write");
        for i in 1..400 {
            let name = format!("a{i:03}.txt");
            std::fs::write(root.join(&name), "hit\n").expect("write");
            if i % 50 == 0 {
                std::os::unix::fs::symlink(root.join(&name), root.join(format!("a{i:03}.link")))
                    .expect("link");
                std::fs::write(root.join(format!("a{i:03}.secret")), "hit\n").expect("write");
            }
        }
        std::fs::create_dir_all(root.join("node_modules")).expect("mkdir");
        std::fs::create_dir_all(root.join("zz/target")).expect("mkdir");
        let pattern = Pattern::compile(&["hit"], true).expect("compiles");
        let denied = |p: &Path| p.extension().is_some_and(|e| e == "secret");
        let keep = Keep {
            denied: &denied,
            ..Keep::nothing()
        };
        let search = |readers: usize, max_matches: usize| {
            let request = whole_tree(root, &pattern, 0, max_matches);
            let reading = Reading {
                readers,
                ahead_bytes: AHEAD_BYTES,
            };
            search_reading(&request, &DiskOnly, &|| false, &keep, reading)
        };
        let account = |out: &Outcome| {
            (
                out.matches.len(),
                out.stop,
                out.files_met,
                out.files_selected,
                out.denied.clone(),
                out.links,
                out.skipped.clone(),
                out.unreadable,
            )
        };
        for max_matches in [1, 2, 3, 120] {
            let alone = account(&search(1, max_matches));
            for _ in 0..5 {
                assert_eq!(account(&search(2, max_matches)), alone, "{max_matches}");
                assert_eq!(account(&search(3, max_matches)), alone, "{max_matches}");
            }
        }
        // The whole tree, for contrast: everything passed over is reported.
        let all = search(2, usize::MAX);
        assert_eq!(
            (all.denied.len(), all.links, all.skipped.clone()),
            (7, 7, vec!["node_modules", "target"])
        );
        let capped = search(2, 1);
        assert_eq!(
            (capped.denied.len(), capped.links, capped.skipped.len()),
            (0, 0, 0)
        );
    }
}
