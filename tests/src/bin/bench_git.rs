//! A benchmark of `read_git`'s engine against git itself on the generated 10,000-commit
//! repository (not a test).
//!
//! Run it with
//!
//! ```sh
//! cargo run --release -p bravebot-tests --bin bench_git [DIR [QUESTION]]
//! ```
//!
//! The repository is written by [`generate`](bravebot_tests::git_fixture::generate) into `DIR`
//! and kept, so git can be timed there by hand and a profiler pointed at one `QUESTION` (a
//! prefix of its name below); a `DIR` that already holds a repository is used as it is. Without
//! `DIR` it goes into a temporary directory. Each question is asked of [`bravebot_core::git`] (opening the repository each time,
//! as one `read_git` call does) and of `git` with the same arguments, a pager of `cat` and a
//! clean environment, on a warm page cache; the medians of seven runs are printed, CPU time
//! (this process's and git's, which a busy machine disturbs far less) and wall time, with the
//! ratios of the two and each side's line count, which must agree. The questions are asked of
//! the pack fast-import wrote and again after `git repack -a -d -f`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::path::Path;
use std::time::{Duration, Instant};

use bravebot_core::git::{self, diff, grep, log};
use bravebot_tests::git_fixture::{generate, git_command};

const RUNS: usize = 7;
const COMMITS: usize = 10_000;

/// One question: its name, read_git's answer in lines, and git's arguments.
struct Case {
    name: &'static str,
    ours: fn(&Path) -> usize,
    git: &'static [&'static str],
}

fn log_lines(dir: &Path, revision: Option<&str>, path: Option<&str>, count: usize) -> usize {
    let repo = git::open(dir).unwrap();
    let page = log::log(
        &repo,
        &log::LogQuery {
            revision: revision.map(str::to_string),
            path: path.map(|p| p.as_bytes().to_vec()),
            count,
            ..log::LogQuery::default()
        },
    )
    .unwrap();
    page.lines.len()
}

fn diff_lines(dir: &Path, revision: &str, path: &str) -> usize {
    let repo = git::open(dir).unwrap();
    diff::diff(
        &repo,
        revision,
        path.as_bytes(),
        &mut git::Budget::default(),
    )
    .unwrap()
    .iter()
    .map(|s| s.lines.len())
    .sum()
}

fn grep_lines(dir: &Path, revision: &str, pattern: &str) -> usize {
    let repo = git::open(dir).unwrap();
    let regex = grep::Regex::new(pattern).unwrap();
    grep::grep(
        &repo,
        &grep::GrepQuery {
            revision,
            pattern: &regex,
            path: b"",
            count: usize::MAX,
            skip: 0,
        },
        &mut git::Budget::default(),
    )
    .unwrap()
    .files
    .iter()
    .map(|f| f.lines.len())
    .sum()
}

