//! `search`: the lines a regular expression matches in the files at a revision, printed as
//! `git grep -n` prints them (`<revision>:<path>:<line>:<text>`), files in tree order.

pub use regex::bytes::Regex;

use super::diff::MAX_BLOB_BYTES;
use super::log::Cut;
use super::text::quote_path;
use std::collections::HashMap;

use super::{Budget, Error, ObjectId, Repository};

/// What a search is asked for.
pub struct GrepQuery<'a> {
    /// The revision as written, which prefixes every line.
    pub revision: &'a str,
    pub pattern: &'a Regex,
    /// Only files under this path.
    pub path: &'a [u8],
    pub count: usize,
    pub skip: usize,
}

/// One file's matching lines.
#[derive(Debug)]
pub struct FileMatches {
    pub path: Vec<u8>,
    pub lines: Vec<String>,
}

/// What a search found.
#[derive(Debug, Default)]
pub struct Found {
    pub files: Vec<FileMatches>,
    /// Every file whose bytes were read, matched or not.
    pub read: Vec<Vec<u8>>,
    /// Files past the size bound, not searched.
    pub too_large: usize,
    pub next_skip: Option<usize>,
    pub cut: Option<Cut>,
    /// Files and directories left out unread because `denied` named them, in tree order.
    pub denied: Vec<Vec<u8>>,
}

/// Searches the files at a revision.
pub fn grep(repo: &Repository, query: &GrepQuery<'_>, budget: &mut Budget) -> Result<Found, Error> {
    grep_skipping(repo, query, &|_| false, budget)
}

/// As [`grep`], passing over unread every file and directory whose repository-relative path
/// `denied` names (the person's deny rules), and listing them in [`Found::denied`].
pub fn grep_skipping(
    repo: &Repository,
    query: &GrepQuery<'_>,
    denied: &dyn Fn(&[u8]) -> bool,
    budget: &mut Budget,
) -> Result<Found, Error> {
    let commit = repo.resolve_commit(query.revision)?;
    let tree = repo.commit(commit)?.tree;
    let mut found = Found::default();
    let mut state = State {
        passed: 0,
        listed: 0,
        whole: whole_file(query.pattern),
        denied,
    };
    let prefix = query.path.strip_suffix(b"/").unwrap_or(query.path);
    match repo.entry_at(tree, prefix)? {
        None => {
            return Err(Error::Revision(format!(
                "`{}` does not exist at `{}`",
                quote_path(prefix),
                query.revision
            )));
        }
        Some(e) if e.is_tree() => {
            search_tree(repo, query, e.id, prefix, &mut found, &mut state, budget)?;
        }
        Some(e) if e.is_submodule() => {}
        Some(e) => search_file(repo, query, e.id, prefix, &mut found, &mut state, budget)?,
    }
    Ok(found)
}

struct State<'d> {
    passed: usize,
    listed: usize,
    /// The pattern read over a whole file, to pass over a file with no match in one search.
    whole: Option<Regex>,
    /// Paths left out unread.
    denied: &'d dyn Fn(&[u8]) -> bool,
}

/// The pattern in multi-line mode, which matches somewhere in a file whenever it matches one of
/// its lines (`^` and `$` then match at each line's ends). A pattern that names the ends of the
/// text (`\A`, `\z`) or sets its own flags has none, and every line is tried.
fn whole_file(pattern: &Regex) -> Option<Regex> {
    let text = pattern.as_str();
    if text.contains("\\A") || text.contains("\\z") || text.contains("(?") {
        return None;
    }
    Regex::new(&format!("(?m:{text})")).ok()
}

/// One directory of the search: its entries and the next to look at.
struct Directory {
    entries: Vec<super::Entry>,
    next: usize,
    prefix: Vec<u8>,
}

/// Searches a tree's files in tree order: a loop over a stack of directories, each subtree
/// searched where it first appears (met again under another path, it is named in the budget and
/// passed over), within the budget's depth, entries and deadline.
fn search_tree(
    repo: &Repository,
    query: &GrepQuery<'_>,
    tree: ObjectId,
    prefix: &[u8],
    found: &mut Found,
    state: &mut State<'_>,
    budget: &mut Budget,
) -> Result<(), Error> {
    let mut searched: HashMap<ObjectId, Vec<u8>> = HashMap::new();
    searched.insert(tree, prefix.to_vec());
    let mut stack = Vec::new();
    if let Some(entries) = budget.tree(repo, tree)? {
        stack.push(Directory {
            entries,
            next: 0,
            prefix: prefix.to_vec(),
        });
    }
    while let Some(top) = stack.last_mut() {
        if found.cut.is_some() || budget.stopped() {
            break;
        }
        let Some(entry) = top.entries.get(top.next).cloned() else {
            stack.pop();
            continue;
        };
        top.next += 1;
        let path = if top.prefix.is_empty() {
            entry.name.clone()
        } else {
            [top.prefix.as_slice(), b"/", &entry.name].concat()
        };
        if (state.denied)(&path) {
            found.denied.push(path);
        } else if entry.is_tree() {
            if let Some(first) = searched.get(&entry.id) {
                budget.repeat(&path, first);
                continue;
            }
            if !budget.may_enter(stack.len() + 1) {
                continue;
            }
            searched.insert(entry.id, path.clone());
            match budget.tree(repo, entry.id)? {
                Some(entries) => stack.push(Directory {
                    entries,
                    next: 0,
                    prefix: path,
                }),
                None => break,
            }
        } else if !entry.is_submodule() {
            search_file(repo, query, entry.id, &path, found, state, budget)?;
        }
    }
    Ok(())
}

fn search_file(
    repo: &Repository,
    query: &GrepQuery<'_>,
    id: ObjectId,
    path: &[u8],
    found: &mut Found,
    state: &mut State<'_>,
    budget: &mut Budget,
) -> Result<(), Error> {
    if budget.stopped() {
        return Ok(());
    }
    if repo.size(id)? > MAX_BLOB_BYTES {
        found.too_large += 1;
        return Ok(());
    }
    let bytes = repo.blob(id)?;
    found.read.push(path.to_vec());
    let name = format!("{}:{}", query.revision, quote_path(path));
    let binary = bytes[..bytes.len().min(8000)].contains(&0);
    let mut lines = Vec::new();
    if binary {
        if query.pattern.is_match(&bytes) {
            lines.push(format!("Binary file {name} matches"));
        }
    } else {
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let none = state.whole.as_ref().is_some_and(|w| !w.is_match(body));
        for (n, line) in
            body.split(|b| *b == b'\n')
                .enumerate()
                .take(if none { 0 } else { usize::MAX })
        {
            if query.pattern.is_match(line) {
                lines.push(format!(
                    "{name}:{}:{}",
                    n + 1,
                    String::from_utf8_lossy(line)
                ));
            }
        }
    }
    let mut kept = Vec::new();
    for line in lines {
        if state.passed < query.skip {
            state.passed += 1;
            continue;
        }
        if state.listed == query.count {
            found.cut = Some(Cut::Count);
            found.next_skip = Some(query.skip + state.listed);
            break;
        }
        state.listed += 1;
        kept.push(line);
    }
    if !kept.is_empty() {
        found.files.push(FileMatches {
            path: path.to_vec(),
            lines: kept,
        });
    }
    Ok(())
}
