//! `show` and `diff`: a commit with its message and diff, a tag, a file or directory at a
//! revision, and the difference between two commits, printed as git prints them.
//!
//! The tree diff walks both trees in git's order, so changes come out in the order git lists
//! them. A file moved without a change in its bytes is shown as a rename, as git's exact rename
//! detection pairs it; a file moved and edited is a deletion and an addition. The line diff is
//! Myers' algorithm with three lines of context, hunks closer than seven lines joined, and the hunk
//! header naming the nearest line above that starts with a letter, `_` or `$`, as git's default
//! function-name rule does.

use similar::{Algorithm, DiffOp};

use super::log::range;
use super::text::{default_date, ident, indented_message, quote_path};
use std::collections::HashMap;

use super::log::Cut;
use super::{Budget, Entry, Error, MAX_TAG_CHAIN, ObjectId, Repository};

/// Bytes git looks at to decide a file is binary: a NUL in them makes it so.
const BINARY_PROBE: usize = 8000;
/// Lines of context around a change.
const CONTEXT: usize = 3;
/// Blobs larger than this are described by their size rather than printed or diffed.
pub const MAX_BLOB_BYTES: u64 = 1 << 20;

/// Part of an answer, with the paths whose bytes it shows (empty for what comes from `.git`
/// alone: ids, names, dates, messages).
#[derive(Clone, Debug, Default)]
pub struct Section {
    pub paths: Vec<Vec<u8>>,
    pub lines: Vec<String>,
}

/// One changed path between two trees.
#[derive(Clone, Debug)]
pub struct Change {
    pub old_path: Vec<u8>,
    pub new_path: Vec<u8>,
    pub old: Option<(u32, ObjectId)>,
    pub new: Option<(u32, ObjectId)>,
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    if prefix.is_empty() {
        name.to_vec()
    } else {
        let mut p = prefix.to_vec();
        p.push(b'/');
        p.extend_from_slice(name);
        p
    }
}

/// Git's tree order: a tree sorts as though its name ended with `/`.
fn sort_key(e: &Entry) -> Vec<u8> {
    let mut k = e.name.clone();
    if e.is_tree() {
        k.push(b'/');
    }
    k
}

/// Whether `path` lies under `filter` (component-wise), or `filter` under `path` (a tree that
/// must be entered to reach it).
fn within(path: &[u8], filter: &[u8]) -> bool {
    let under = |a: &[u8], b: &[u8]| a == b || (a.starts_with(b) && a.get(b.len()) == Some(&b'/'));
    filter.is_empty() || under(path, filter)
}

fn leads_to(path: &[u8], filter: &[u8]) -> bool {
    filter.is_empty()
        || within(path, filter)
        || (filter.starts_with(path) && filter.get(path.len()) == Some(&b'/'))
}

/// The changes between two trees (`None` is the empty tree), limited to `filter`, walked within
/// `budget`.
pub fn tree_changes(
    repo: &Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    filter: &[u8],
    budget: &mut Budget,
) -> Result<Vec<Change>, Error> {
    let mut out = Vec::new();
    walk(repo, old, new, filter, budget, &mut out)?;
    Ok(detect_renames(out))
}

/// Two trees' entries being compared, at one directory of the walk.
struct Pair {
    old: Vec<Entry>,
    new: Vec<Entry>,
    i: usize,
    j: usize,
    prefix: Vec<u8>,
}

