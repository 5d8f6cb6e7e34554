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
//! and prints the median of seven runs, interleaved with ripgrep's, each side's count of matching
//! lines, the ratios and the one-minute load average before and after.
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

const RUNS: usize = 7;

/// One pattern of the table: what kind of search it stands for, the pattern, and whether case
/// counts. Both engines read each the same way.
const PATTERNS: &[(&str, &str, bool)] = &[
    ("literal", "unsafe", true),
    ("no match", "zqxjkv", true),
    ("many matches", "self", true),
    ("regex with classes", "fn [a-z_]+\\(", true),
    ("case-insensitive", "todo", false),
    ("alternation", "Result<|Option<", true),
    ("Unicode word boundaries", "\\w+_unchecked\\b", true),
    ("Unicode word boundaries", "^\\s*//.*\\bpanic", true),
    ("Unicode word classes", "\\b\\w+_\\w+_\\w+\\b", true),
    ("built to backtrack", "(a+)+$", true),
];

fn main() {
    let tree = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(default_tree);
    let tree = std::fs::canonicalize(&tree).expect("the tree exists");
    println!("tree: {}", tree.display());
    let rg = rg_available();
    if !rg {
        eprintln!("warning: rg is not installed (apt-get install ripgrep); timing search alone");
    }
    println!("runs: {RUNS} of each, interleaved (search, rg, rg -j1), after one warm-up round");
    println!(
        "{:<24} {:<22} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9} {:>7} {:>7}  load",
        "kind",
        "pattern",
        "search ms",
        "files",
        "matches",
        "rg ms",
        "rg -j1 ms",
        "rg match",
        "/rg",
        "/rg-j1"
    );
    for &(kind, pattern, case_sensitive) in PATTERNS {
        let compiled = Pattern::compile(&[pattern], case_sensitive).expect("compiles");
        let mut files = 0;
        let mut matches = 0;
        let mut ours = || {
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
                resume: None,
            };
            let outcome = search_tree(&request, &DiskOnly, &|| false);
            files = outcome.files_read.len();
            matches = outcome.counted;
        };
        let mut rg_matches = None;
        let load_before = load();
        let mut times: [Vec<Duration>; 3] = Default::default();
        for round in 0..=RUNS {
            let mut timed = |which: usize, run: &mut dyn FnMut()| {
                let began = Instant::now();
                run();
                if round > 0 {
                    times[which].push(began.elapsed());
                }
            };
            timed(0, &mut ours);
            if rg {
                timed(1, &mut || {
                    rg_matches = run_rg(&tree, pattern, case_sensitive, None)
                });
                timed(2, &mut || {
                    rg_matches = run_rg(&tree, pattern, case_sensitive, Some(1));
                });
            }
        }
        let [ours_t, rg_t, rg1_t] = times.map(median);
        let ms = |d: Option<Duration>| {
            d.map_or("-".to_string(), |d| format!("{:.1}", d.as_secs_f64() * 1e3))
        };
        let ratio = |d: Option<Duration>| match (ours_t, d) {
            (Some(a), Some(b)) => format!("{:.2}", a.as_secs_f64() / b.as_secs_f64()),
            _ => "-".to_string(),
        };
        println!(
            "{:<24} {:<22} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9} {:>7} {:>7}  {} to {}{}",
            kind,
            format!("{pattern}{}", if case_sensitive { "" } else { " (-i)" }),
            ms(ours_t),
            files,
            matches,
            ms(rg_t),
            ms(rg1_t),
            rg_matches.map_or("-".to_string(), |n| n.to_string()),
            ratio(rg_t),
            ratio(rg1_t),
            load_before,
            load(),
            if rg_matches.is_some_and(|n| n != matches) {
                "  (counts differ)"
            } else {
                ""
            },
        );
    }
}

/// The one-minute load average, as `uptime` shows it.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
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

/// The median of the timed runs, if there were any.
fn median(mut times: Vec<Duration>) -> Option<Duration> {
    times.sort();
    times.get(times.len() / 2).copied()
}
