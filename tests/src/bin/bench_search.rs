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
//! [`search_tree`](bravebot_core::search::search_tree) asked for a page past the last match
//! (every match counted and none shown, as `rg -c` does; no file, size or time cap) and `rg` with
//! the same pattern, both on a warm page cache,
//! and prints the median of seven runs, interleaved with ripgrep's, each side's count of matching
//! lines, the ratios and the one-minute load average before and after.
//!
//! Then it times pages of `unsafe` at the tool's cap of 200 matches, each asked for by the offset
//! the page before named: once resuming at the place the page before left (as a session does,
//! SEARCH-30) and once read from the start, interleaved. `BENCH_SEARCH_ONLY=PATTERN` times one
//! pattern of the table alone; `BENCH_SEARCH_LINES=1` asks `search` for every match from offset 0
//! instead, so that each is given its path and text, which `rg -c` never builds.
//!
//! ripgrep runs as `rg -uu -c` (no ignore files, hidden files searched, binary files skipped) with
//! the directories `search` skips by name excluded, so both walk the same files. The engine reads on
//! up to four threads (`search`'s own bound); ripgrep is shown with its default threads and with
//! `-j1`. Counts may differ where the two judge binary files differently: `search` skips a file with a NUL byte anywhere, ripgrep
//! stops at the first NUL it meets.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use bravebot_core::files::DiskOnly;
use bravebot_core::search::{Limits, Pattern, Request, Resume, SKIPPED_DIRECTORIES, search_tree};

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
        "{:<24} {:<22} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9} {:>7} {:>7} {:>9} {:>9} {:>7}  load",
        "kind",
        "pattern",
        "search ms",
        "files",
        "matches",
        "rg ms",
        "rg -j1 ms",
        "rg match",
        "/rg",
        "/rg-j1",
        "cpu ms",
        "rg cpu",
        "cpu/rg"
    );
    let only = std::env::var("BENCH_SEARCH_ONLY").ok();
    let every_line = std::env::var_os("BENCH_SEARCH_LINES").is_some();
    println!(
        "search asked for {}",
        if every_line {
            "every match from offset 0, each with its path and text"
        } else {
            "the page past the last match: every match counted, none shown"
        }
    );
    for &(kind, pattern, case_sensitive) in PATTERNS {
        if only.as_deref().is_some_and(|o| o != pattern) {
            continue;
        }
        let compiled = Pattern::compile(&[pattern], case_sensitive).expect("compiles");
        let mut files = 0;
        let mut matches = 0;
        let mut ours = || {
            let request = Request {
                root: &tree,
                workspace: &tree,
                pattern: &compiled,
                include: None,
                offset: if every_line { 0 } else { usize::MAX },
                limits: Limits {
                    max_matches: if every_line { usize::MAX } else { 200 },
                    max_files: u64::MAX,
                    deadline: None,
                    max_file_bytes: u64::MAX,
                },
                resume: None,
            };
            let outcome = search_tree(&request, &DiskOnly, &|| false);
            assert!(outcome.stop.is_none(), "the whole tree is searched");
            files = outcome.files_read.len();
            matches = outcome.counted;
        };
        let mut rg_matches = None;
        let load_before = load();
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut cpu: [Vec<Duration>; 3] = Default::default();
        for round in 0..=RUNS {
            let mut timed = |which: usize, run: &mut dyn FnMut()| {
                let (began, spent) = (Instant::now(), cpu_time());
                run();
                if round > 0 {
                    times[which].push(began.elapsed());
                    cpu[which].push(cpu_time().saturating_sub(spent));
                }
            };
            timed(0, &mut ours);
            if rg {
                timed(1, &mut || {
                    rg_matches = run_rg(&tree, pattern, case_sensitive, None);
                });
                timed(2, &mut || {
                    rg_matches = run_rg(&tree, pattern, case_sensitive, Some(1));
                });
            }
        }
        let [ours_t, rg_t, rg1_t] = times.map(median);
        let [ours_c, rg_c, _] = cpu.map(median);
        let ms = |d: Option<Duration>| {
            d.map_or("-".to_string(), |d| format!("{:.1}", d.as_secs_f64() * 1e3))
        };
        let ratio = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}", a.as_secs_f64() / b.as_secs_f64()),
            _ => "-".to_string(),
        };
        println!(
            "{:<24} {:<22} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9} {:>7} {:>7} {:>9} {:>9} {:>7}  {} to {}{}",
            kind,
            format!("{pattern}{}", if case_sensitive { "" } else { " (-i)" }),
            ms(ours_t),
            files,
            matches,
            ms(rg_t),
            ms(rg1_t),
            rg_matches.map_or("-".to_string(), |n| n.to_string()),
            ratio(ours_t, rg_t),
            ratio(ours_t, rg1_t),
            ms(ours_c),
            ms(rg_c),
            ratio(ours_c, rg_c),
            load_before,
            load(),
            if rg_matches.is_some_and(|n| n != matches) {
                "  (counts differ)"
            } else {
                ""
            },
        );
    }
    pages(&tree);
}

