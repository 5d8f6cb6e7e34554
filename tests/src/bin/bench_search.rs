//! A benchmark of `search`'s engine against ripgrep on one large tree (not a test).
//!
//! Run it with
//!
//! ```sh
//! cargo run --release -p bravebot-tests --bin bench_search [TREE]
//! ```
//!
//! `TREE` defaults to the unpacked crate sources under `~/.cargo/registry/src/`, a few hundred
//! megabytes of Rust, C and generated bindings. For each pattern it times
//! [`search_tree`](bravebot_core::tools::search::search_tree) with every cap lifted (all matches
//! counted, no file, size or time cap) and `rg` with the same pattern, both on a warm page cache,
//! and prints the median of five runs and each side's count of matching lines.
//!
//! ripgrep runs as `rg -uu -c` (no ignore files, hidden files searched, binary files skipped) with
//! the directories `search` skips by name excluded, so both walk the same files. The engine reads on
//! up to four threads (`search`'s own bound); ripgrep is shown with its default threads and with `-j1`. Counts may differ where the
//! two judge binary files differently: `search` skips a file with a NUL byte anywhere, ripgrep
//! stops at the first NUL it meets.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use bravebot_core::tools::DiskOnly;
use bravebot_core::tools::search::{Limits, Pattern, Request, SKIPPED_DIRECTORIES, search_tree};

const RUNS: usize = 5;

/// Patterns both engines read the same way: a common literal, a rare one, a regular expression
/// with a class, one folded for case, an alternation, and one that backtracks exponentially on an
/// engine that backtracks.
const PATTERNS: &[(&str, bool)] = &[
    ("unsafe", true),
    ("zqxjkv", true),
    ("fn [a-z_]+\\(", true),
    ("todo", false),
    ("Result<|Option<", true),
    ("(a+)+$", true),
    ("^\\s*//.*\\bpanic", true),
    ("\\w+_unchecked\\b", true),
];

fn main() {
    let tree = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(default_tree);
    let tree = std::fs::canonicalize(&tree).expect("the tree exists");
    println!("tree: {}", tree.display());
    if Command::new("rg").arg("--version").output().is_err() {
        eprintln!("warning: rg is not installed (apt-get install ripgrep); timing search alone");
    }
    println!(
        "{:<22} {:>11} {:>9} {:>9} {:>11} {:>11} {:>9}",
        "pattern", "search ms", "files", "matches", "rg ms", "rg -j1 ms", "rg match"
    );
    for &(pattern, case_sensitive) in PATTERNS {
        let compiled = Pattern::compile(&[pattern], case_sensitive).expect("compiles");
        let mut files = 0;
        let mut matches = 0;
        let ours = median(|| {
            let request = Request {
                root: &tree,
                workspace: &tree,
                pattern: &compiled,
                include: None,
                offset: 0,
                limits: Limits {
                    max_matches: usize::MAX,
                    max_files: u64::MAX,
                    deadline: None,
                    max_file_bytes: u64::MAX,
                },
            };
            let outcome = search_tree(&request, &DiskOnly, &|| false);
            files = outcome.files_read.len();
            matches = outcome.counted;
        });
        let mut rg_matches = None;
        let rg_all = rg_available()
            .then(|| median(|| rg_matches = run_rg(&tree, pattern, case_sensitive, None)));
        let rg_one = rg_available()
            .then(|| median(|| rg_matches = run_rg(&tree, pattern, case_sensitive, Some(1))));
        let ms = |d: Option<Duration>| {
            d.map_or("-".to_string(), |d| format!("{:.1}", d.as_secs_f64() * 1e3))
        };
        println!(
            "{:<22} {:>11} {:>9} {:>9} {:>11} {:>11} {:>9}",
            format!("{pattern}{}", if case_sensitive { "" } else { " (-i)" }),
            ms(Some(ours)),
            files,
            matches,
            ms(rg_all),
            ms(rg_one),
            rg_matches.map_or("-".to_string(), |n| n.to_string()),
        );
    }
}

fn default_tree() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .expect("HOME is set");
    let src = home.join(".cargo/registry/src");
    std::fs::read_dir(&src)
        .expect("~/.cargo/registry/src exists; or name a tree")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("an unpacked registry")
}

fn rg_available() -> bool {
    Command::new("rg").arg("--version").output().is_ok()
}

/// Runs ripgrep once and returns its count of matching lines.
fn run_rg(
    tree: &Path,
    pattern: &str,
    case_sensitive: bool,
    threads: Option<usize>,
) -> Option<usize> {
    let mut command = Command::new("rg");
    command.args(["-uu", "-c", "--no-messages", "--no-filename"]);
    if !case_sensitive {
        command.arg("-i");
    }
    if let Some(n) = threads {
        command.arg(format!("-j{n}"));
    }
    for name in SKIPPED_DIRECTORIES {
        command.arg("-g").arg(format!("!{name}/"));
    }
    let output = command.arg("-e").arg(pattern).arg(tree).output().ok()?;
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| l.trim().parse::<usize>().ok())
            .sum(),
    )
}

/// The median wall time of [`RUNS`] runs, after one run to warm the page cache.
fn median(mut run: impl FnMut()) -> Duration {
    run();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let began = Instant::now();
            run();
            began.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}