const FORMAT: &str = "--format=%h %ad %an %s";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "log -n 20",
            ours: |d| log_lines(d, None, None, 20),
            git: &["log", FORMAT, "--date=short", "--abbrev=10", "-n", "20"],
        },
        Case {
            name: "log -n 200",
            ours: |d| log_lines(d, None, None, 200),
            git: &["log", FORMAT, "--date=short", "--abbrev=10", "-n", "200"],
        },
        Case {
            name: "log -n 200 -- file",
            ours: |d| log_lines(d, None, Some("src/dir1/file7.rs"), 200),
            git: &[
                "log",
                FORMAT,
                "--date=short",
                "--abbrev=10",
                "-n",
                "200",
                "--",
                "src/dir1/file7.rs",
            ],
        },
        Case {
            name: "log A..B -n 200",
            ours: |d| log_lines(d, Some("HEAD~5000..HEAD~4000"), None, 200),
            git: &[
                "log",
                FORMAT,
                "--date=short",
                "--abbrev=10",
                "-n",
                "200",
                "HEAD~5000..HEAD~4000",
            ],
        },
        Case {
            name: "diff HEAD~1 HEAD",
            ours: |d| diff_lines(d, "HEAD~1..HEAD", ""),
            git: &["diff", "-M100%", "HEAD~1", "HEAD"],
        },
        Case {
            name: "diff HEAD~3000 HEAD",
            ours: |d| diff_lines(d, "HEAD~3000..HEAD", ""),
            git: &["diff", "-M100%", "HEAD~3000", "HEAD"],
        },
        Case {
            name: "grep -n alpha HEAD",
            ours: |d| grep_lines(d, "HEAD", "alpha"),
            git: &["grep", "-n", "-E", "alpha", "HEAD"],
        },
        Case {
            name: "grep -n rare HEAD~5000",
            ours: |d| grep_lines(d, "HEAD~5000", "changed (echo|golf) 1[0-9]"),
            git: &[
                "grep",
                "-n",
                "-E",
                "changed (echo|golf) 1[0-9]",
                "HEAD~5000",
            ],
        },
    ]
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// CPU time this process has used, and that its waited-for children have.
fn cpu() -> (Duration, Duration) {
    let mut own = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both calls only write into the structures passed.
    #[allow(unsafe_code)]
    let children = unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut own);
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (
        Duration::new(own.tv_sec as u64, own.tv_nsec as u32),
        tv(children.ru_utime) + tv(children.ru_stime),
    )
}

/// The median wall time and CPU time of `f` over [`RUNS`] runs after one to warm up. The CPU
/// time is this process's and its children's, so it counts a git process's work and not the
/// time other programs on a busy machine took from it.
fn time<T>(mut f: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut out = f();
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    for _ in 0..RUNS {
        let (own, children) = cpu();
        let start = Instant::now();
        out = f();
        walls.push(start.elapsed());
        let (own_after, children_after) = cpu();
        cpus.push((own_after - own) + (children_after - children));
    }
    (median(walls), median(cpus), out)
}

fn main() {
    let kept = std::env::args().nth(1);
    let only = std::env::args().nth(2);
    let temp = tempfile::tempdir().unwrap();
    let dir = kept
        .as_ref()
        .map_or_else(|| temp.path().to_path_buf(), std::path::PathBuf::from);
    if dir.join(".git").is_dir() {
        println!("repository: {}", dir.display());
    } else {
        std::fs::create_dir_all(&dir).unwrap();
        let start = Instant::now();
        generate(&dir, COMMITS);
        println!(
            "repository: {COMMITS} commits, generated in {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    table(&dir, only.as_deref());
    // fast-import stores each version as a delta on the one before, so reading history newest
    // first resolves a long chain each time; a pack git writes keeps the newest whole, as a clone
    // or any repository git has packed has it.
    let out = git_command(&dir, &["repack", "-q", "-a", "-d", "-f"])
        .output()
        .unwrap();
    assert!(out.status.success(), "git repack");
    println!("after git repack -a -d -f:");
    table(&dir, only.as_deref());
}

fn table(dir: &Path, only: Option<&str>) {
    println!(
        "{:<24} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7} {:>6} {:>6}",
        "question", "cpu ms", "git cpu", "ratio", "wall ms", "git wall", "ratio", "lines", "git's"
    );
    for case in cases()
        .into_iter()
        .filter(|c| only.is_none_or(|o| c.name.starts_with(o)))
    {
        let (ours_wall, ours_cpu, ours) = time(|| (case.ours)(dir));
        let (git_wall, git_cpu, theirs) = time(|| {
            let out = git_command(dir, case.git).output().unwrap();
            assert!(out.status.success(), "git {:?}", case.git);
            out.stdout.iter().filter(|b| **b == b'\n').count()
        });
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{:<24} {:>9.2} {:>9.2} {:>7.2} {:>9.2} {:>9.2} {:>7.2} {:>6} {:>6}",
            case.name,
            ms(ours_cpu),
            ms(git_cpu),
            ours_cpu.as_secs_f64() / git_cpu.as_secs_f64(),
            ms(ours_wall),
            ms(git_wall),
            ours_wall.as_secs_f64() / git_wall.as_secs_f64(),
            ours,
            theirs
        );
    }
}