impl Pair {
    /// The next name in git's order: the entry of either side, or both where they share it.
    fn next(&mut self) -> Option<(Option<Entry>, Option<Entry>)> {
        let order = match (self.old.get(self.i), self.new.get(self.j)) {
            (None, None) => return None,
            (Some(a), Some(b)) => sort_key(a).cmp(&sort_key(b)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
        };
        let take = |v: &[Entry], k: &mut usize| {
            *k += 1;
            v.get(*k - 1).cloned()
        };
        Some(match order {
            std::cmp::Ordering::Less => (take(&self.old, &mut self.i), None),
            std::cmp::Ordering::Greater => (None, take(&self.new, &mut self.j)),
            std::cmp::Ordering::Equal => {
                (take(&self.old, &mut self.i), take(&self.new, &mut self.j))
            }
        })
    }
}

/// Reads both sides of a pair of trees within the budget; `None` once the walk must stop.
fn open_pair(
    repo: &Repository,
    budget: &mut Budget,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    prefix: Vec<u8>,
) -> Result<Option<Pair>, Error> {
    let mut side = |id: Option<ObjectId>| -> Result<Option<Vec<Entry>>, Error> {
        match id {
            Some(t) => budget.tree(repo, t),
            None => Ok(Some(Vec::new())),
        }
    };
    let (Some(old), Some(new)) = (side(old)?, side(new)?) else {
        return Ok(None);
    };
    Ok(Some(Pair {
        old,
        new,
        i: 0,
        j: 0,
        prefix,
    }))
}

/// The tree diff: a loop over a stack of directories, each pair of subtrees entered where it
/// first appears (a pair met again under another path is named in the budget and passed over;
/// a subtree the same on both sides holds no change), within the budget's depth, entries and
/// deadline.
fn walk(
    repo: &Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    filter: &[u8],
    budget: &mut Budget,
    out: &mut Vec<Change>,
) -> Result<(), Error> {
    if old == new {
        return Ok(());
    }
    let mut walked: HashMap<(Option<ObjectId>, Option<ObjectId>), Vec<u8>> = HashMap::new();
    let mut stack: Vec<Pair> = Vec::new();
    stack.extend(open_pair(repo, budget, old, new, Vec::new())?);
    while let Some(top) = stack.last_mut() {
        let Some((a, b)) = top.next() else {
            stack.pop();
            continue;
        };
        let name = a
            .as_ref()
            .or(b.as_ref())
            .map(|e| e.name.as_slice())
            .unwrap_or_default();
        let path = join(&top.prefix, name);
        if !leads_to(&path, filter) {
            continue;
        }
        let is_tree = a.as_ref().or(b.as_ref()).is_some_and(Entry::is_tree);
        if is_tree {
            let ids = (a.map(|e| e.id), b.map(|e| e.id));
            if ids.0 == ids.1 {
                continue;
            }
            if let Some(first) = walked.get(&ids) {
                budget.repeat(&path, first);
                continue;
            }
            if !budget.may_enter(stack.len() + 1) {
                continue;
            }
            walked.insert(ids, path.clone());
            match open_pair(repo, budget, ids.0, ids.1, path)? {
                Some(pair) => stack.push(pair),
                None => break,
            }
            continue;
        }
        if !within(&path, filter) {
            continue;
        }
        if let (Some(a), Some(b)) = (&a, &b)
            && a.id == b.id
            && a.mode == b.mode
        {
            continue;
        }
        out.push(Change {
            old_path: path.clone(),
            new_path: path,
            old: a.map(|e| (e.mode, e.id)),
            new: b.map(|e| (e.mode, e.id)),
        });
    }
    Ok(())
}

/// Pairs each added file with a deleted one holding the same bytes and mode, as git's exact
/// rename detection does; the pair takes the added file's place and the deletion goes.
fn detect_renames(changes: Vec<Change>) -> Vec<Change> {
    let mut taken = vec![false; changes.len()];
    let mut paired: Vec<Option<usize>> = vec![None; changes.len()];
    for (j, added) in changes.iter().enumerate() {
        let (None, Some(new)) = (added.old, added.new) else {
            continue;
        };
        let found = changes.iter().enumerate().position(|(i, c)| {
            !taken[i] && c.new.is_none() && c.old == Some(new) && new.0 != 0o160000
        });
        if let Some(i) = found {
            taken[i] = true;
            paired[j] = Some(i);
        }
    }
    changes
        .iter()
        .enumerate()
        .filter(|(i, _)| !taken[*i])
        .map(|(j, c)| match paired[j] {
            Some(i) => Change {
                old_path: changes[i].old_path.clone(),
                new_path: c.new_path.clone(),
                old: changes[i].old,
                new: c.new,
            },
            None => c.clone(),
        })
        .collect()
}

/// The bytes one side of a change stands for: a blob, or for a submodule the line git prints.
fn side_bytes(repo: &Repository, side: Option<(u32, ObjectId)>) -> Result<Vec<u8>, Error> {
    match side {
        None => Ok(Vec::new()),
        Some((0o160000, id)) => Ok(format!("Subproject commit {}\n", id.to_hex()).into_bytes()),
        Some((_, id)) => repo.blob(id),
    }
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_PROBE)].contains(&0)
}