/// Pages of one common pattern at the tool's own cap, each asked for by the offset the page before
/// named: with the place the page before left (as a session does) and read from the start.
fn pages(tree: &Path) {
    const PAGES: &[usize] = &[1, 10, 50];
    let pattern = Pattern::compile(&["unsafe"], true).expect("compiles");
    let search = |offset: usize, resume: Option<&Resume>| {
        let request = Request {
            root: tree,
            workspace: tree,
            pattern: &pattern,
            include: None,
            offset,
            limits: Limits {
                max_matches: 200,
                max_files: u64::MAX,
                deadline: None,
                max_file_bytes: 8 << 20,
            },
            resume,
        };
        search_tree(&request, &DiskOnly, &|| false)
    };
    // The place each page leaves, found once by walking the pages in order.
    let mut marks: Vec<Option<Resume>> = vec![None];
    let last = PAGES.iter().copied().max().unwrap_or(0);
    while marks.len() <= last {
        let offset = marks
            .last()
            .and_then(Option::as_ref)
            .map_or(0, |m| m.next_offset);
        let page = search(offset, marks.last().and_then(Option::as_ref));
        marks.push(page.resume);
        if marks.last().is_some_and(Option::is_none) {
            break;
        }
    }
    println!();
    println!("pages of `unsafe` at 200 matches each, median of {RUNS}, interleaved:");
    println!(
        "{:>6} {:>8} {:>12} {:>10} {:>12} {:>10}  load",
        "page", "offset", "resumed ms", "read", "rescan ms", "read"
    );
    for &k in PAGES {
        let Some(Some(mark)) = marks.get(k) else {
            println!("{k:>6} (the pattern has fewer pages)");
            continue;
        };
        let load_before = load();
        let mut times: [Vec<Duration>; 2] = Default::default();
        let mut read = [0, 0];
        for round in 0..=RUNS {
            for (which, resume) in [Some(mark), None].into_iter().enumerate() {
                let began = Instant::now();
                let page = search(mark.next_offset, resume);
                let took = began.elapsed();
                assert_eq!(page.resumed, resume.is_some());
                read[which] = page.files_read.len();
                if round > 0 {
                    times[which].push(took);
                }
            }
        }
        let [resumed, rescan] = times.map(median);
        let ms =
            |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.1}", d.as_secs_f64() * 1e3));
        println!(
            "{k:>6} {:>8} {:>12} {:>10} {:>12} {:>10}  {} to {}",
            mark.next_offset,
            ms(resumed),
            read[0],
            ms(rescan),
            read[1],
            load_before,
            load()
        );
    }
}

/// Processor time spent so far by this process's threads and the children it waited for.
fn cpu_time() -> Duration {
    let spent = |who| {
        // SAFETY: getrusage writes one rusage into the zeroed value it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &raw mut usage) };
        let time = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        time(usage.ru_utime) + time(usage.ru_stime)
    };
    spent(libc::RUSAGE_SELF) + spent(libc::RUSAGE_CHILDREN)
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
