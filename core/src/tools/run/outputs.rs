//! The files a run may have written through its own arguments.
//!
//! A program names its outputs in ways nothing outside it can know (`sort -o out`, `cp a b`,
//! `tee f`, `cc -o prog`), so every word of the plan that could be a path is a candidate: the
//! word itself, what follows the first `=` of an option, and what follows each letter of a short
//! option cluster (`-oout`, `-xvfa.tar`). Candidates inside an opened place are looked at before
//! and after the run (whether something is there, its kind, size, inode and times), never read.
//! Whatever changed is what the run wrote.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::readonly::Places;
use crate::cmdline::{Plan, Redirect};

/// A word longer than this is a candidate as a whole, but its suffixes are not taken apart.
const LONGEST_SPLIT_WORD: usize = 256;

/// What was at a path: enough to see that a write happened, without opening anything.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    is_dir: bool,
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
    changed: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        is_dir: meta.is_dir(),
        len: meta.len(),
        modified: meta.modified().ok(),
        inode: meta.ino(),
        changed: (meta.ctime(), meta.ctime_nsec()),
    })
}

/// Every path a plan's arguments or redirects could name inside an opened place, with links
/// resolved, each once.
pub fn candidates(plan: &Plan, places: &Places) -> Vec<PathBuf> {
    let mut words: Vec<&str> = Vec::new();
    for command in plan.commands() {
        for argument in command.arguments() {
            words.push(argument);
            if let Some((_, value)) = argument.split_once('=') {
                words.push(value);
            }
            let cluster = argument
                .strip_prefix('-')
                .filter(|c| !c.starts_with('-') && argument.len() <= LONGEST_SPLIT_WORD);
            if let Some(cluster) = cluster {
                words.extend(cluster.char_indices().map(|(at, _)| &cluster[at..]));
            }
        }
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |path: PathBuf| {
        let path = crate::workspace_file::real_path(&path);
        if places.contain(&path) && !out.contains(&path) {
            out.push(path);
        }
    };
    for word in words.into_iter().filter(|w| !w.is_empty()) {
        push(plan.directory().join(word));
    }
    for command in plan.commands() {
        for redirect in command.redirects() {
            if let Redirect::Output { path, .. } = redirect {
                push(path.clone());
            }
        }
    }
    out
}

/// What the candidates looked like before a run.
pub struct Before {
    seen: Vec<(PathBuf, Option<Stamp>)>,
}

/// What a run did to one candidate.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    /// A file was created or changed.
    File(PathBuf),
    /// A directory was created where nothing was.
    Directory(PathBuf),
}

impl Before {
    pub fn take(candidates: Vec<PathBuf>) -> Before {
        Before {
            seen: candidates
                .into_iter()
                .map(|path| {
                    let stamp = stamp(&path);
                    (path, stamp)
                })
                .collect(),
        }
    }

    /// The candidates that changed since [`Before::take`]. A directory that existed and changed
    /// is left out: what changed is inside it, unnamed (COST-8).
    pub fn written(&self) -> Vec<Written> {
        self.seen
            .iter()
            .filter_map(|(path, before)| {
                let after = stamp(path)?;
                if before.as_ref() == Some(&after) {
                    return None;
                }
                match (before, after.is_dir) {
                    (_, false) => Some(Written::File(path.clone())),
                    (None, true) => Some(Written::Directory(path.clone())),
                    (Some(_), true) => None,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmdline::{SystemEnvironment, compile};

    // Verifies: RUNTOOL-10
    #[test]
    fn files_a_run_names_and_changes_are_found_whatever_the_spelling() {
        let work = tempfile::tempdir().expect("workspace");
        let root = std::fs::canonicalize(work.path()).expect("root");
        std::fs::write(root.join("input.txt"), "b\na\n").expect("write");
        std::fs::write(root.join("kept.txt"), "same\n").expect("write");
        let places = Places::new([&root]);
        let line = "sort -oattached.txt input.txt ; sort --output=long.txt input.txt ; \
                    cp input.txt copy.txt ; mkdir made ; cat kept.txt ; touch /tmp/../tmp";
        let plan = compile(line, &SystemEnvironment::new(root.clone())).expect("compiles");
        let before = Before::take(candidates(&plan, &places));
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("sort -oattached.txt input.txt; sort --output=long.txt input.txt; cp input.txt copy.txt; mkdir made; cat kept.txt >/dev/null")
            .current_dir(&root)
            .status()
            .expect("sh");
        assert!(status.success());
        let mut written = before.written();
        written.sort_by_key(|w| format!("{w:?}"));
        assert_eq!(
            written,
            vec![
                Written::Directory(root.join("made")),
                Written::File(root.join("attached.txt")),
                Written::File(root.join("copy.txt")),
                Written::File(root.join("long.txt")),
            ]
        );
    }
}
