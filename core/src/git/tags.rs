//! `tags`: tag names newest version first, as `git tag --sort=-v:refname` lists them, and given
//! a revision only those whose commit it reaches, as `--merged` does.

use std::cmp::Ordering;

use super::log::{Cut, ancestors};
use super::{Budget, Error, Repository};

/// One page of tags.
#[derive(Debug)]
pub struct TagPage {
    pub names: Vec<String>,
    pub next_skip: Option<usize>,
    pub cut: Option<Cut>,
}

/// Lists tags, newest version first.
pub fn tags(
    repo: &Repository,
    merged: Option<&str>,
    count: usize,
    skip: usize,
    budget: &mut Budget,
) -> Result<TagPage, Error> {
    let mut all = repo.tag_refs()?;
    if let Some(revision) = merged {
        let Some(reach) = ancestors(repo, repo.resolve_commit(revision)?, budget)? else {
            // Which tags it reaches is not known: none is listed, and the budget says why.
            return Ok(TagPage {
                names: Vec::new(),
                next_skip: None,
                cut: None,
            });
        };
        let mut kept = Vec::new();
        for (name, target) in all {
            if repo.peel(target)?.is_some_and(|c| reach.contains(&c)) {
                kept.push((name, target));
            }
        }
        all = kept;
    }
    let mut names: Vec<String> = all.into_iter().map(|(n, _)| n).collect();
    names.sort_by(|a, b| version_order(b, a).then_with(|| a.cmp(b)));
    let total = names.len();
    let page: Vec<String> = names.into_iter().skip(skip).take(count).collect();
    let cut = (skip + page.len() < total).then_some(Cut::Count);
    Ok(TagPage {
        next_skip: cut.map(|_| skip + page.len()),
        names: page,
        cut,
    })
}

/// Compares names as version numbers: runs of digits by their value, everything else byte by
/// byte.
pub fn version_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let si = i;
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            let sj = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let x = trim_zeros(&a[si..i]);
            let y = trim_zeros(&b[sj..j]);
            let o = x.len().cmp(&y.len()).then_with(|| x.cmp(y));
            if o != Ordering::Equal {
                return o;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits
        .iter()
        .position(|d| *d != b'0')
        .unwrap_or(digits.len());
    &digits[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: GIT-7
    #[test]
    fn versions_compare_by_the_value_of_their_numbers() {
        let mut v = vec!["v1.10", "v1.2", "v1.9.1", "v2.0", "v1.2-rc1", "a"];
        v.sort_by(|a, b| version_order(b, a));
        assert_eq!(v, vec!["v2.0", "v1.10", "v1.9.1", "v1.2-rc1", "v1.2", "a"]);
    }
}