/// One file's diff, as `git diff` prints it.
pub fn file_diff(repo: &Repository, change: &Change) -> Result<Section, Error> {
    let a = quote_path(&[b"a/".as_slice(), &change.old_path].concat());
    let b = quote_path(&[b"b/".as_slice(), &change.new_path].concat());
    let mut lines = vec![format!("diff --git {a} {b}")];
    let zeros = "0".repeat(repo.abbrev_len());
    let short = |side: Option<(u32, ObjectId)>| match side {
        Some((_, id)) => repo.short(id),
        None => zeros.clone(),
    };
    let renamed = change.old_path != change.new_path;
    match (change.old, change.new) {
        (None, Some((mode, _))) => {
            lines.push(format!("new file mode {mode:06o}"));
            lines.push(format!("index {}..{}", short(None), short(change.new)));
        }
        (Some((mode, _)), None) => {
            lines.push(format!("deleted file mode {mode:06o}"));
            lines.push(format!("index {}..{}", short(change.old), short(None)));
        }
        (Some((om, oid)), Some((nm, nid))) => {
            if om != nm {
                lines.push(format!("old mode {om:06o}"));
                lines.push(format!("new mode {nm:06o}"));
            }
            if renamed {
                lines.push("similarity index 100%".into());
                lines.push(format!("rename from {}", quote_path(&change.old_path)));
                lines.push(format!("rename to {}", quote_path(&change.new_path)));
            }
            if oid != nid {
                if om == nm {
                    lines.push(format!(
                        "index {}..{} {om:06o}",
                        short(change.old),
                        short(change.new)
                    ));
                } else {
                    lines.push(format!(
                        "index {}..{}",
                        short(change.old),
                        short(change.new)
                    ));
                }
            }
        }
        (None, None) => {}
    }
    let mut paths = vec![change.old_path.clone()];
    if renamed {
        paths.push(change.new_path.clone());
    }
    if change.old.map(|s| s.1) == change.new.map(|s| s.1) {
        return Ok(Section { paths, lines });
    }
    let too_large = |side: Option<(u32, ObjectId)>| -> Result<bool, Error> {
        match side {
            Some((mode, id)) if mode != 0o160000 => Ok(repo.size(id)? > MAX_BLOB_BYTES),
            _ => Ok(false),
        }
    };
    let from = if change.old.is_some() {
        a.clone()
    } else {
        "/dev/null".into()
    };
    let to = if change.new.is_some() {
        b.clone()
    } else {
        "/dev/null".into()
    };
    if too_large(change.old)? || too_large(change.new)? {
        lines.push(format!("Binary files {from} and {to} differ"));
        return Ok(Section { paths, lines });
    }
    let old = side_bytes(repo, change.old)?;
    let new = side_bytes(repo, change.new)?;
    if is_binary(&old) || is_binary(&new) {
        lines.push(format!("Binary files {from} and {to} differ"));
        return Ok(Section { paths, lines });
    }
    let hunks = hunks(&old, &new);
    if hunks.is_empty() {
        return Ok(Section { paths, lines });
    }
    lines.push(format!("--- {from}"));
    lines.push(format!("+++ {to}"));
    lines.extend(hunks);
    Ok(Section { paths, lines })
}

fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            out.push(&bytes[start..=i]);
            start = i + 1;
        }
    }
    if start < bytes.len() {
        out.push(&bytes[start..]);
    }
    out
}

/// A run of changed lines: `old_len` lines at `old` replaced by `new_len` lines at `new`.
#[derive(Clone, Copy, Debug)]
struct Run {
    old: usize,
    old_len: usize,
    new: usize,
    new_len: usize,
}

