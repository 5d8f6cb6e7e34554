//! `log`: commits newest first, one line each, walked as git walks them.
//!
//! The walk takes commits in committer-date order, newest first, and among equal dates in the
//! order they were reached, as git's date-ordered list does. A range `A..B` leaves out every
//! commit `A` reaches. Narrowed to a path, a commit whose tree holds the same object at that path
//! as one of its parents is not listed, and at a merge only that parent is followed: git's default
//! history simplification.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use super::text::{body, short_date, subject};
use super::{Budget, Commit, Deadline, Error, Header, MAX_LINES, ObjectId, Repository};

/// What a log is asked for.
#[derive(Clone, Debug)]
pub struct LogQuery {
    /// One revision, or a range `A..B`; `None` is `HEAD`.
    pub revision: Option<String>,
    /// Only commits that changed this path (components separated by `/`).
    pub path: Option<Vec<u8>>,
    pub count: usize,
    pub skip: usize,
    pub messages: bool,
    /// Authored at or after this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Authored at or before this time.
    pub until: Option<i64>,
    pub deadline: Deadline,
}

impl Default for LogQuery {
    fn default() -> Self {
        LogQuery {
            revision: None,
            path: None,
            count: 20,
            skip: 0,
            messages: false,
            since: None,
            until: None,
            deadline: Deadline::default(),
        }
    }
}

/// Why a page stopped before the history did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// `count` commits were listed and more remain.
    Count,
    /// The page reached its line bound; it holds whole commits.
    Lines,
    /// The deadline passed.
    Deadline,
    /// A tree nested deeper than [`super::MAX_TREE_DEPTH`] was not entered.
    Depth,
    /// The walks read [`super::MAX_TREE_ENTRIES`] tree entries and stopped.
    Entries,
}

/// One page of a log.
#[derive(Debug)]
pub struct LogPage {
    pub lines: Vec<String>,
    /// Commits listed on this page.
    pub commits: usize,
    /// The `skip` that lists the next page, when the page was cut with commits left.
    pub next_skip: Option<usize>,
    pub cut: Option<Cut>,
}

/// A revision read as a range: the tips to walk from and the tips whose history is left out.
pub struct Range {
    pub include: ObjectId,
    pub exclude: Option<ObjectId>,
}

/// Reads `A..B` (either side may be empty, meaning `HEAD`) or a single revision.
pub fn range(repo: &Repository, revision: Option<&str>) -> Result<Range, Error> {
    let revision = revision.unwrap_or("HEAD");
    match revision.split_once("..") {
        Some((a, b)) => {
            let side = |s: &str| {
                if s.is_empty() {
                    "HEAD".to_string()
                } else {
                    s.to_string()
                }
            };
            Ok(Range {
                include: repo.resolve_commit(&side(b))?,
                exclude: Some(repo.resolve_commit(&side(a))?),
            })
        }
        None => Ok(Range {
            include: repo.resolve_commit(revision)?,
            exclude: None,
        }),
    }
}

/// Commits read during one walk, kept so a parent read for its tree is not read again. Only
/// what the walk needs is read of each ([`Header`]); a listed commit is read whole.
struct Commits<'r> {
    repo: &'r Repository,
    cache: HashMap<ObjectId, std::rc::Rc<Header>>,
    at_path: HashMap<(ObjectId, usize), Option<ObjectId>>,
}

impl Commits<'_> {
    fn get(&mut self, id: ObjectId) -> Result<std::rc::Rc<Header>, Error> {
        if let Some(c) = self.cache.get(&id) {
            return Ok(c.clone());
        }
        let c = std::rc::Rc::new(self.repo.header(id)?);
        self.cache.insert(id, c.clone());
        Ok(c)
    }

    /// The object at `path` in a tree. What each tree holds at the rest of the path is
    /// remembered by the tree's id and depth, so a directory that did not change between two
    /// commits is not read again for the second. A loop, one tree a component.
    fn at(&mut self, tree: ObjectId, path: &[u8]) -> Result<Option<ObjectId>, Error> {
        let parts: Vec<&[u8]> = path
            .split(|b| *b == b'/')
            .filter(|p| !p.is_empty())
            .collect();
        let mut passed = Vec::new();
        let mut current = tree;
        let mut found = Some(tree);
        for (depth, part) in parts.iter().enumerate() {
            if let Some(known) = self.at_path.get(&(current, depth)) {
                found = *known;
                break;
            }
            passed.push((current, depth));
            found = match self.repo.child(current, part)? {
                Some(e) if depth + 1 == parts.len() => Some(e.id),
                Some(e) if e.is_tree() => {
                    current = e.id;
                    continue;
                }
                _ => None,
            };
            break;
        }
        for key in passed {
            self.at_path.insert(key, found);
        }
        Ok(found)
    }
}

/// The commits a range's left side reaches, found as the walk needs them: newest first, and only
/// as far back as the commit being decided. With commit times that never grow from child to
/// parent (as git writes them), a commit of time `t` that the left side reaches is reached
/// through commits no older than `t`, so once every hidden commit of time `t` or later has
/// been walked it is known.
struct Hidden {
    heap: BinaryHeap<(i64, Reverse<u64>, ObjectId)>,
    seen: HashSet<ObjectId>,
    seq: u64,
}

