//! A benchmark of the trust map and the reach with many files the person named (not a test).
//!
//! Run it with
//!
//! ```sh
//! cargo run --release -p bravebot-tests --bin bench_trust [FILES]
//! ```
//!
//! It makes a tree of `FILES` small files (13,605 unless told, 100 to a directory) in a temporary
//! directory, then times, each once on a warm page cache:
//!
//! - writing a `person` file rule for every file (the rule a vouch writes, through `restore`,
//!   which writes it as a vouch does without the proof a gesture needs);
//! - asking the map the integrity of every file, as a search does of each file it reads;
//! - building the reach a read builds and asking it whether it admits each of 200 of the files,
//!   as each confined read does;
//! - a search of the whole tree for a word in every file, page of 200, first with no rule in
//!   place, then asking the map of each file as the `search` tool does (whether it is denied,
//!   whether it is one nobody vouched for), and `rg -c` over the same tree for scale.
//!
//! It prints each time and the number of rules.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use bravebot_core::files::DiskOnly;
use bravebot_core::kernel::trust::{RuleOrigin, Scope, TrustMap, TrustRule, TrustStore};
use bravebot_core::search::{Keep, Limits, Pattern, Request, search_tree_keeping};
use bravebot_core::workspace_file::Reach;

const PER_DIRECTORY: usize = 100;
const ADMITS: usize = 200;

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("FILES is a number"))
        .unwrap_or(13_605);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("resolved");
    let files = make_tree(&root, count);
    println!("files: {count}");

    let started = Instant::now();
    let mut map = TrustMap::default();
    for f in &files {
        map.restore(TrustRule {
            path: f.clone(),
            scope: Scope::File,
            origin: RuleOrigin::Person,
        });
    }
    println!(
        "{} person file rules written: {:.1} ms",
        map.rules().count(),
        ms(started)
    );

    let started = Instant::now();
    let trusted = files
        .iter()
        .filter(|f| map.integrity_of(f).is_some())
        .count();
    println!(
        "integrity of each of {trusted} files: {:.1} ms",
        ms(started)
    );

    let store = TrustStore::new(map.clone());
    let step = (files.len() / ADMITS).max(1);
    let started = Instant::now();
    let mut admitted = 0;
    for f in files.iter().step_by(step).take(ADMITS) {
        let reach = Reach::with_rules(vec![root.join("elsewhere")], &store);
        admitted += usize::from(reach.admits(f).is_some());
    }
    println!(
        "reach built and asked for {admitted} named files: {:.1} ms",
        ms(started)
    );

    let pattern = Pattern::compile(&["needle".to_string()], true).expect("pattern");
    let limits = || Limits {
        max_matches: 200,
        max_files: u64::MAX,
        deadline: None,
        max_file_bytes: 1024 * 1024,
    };
    let request = Request {
        root: &root,
        workspace: &root,
        pattern: &pattern,
        include: None,
        offset: 0,
        limits: limits(),
        resume: None,
    };
    let started = Instant::now();
    let bare = search_tree_keeping(&request, &DiskOnly, &|| false, &Keep::nothing());
    println!(
        "search, no rules: {:.1} ms ({} files read)",
        ms(started),
        bare.files_read.len()
    );
    let started = Instant::now();
    let wanted = |p: &Path| map.integrity_of(p).is_none();
    let denied = |p: &Path| map.denied(p).is_some();
    let keep = Keep {
        files: 16,
        max_bytes: 1024 * 1024,
        wanted: &wanted,
        denied: &denied,
    };
    let with_rules = search_tree_keeping(&request, &DiskOnly, &|| false, &keep);
    println!(
        "search, every file vouched for: {:.1} ms ({} files read)",
        ms(started),
        with_rules.files_read.len()
    );
    let started = Instant::now();
    let rg = Command::new("rg")
        .args(["-uu", "-c", "needle"])
        .arg(&root)
        .output();
    match rg {
        Ok(out) if out.status.success() => println!("rg -uu -c: {:.1} ms", ms(started)),
        _ => println!("rg -uu -c: not run (no rg)"),
    }
}

/// `count` files of one line holding the word, `PER_DIRECTORY` to a directory.
fn make_tree(root: &Path, count: usize) -> Vec<PathBuf> {
    let mut files = Vec::with_capacity(count);
    for i in 0..count {
        let sub = root.join(format!("d{:04}", i / PER_DIRECTORY));
        if i % PER_DIRECTORY == 0 {
            std::fs::create_dir_all(&sub).expect("directory made");
        }
        let file = sub.join(format!("f{i:05}.txt"));
        std::fs::write(&file, format!("line with the needle {i}\n")).expect("file written");
        files.push(file);
    }
    files
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}