/// The hunks of a unified diff with three lines of context, as `git diff` prints them.
pub fn hunks(old: &[u8], new: &[u8]) -> Vec<String> {
    let a = split_lines(old);
    let b = split_lines(new);
    let ops = similar::capture_diff_slices(Algorithm::Myers, &a, &b);
    // Positions are counted from the ops' lengths in their order: the indices `similar` reports
    // on a deletion's new side or an insertion's old side can name the far side of an equal run
    // that sits between them.
    let mut runs: Vec<Run> = Vec::new();
    let (mut oi, mut ni) = (0usize, 0usize);
    for op in ops {
        let (ol, nl) = match op {
            DiffOp::Equal { len, .. } => {
                oi += len;
                ni += len;
                continue;
            }
            DiffOp::Delete { old_len, .. } => (old_len, 0),
            DiffOp::Insert { new_len, .. } => (0, new_len),
            DiffOp::Replace {
                old_len, new_len, ..
            } => (old_len, new_len),
        };
        match runs.last_mut() {
            Some(r) if r.old + r.old_len == oi && r.new + r.new_len == ni => {
                r.old_len += ol;
                r.new_len += nl;
            }
            _ => runs.push(Run {
                old: oi,
                old_len: ol,
                new: ni,
                new_len: nl,
            }),
        }
        oi += ol;
        ni += nl;
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let mut last = i;
        while last + 1 < runs.len()
            && runs[last + 1].old - (runs[last].old + runs[last].old_len) <= 2 * CONTEXT
        {
            last += 1;
        }
        let first = runs[i];
        let end = runs[last];
        let old_start = first.old.saturating_sub(CONTEXT);
        let new_start = first.new.saturating_sub(CONTEXT);
        let old_end = (end.old + end.old_len + CONTEXT).min(a.len());
        let new_end = (end.new + end.new_len + CONTEXT).min(b.len());
        let func = function_line(&a, old_start);
        out.push(format!(
            "@@ -{} +{} @@{}",
            range_text(old_start, old_end - old_start),
            range_text(new_start, new_end - new_start),
            func.map(|f| format!(" {f}")).unwrap_or_default()
        ));
        let mut at = old_start;
        for run in &runs[i..=last] {
            for line in &a[at..run.old] {
                push_line(&mut out, ' ', line);
            }
            for line in &a[run.old..run.old + run.old_len] {
                push_line(&mut out, '-', line);
            }
            for line in &b[run.new..run.new + run.new_len] {
                push_line(&mut out, '+', line);
            }
            at = run.old + run.old_len;
        }
        for line in &a[at..old_end] {
            push_line(&mut out, ' ', line);
        }
        i = last + 1;
    }
    out
}

fn range_text(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        n => format!("{},{n}", start + 1),
    }
}

fn push_line(out: &mut Vec<String>, sign: char, line: &[u8]) {
    let (text, newline) = match line.strip_suffix(b"\n") {
        Some(t) => (t, true),
        None => (line, false),
    };
    out.push(format!("{sign}{}", String::from_utf8_lossy(text)));
    if !newline {
        out.push("\\ No newline at end of file".into());
    }
}

/// The nearest line above `before` that starts with a letter, `_` or `$`, cut to 80 bytes and
/// trailing white space: git's default function-name rule.
fn function_line(lines: &[&[u8]], before: usize) -> Option<String> {
    lines[..before.min(lines.len())].iter().rev().find_map(|l| {
        let first = *l.first()?;
        if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
            return None;
        }
        let mut cut = &l[..l.len().min(80)];
        while let Some((last, rest)) = cut.split_last() {
            if last.is_ascii_whitespace() {
                cut = rest;
            } else {
                break;
            }
        }
        Some(String::from_utf8_lossy(cut).into_owned())
    })
}

/// Every file's diff between two trees under `filter`, within `budget`: the diffs stop at the
/// deadline, and once they hold more lines than an answer shows.
pub fn diff_trees(
    repo: &Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    filter: &[u8],
    budget: &mut Budget,
) -> Result<Vec<Section>, Error> {
    let mut sections = Vec::new();
    let mut lines = 0;
    for change in tree_changes(repo, old, new, filter, budget)? {
        if budget.stopped() {
            break;
        }
        if budget.lines.is_some_and(|bound| lines > bound) {
            budget.cut(Cut::Lines);
            break;
        }
        let section = file_diff(repo, &change)?;
        lines += section.lines.len();
        sections.push(section);
    }
    Ok(sections)
}

/// `diff A..B` or `diff A B`: the two commits' trees compared.
pub fn diff(
    repo: &Repository,
    revision: &str,
    filter: &[u8],
    budget: &mut Budget,
) -> Result<Vec<Section>, Error> {
    let (a, b) = match revision.split_once("..") {
        Some(_) => {
            let r = range(repo, Some(revision))?;
            (r.exclude.unwrap_or(r.include), r.include)
        }
        None => {
            let mut parts = revision.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(a), Some(b), None) => (repo.resolve_commit(a)?, repo.resolve_commit(b)?),
                _ => {
                    return Err(Error::Revision(
                        "diff compares two commits: give A..B or A B".into(),
                    ));
                }
            }
        }
    };
    let (ta, tb) = (repo.commit(a)?.tree, repo.commit(b)?.tree);
    diff_trees(repo, Some(ta), Some(tb), filter, budget)
}

/// What `show` printed, and whether it was a merge (shown without a diff).
pub struct Shown {
    pub sections: Vec<Section>,
    pub merge: Option<(ObjectId, ObjectId)>,
    /// Entries of a directory listing that `denied` said to leave out, repository-relative.
    pub left_out: Vec<Vec<u8>>,
}