impl Hidden {
    fn new(commits: &mut Commits<'_>, tip: Option<ObjectId>) -> Result<Hidden, Error> {
        let mut hidden = Hidden {
            heap: BinaryHeap::new(),
            seen: HashSet::new(),
            seq: 0,
        };
        if let Some(tip) = tip {
            let time = commits.get(tip)?.committed;
            hidden.seen.insert(tip);
            hidden.heap.push((time, Reverse(0), tip));
        }
        Ok(hidden)
    }

    /// Whether the left side reaches `id`, committed at `time`.
    fn hides(&mut self, commits: &mut Commits<'_>, id: ObjectId, time: i64) -> Result<bool, Error> {
        while let Some(&(t, _, next)) = self.heap.peek() {
            if t < time {
                break;
            }
            self.heap.pop();
            for parent in commits.get(next)?.parents.clone() {
                if self.seen.insert(parent) {
                    self.seq += 1;
                    let pt = commits.get(parent)?.committed;
                    self.heap.push((pt, Reverse(self.seq), parent));
                }
            }
        }
        Ok(self.seen.contains(&id))
    }
}

/// Every commit `tip` reaches, itself included; `None` where the budget's deadline passed first.
pub fn ancestors(
    repo: &Repository,
    tip: ObjectId,
    budget: &mut Budget,
) -> Result<Option<HashSet<ObjectId>>, Error> {
    let mut seen = HashSet::new();
    let mut stack = vec![tip];
    while let Some(id) = stack.pop() {
        if budget.stopped() {
            return Ok(None);
        }
        if !seen.insert(id) {
            continue;
        }
        stack.extend(repo.parents(id)?);
    }
    Ok(Some(seen))
}

/// Lists one page of commits.
pub fn log(repo: &Repository, query: &LogQuery) -> Result<LogPage, Error> {
    let range = range(repo, query.revision.as_deref())?;
    let mut commits = Commits {
        repo,
        cache: HashMap::new(),
        at_path: HashMap::new(),
    };
    let mut hidden = Hidden::new(&mut commits, range.exclude)?;
    let mut heap: BinaryHeap<(i64, Reverse<u64>, ObjectId)> = BinaryHeap::new();
    let mut queued: HashSet<ObjectId> = HashSet::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, time: i64, id: ObjectId| {
        seq += 1;
        heap.push((time, Reverse(seq), id));
    };
    let tip = commits.get(range.include)?;
    queued.insert(range.include);
    push(&mut heap, tip.committed, range.include);
    let mut page = LogPage {
        lines: Vec::new(),
        commits: 0,
        next_skip: None,
        cut: None,
    };
    let mut passed = 0usize;
    while let Some((time, _, id)) = heap.pop() {
        if query.deadline.passed() {
            page.cut = Some(Cut::Deadline);
            break;
        }
        if hidden.hides(&mut commits, id, time)? {
            continue;
        }
        let commit = commits.get(id)?;
        let (shown, follow) = match &query.path {
            None => (true, commit.parents.clone()),
            Some(path) => {
                let here = commits.at(commit.tree, path)?;
                let mut same = None;
                for parent in &commit.parents {
                    let parent_tree = commits.get(*parent)?.tree;
                    if commits.at(parent_tree, path)? == here {
                        same = Some(*parent);
                        break;
                    }
                }
                match same {
                    Some(parent) => (false, vec![parent]),
                    None if commit.parents.is_empty() => (here.is_some(), Vec::new()),
                    None => (true, commit.parents.clone()),
                }
            }
        };
        for parent in follow {
            if !queued.insert(parent) {
                continue;
            }
            let time = commits.get(parent)?.committed;
            push(&mut heap, time, parent);
        }
        if !shown {
            continue;
        }
        let days = query.since.is_some() || query.until.is_some();
        let whole = if days || passed >= query.skip {
            Some(repo.commit(id)?)
        } else {
            None
        };
        if let Some(whole) = whole.as_ref().filter(|_| days) {
            let authored = whole.author.time.seconds;
            let in_days = query.since.is_none_or(|s| authored >= s)
                && query.until.is_none_or(|u| authored <= u);
            if !in_days {
                continue;
            }
        }
        if passed < query.skip {
            passed += 1;
            continue;
        }
        if page.commits == query.count {
            page.cut = Some(Cut::Count);
            page.next_skip = Some(query.skip + page.commits);
            break;
        }
        let commit = match whole {
            Some(c) => c,
            None => repo.commit(id)?,
        };
        let mut lines = vec![line(&commit)];
        if query.messages {
            lines.extend(
                body(&commit.message)
                    .into_iter()
                    .map(|l| if l.is_empty() { l } else { format!("    {l}") }),
            );
        }
        if page.commits > 0 && page.lines.len() + lines.len() > MAX_LINES {
            page.cut = Some(Cut::Lines);
            page.next_skip = Some(query.skip + page.commits);
            break;
        }
        page.lines.extend(lines);
        page.commits += 1;
    }
    Ok(page)
}

/// A commit's line: ten characters of its id, the day it was authored, its author, its subject.
pub fn line(commit: &Commit) -> String {
    let hex = commit.id.to_hex().to_string();
    format!(
        "{} {} {} {}",
        &hex[..10.min(hex.len())],
        short_date(&commit.author),
        String::from_utf8_lossy(&commit.author.name),
        subject(&commit.message)
    )
}
