//! A benchmark of how much of a tree `search` reads for its first page (not a test): for each
//! tree given and five literal patterns, the files the engine read before it had a page of 200
//! matches, and in how many files the page's matches lie (each one a check where nobody vouched
//! for the files), beside the same counts for the order `rg --sort path` reads in (each
//! directory's entries by name, files and directories interleaved, depth first), computed here.
//!
//! ```sh
//! cargo run --release -p bravebot-tests --bin bench_page -- ~/.cargo/registry/src/*/ TREE...
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.
use bravebot_core::files::DiskOnly;
use bravebot_core::search::{Limits, Pattern, Request, SKIPPED_DIRECTORIES, search_tree};
use std::path::{Path, PathBuf};

/// Files in `rg --sort path` order: each directory's entries sorted by name, files and
/// directories interleaved, depth first.
fn rg_order(root: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let kind = e.file_type().unwrap();
        if kind.is_dir() {
            if !SKIPPED_DIRECTORIES.iter().any(|s| e.file_name() == **s) {
                rg_order(&e.path(), out);
            }
        } else if kind.is_file() {
            out.push(e.path());
        }
    }
}

fn main() {
    for tree in std::env::args().skip(1) {
        let tree = std::fs::canonicalize(tree).unwrap();
        let mut files = Vec::new();
        rg_order(&tree, &mut files);
        for pat in ["unsafe", "fn new", "TODO", "impl Default", "#[test]"] {
            let pattern = Pattern::compile(&[&regex_escape(pat)], true).unwrap();
            let request = Request {
                root: &tree,
                workspace: &tree,
                pattern: &pattern,
                include: None,
                offset: 0,
                limits: Limits {
                    max_matches: 200,
                    max_files: u64::MAX,
                    deadline: None,
                    max_file_bytes: 8 << 20,
                },
                resume: None,
            };
            let out = search_tree(&request, &DiskOnly, &|| false);
            let shown = out
                .matches
                .iter()
                .map(|m| m.path.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let (mut n, mut read, mut with) = (0usize, 0usize, 0usize);
            for f in &files {
                if n >= 200 {
                    break;
                }
                read += 1;
                let Ok(bytes) = std::fs::read(f) else {
                    continue;
                };
                if bytes.contains(&0) {
                    continue;
                }
                let hits = bytes
                    .split(|b| *b == b'\n')
                    .filter(|l| l.windows(pat.len()).any(|w| w == pat.as_bytes()))
                    .count();
                if hits > 0 {
                    with += 1;
                }
                n += hits;
            }
            println!(
                "{:<34} {:<13} engine read {:>5} (matches in {:>3})   rg order read {:>5} (matches in {:>3})",
                tree.file_name().unwrap().to_string_lossy(),
                pat,
                out.files_read.len(),
                shown,
                read,
                with
            );
        }
    }
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if "[]()#".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}