/// `show <revision>`: a commit with its message and diff, a tag then its commit, or with
/// `<revision>:<path>` a file or directory as it stood.
pub fn show(
    repo: &Repository,
    revision: &str,
    filter: &[u8],
    budget: &mut Budget,
) -> Result<Shown, Error> {
    show_skipping(repo, revision, filter, &|_| false, budget)
}

/// As [`show`], leaving out of a directory listing each entry whose repository-relative path
/// `denied` names (the person's deny rules), and saying which in [`Shown::left_out`].
pub fn show_skipping(
    repo: &Repository,
    revision: &str,
    filter: &[u8],
    denied: &dyn Fn(&[u8]) -> bool,
    budget: &mut Budget,
) -> Result<Shown, Error> {
    if let Some((rev, path)) = revision.split_once(':') {
        return show_path(repo, revision, rev, path.as_bytes(), denied);
    }
    let id = repo.resolve(revision)?;
    let mut sections = Vec::new();
    let mut target = id;
    // An annotated tag (or a chain of them, at most MAX_TAG_CHAIN long) is shown before what it
    // names.
    let mut tags = 0;
    while let Some(tag) = repo.annotated_tag(target)? {
        tags += 1;
        if tags > MAX_TAG_CHAIN {
            return Err(Error::Oversized(format!(
                "`{revision}` is a chain of more than {MAX_TAG_CHAIN} tags"
            )));
        }
        let mut lines = vec![format!("tag {}", String::from_utf8_lossy(&tag.name))];
        if let Some(tagger) = &tag.tagger {
            lines.push(format!("Tagger: {}", ident(tagger)));
            lines.push(format!("Date:   {}", default_date(tagger)));
        }
        lines.push(String::new());
        let mut message = tag.message.clone();
        if let Some(pgp) = &tag.pgp {
            message.extend_from_slice(pgp);
        }
        let text = String::from_utf8_lossy(&message).into_owned();
        lines.extend(text.trim_end_matches('\n').lines().map(str::to_string));
        lines.push(String::new());
        sections.push(Section {
            paths: Vec::new(),
            lines,
        });
        target = tag.target;
    }
    let Some(commit_id) = repo.peel_to_commit(target).filter(|c| *c == target) else {
        return Err(Error::Revision(format!(
            "`{revision}` names neither a commit nor a tag of one; use <revision>:<path> for a file or directory"
        )));
    };
    let commit = repo.commit(commit_id)?;
    let mut header = vec![format!("commit {}", commit.id.to_hex())];
    if commit.parents.len() > 1 {
        let parents: Vec<String> = commit.parents.iter().map(|p| repo.short(*p)).collect();
        header.push(format!("Merge: {}", parents.join(" ")));
    }
    header.push(format!("Author: {}", ident(&commit.author)));
    header.push(format!("Date:   {}", default_date(&commit.author)));
    header.push(String::new());
    header.extend(indented_message(&commit.message));
    sections.push(Section {
        paths: Vec::new(),
        lines: header,
    });
    if commit.parents.len() > 1 {
        return Ok(Shown {
            sections,
            merge: Some((commit.parents[0], commit.id)),
            left_out: Vec::new(),
        });
    }
    let parent_tree = match commit.parents.first() {
        Some(p) => Some(repo.commit(*p)?.tree),
        None => None,
    };
    let diffs = diff_trees(repo, parent_tree, Some(commit.tree), filter, budget)?;
    if !diffs.is_empty() {
        sections.push(Section {
            paths: Vec::new(),
            lines: vec![String::new()],
        });
    }
    sections.extend(diffs);
    Ok(Shown {
        sections,
        merge: None,
        left_out: Vec::new(),
    })
}

fn show_path(
    repo: &Repository,
    revision: &str,
    rev: &str,
    path: &[u8],
    denied: &dyn Fn(&[u8]) -> bool,
) -> Result<Shown, Error> {
    let commit = repo.resolve_commit(if rev.is_empty() { "HEAD" } else { rev })?;
    let tree = repo.commit(commit)?.tree;
    let trimmed: &[u8] = path.strip_suffix(b"/").unwrap_or(path);
    let Some(entry) = repo.entry_at(tree, trimmed)? else {
        return Err(Error::Revision(format!(
            "`{}` does not exist at `{rev}`",
            quote_path(path)
        )));
    };
    let paths = vec![trimmed.to_vec()];
    if entry.is_tree() {
        let mut lines = vec![format!("tree {revision}"), String::new()];
        let mut left_out = Vec::new();
        for e in repo.tree(entry.id)? {
            let full = if trimmed.is_empty() {
                e.name.clone()
            } else {
                [trimmed, b"/", &e.name].concat()
            };
            if denied(&full) {
                left_out.push(full);
                continue;
            }
            let suffix = if e.is_tree() { "/" } else { "" };
            // git lists a tree's names as they are stored, unquoted.
            lines.push(format!("{}{suffix}", String::from_utf8_lossy(&e.name)));
        }
        return Ok(Shown {
            sections: vec![Section { paths, lines }],
            merge: None,
            left_out,
        });
    }
    if entry.is_submodule() {
        return Err(Error::Revision(format!(
            "`{}` is a submodule at `{rev}`, recording commit {}",
            quote_path(trimmed),
            entry.id.to_hex()
        )));
    }
    let size = repo.size(entry.id)?;
    if size > MAX_BLOB_BYTES {
        return Ok(Shown {
            sections: vec![Section {
                paths,
                lines: vec![format!(
                    "[{} is {size} bytes at {rev}, past the 1 MiB this reader prints]",
                    quote_path(trimmed)
                )],
            }],
            merge: None,
            left_out: Vec::new(),
        });
    }
    let bytes = repo.blob(entry.id)?;
    if is_binary(&bytes) {
        return Ok(Shown {
            sections: vec![Section {
                paths,
                lines: vec![format!(
                    "[{} is binary at {rev}: {size} bytes]",
                    quote_path(trimmed)
                )],
            }],
            merge: None,
            left_out: Vec::new(),
        });
    }
    let lines = String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::to_string)
        .collect();
    Ok(Shown {
        sections: vec![Section { paths, lines }],
        merge: None,
        left_out: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The new text rebuilt from the old one and the hunks: context and `-` lines must be the
    /// old file's at the hunk's place, and context and `+` lines make the new one.
    fn apply(old: &[u8], hunks: &[String]) -> Vec<u8> {
        let old_lines = split_lines(old);
        let mut out: Vec<u8> = Vec::new();
        let mut at = 0;
        for line in hunks {
            if let Some(header) = line.strip_prefix("@@ -") {
                let start: usize = header
                    .split([',', ' '])
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap();
                let start = start.saturating_sub(1).max(at);
                for l in &old_lines[at..start] {
                    out.extend_from_slice(l);
                }
                at = start;
            } else if let Some(text) = line.strip_prefix(' ') {
                assert_eq!(old_lines[at].trim_ascii_end(), text.as_bytes(), "context");
                out.extend_from_slice(old_lines[at]);
                at += 1;
            } else if let Some(text) = line.strip_prefix('-') {
                assert_eq!(old_lines[at].trim_ascii_end(), text.as_bytes(), "removed");
                at += 1;
            } else if let Some(text) = line.strip_prefix('+') {
                out.extend_from_slice(text.as_bytes());
                out.push(b'\n');
            }
        }
        for l in &old_lines[at..] {
            out.extend_from_slice(l);
        }
        out
    }

    // Verifies: GIT-1
    #[test]
    fn a_hunk_is_a_patch_that_makes_the_new_text() {
        // `similar` reports this deletion's new side past the equal line that follows it; a
        // hunk built from that index printed the inserted lines one too far.
        let old = b"        );
        assert_eq!(scan(\"key\"), Some(\"aws\"));
        assert_eq!(
            scan(\"token\"),
            Some(\"gh\")
        );
        assert_eq!(scan(\"xoxb\"), Some(\"slack\"));
"
        .to_vec();
        let new = b"        );
        assert_eq!(
            scan(\"key\"),
            Some(\"aws\")
        );
        assert_eq!(
            scan(\"token\"),
            Some(\"gh\")
        );
        assert_eq!(scan(\"xoxb\"), Some(\"slack\"));
"
        .to_vec();
        let h = hunks(&old, &new);
        assert_eq!(apply(&old, &h), new, "{h:#?}");
        let lines: Vec<&str> = (0..40).map(|i| ["a\n", "b\n", "}\n"][i % 3]).collect();
        let old: Vec<u8> = lines.concat().into_bytes();
        let mut changed = lines.clone();
        changed.remove(7);
        changed.insert(20, "x\n");
        changed.insert(3, "}\n");
        let new: Vec<u8> = changed.concat().into_bytes();
        let h = hunks(&old, &new);
        assert_eq!(apply(&old, &h), new, "{h:#?}");
    }
}
