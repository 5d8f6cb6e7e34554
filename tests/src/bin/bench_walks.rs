//! A benchmark (not a test) of three bounds of issue 22's findings 7 and 8, each over real stdio
//! against the release binary with the fake model planning the calls:
//!
//! 1. **walks**: `list_files` with a pattern that matches nothing (`*.zqxjkv`) over generated
//!    trees of 50,000 and 200,000 empty files (100 to a directory, three levels), with the default
//!    caps (`search.maxFiles` 20,000, `search.maxSeconds` 10) and with both lifted, interleaved with
//!    `find <dir> -name '*.zqxjkv'` and, where installed, `rg --files -uu -g '*.zqxjkv' <dir>`. The
//!    tool's time is the turn's wall time less the time the fake model spent answering (as `bench`
//!    counts it), so it includes one planner round besides the walk; what it answered (complete, or
//!    partial and which cap) is read from the result the planner was sent.
//! 2. **sessions**: the server's resident size (`VmRSS`) after 1,000 sessions each with one short
//!    turn, (a) never ended and (b) each ended with `bravebot/session/end` after its turn, measured
//!    from a point after 20 warm-up sessions of the same kind; and, for (a), once all 1,000 have
//!    been ended afterwards.
//! 3. **reads for a check**: `read_file` of a 10 MiB binary file and a 10 MiB text file (over the
//!    4 MiB read bound), a 4 MiB binary and a 4 MiB text file (within it, over the check's 256 KiB
//!    budget) and a 200 KiB text file (within both, so it is checked): the bytes of every request
//!    the check endpoint received, the turn's wall and driver time and the server's peak `VmHWM`.
//!
//! Every figure is the median of `RUNS` runs, each in a fresh server; the runs of the cases
//! alternate. `BRAVEBOT_BASELINE_BIN` names a second binary (an older build) run alternately with
//! the first in parts 1 and 3, and in part 2 if it knows `bravebot/session/end` (else (b) is
//! reported as refused). `BENCH_WALKS_ONLY=walks|sessions|reads` runs one part.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_walks
//! ```
//!
//! The binary is `target/release/bravebot` beside this program, or `BRAVEBOT_BIN`.
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use bravebot_tests::measure::proc_status_kib;
use serde_json::json;

const RUNS: usize = 5;
const NOTHING: &str = "*.zqxjkv";
/// Files to a directory, and directories to a directory above them, in the generated trees.
const FILES_PER_DIR: usize = 100;
const DIRS_PER_DIR: usize = 10;
const TREES: &[(&str, usize)] = &[("t50k", 50_000), ("t200k", 200_000)];
const SESSIONS: usize = 1_000;
const WARM_UP_SESSIONS: usize = 20;
/// Settings with the walk's caps lifted far past the trees.
const LIFTED: &str = r#"{"search": {"maxFiles": 100000000, "maxSeconds": 3600}}"#;

fn main() {
    let mut binaries: Vec<PathBuf> = vec![bravebot_binary()];
    if let Some(baseline) = std::env::var_os("BRAVEBOT_BASELINE_BIN") {
        binaries.push(PathBuf::from(baseline));
    }
    if !binaries[0].to_string_lossy().contains("release") {
        eprintln!(
            "warning: measuring {}, which does not look like a release build; \
             run with --release or set BRAVEBOT_BIN",
            binaries[0].display()
        );
    }
    for (i, b) in binaries.iter().enumerate() {
        println!(
            "binary {}: {}",
            if i == 0 { "now" } else { "baseline" },
            b.display()
        );
    }
    println!("runs: median of {RUNS}, each in a fresh server, cases alternating");
    let only = std::env::var("BENCH_WALKS_ONLY").ok();
    let part = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if part("walks") {
        walks(&binaries);
    }
    if part("sessions") {
        sessions(&binaries);
    }
    if part("reads") {
        reads(&binaries);
    }
}

// ---------------------------------------------------------------------------------------------
// 1. list_files against find and rg

/// What one `list_files` turn cost and answered.
struct Listing {
    driver: Duration,
    peak_kib: Option<u64>,
    answer: String,
}

fn walks(binaries: &[PathBuf]) {
    let workspace = tempfile::tempdir().expect("create a workspace");
    for &(name, files) in TREES {
        let began = Instant::now();
        make_tree(&workspace.path().join(name), files);
        eprintln!(
            "made {name}: {files} files in {:.1} s",
            began.elapsed().as_secs_f64()
        );
    }
    let rg = Command::new("rg").arg("--version").output().is_ok();
    if !rg {
        eprintln!("warning: rg is not installed; timing find alone");
    }
    println!();
    println!(
        "1. list_files pattern {NOTHING} (matches nothing) against find -name and rg --files -g"
    );
    let load_before = load();
    // Per tree: for each binary, default and lifted caps; then find and rg.
    let caps: [(&str, Option<&str>); 2] = [("default", None), ("lifted", Some(LIFTED))];
    let mut tool: Vec<Vec<Vec<Listing>>> = TREES
        .iter()
        .map(|_| {
            (0..binaries.len() * caps.len())
                .map(|_| Vec::new())
                .collect()
        })
        .collect();
    let mut reference: Vec<[Vec<Duration>; 2]> = TREES.iter().map(|_| Default::default()).collect();
    for round in 0..=RUNS {
        for (t, &(name, _)) in TREES.iter().enumerate() {
            let dir = workspace.path().join(name);
            for (b, binary) in binaries.iter().enumerate() {
                for (c, (_, settings)) in caps.iter().enumerate() {
                    let listing = list_turn(binary, workspace.path(), name, *settings);
                    if round > 0 {
                        tool[t][b * caps.len() + c].push(listing);
                    }
                }
            }
            let found = timed(|| {
                let out = Command::new("find")
                    .arg(&dir)
                    .args(["-name", NOTHING])
                    .output()
                    .expect("run find");
                assert!(out.stdout.is_empty(), "find matched nothing");
            });
            let ripped = rg.then(|| {
                timed(|| {
                    let out = Command::new("rg")
                        .args(["--files", "-uu", "-g", NOTHING])
                        .arg(&dir)
                        .output()
                        .expect("run rg");
                    assert!(out.stdout.is_empty(), "rg matched nothing");
                })
            });
            if round > 0 {
                reference[t][0].push(found);
                if let Some(r) = ripped {
                    reference[t][1].push(r);
                }
            }
        }
    }
    println!(
        "{:<7} {:<9} {:<8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}  answered",
        "tree", "binary", "caps", "driver ms", "peak MiB", "find ms", "rg ms", "/find", "/rg"
    );
    for (t, &(name, _)) in TREES.iter().enumerate() {
        let [find_t, rg_t] = reference[t].clone().map(median);
        for (b, _) in binaries.iter().enumerate() {
            for (c, (cap_name, _)) in caps.iter().enumerate() {
                let runs = &tool[t][b * caps.len() + c];
                let driver = median(runs.iter().map(|l| l.driver).collect());
                let peak = median_u64(runs.iter().filter_map(|l| l.peak_kib).collect());
                let answer = runs.last().map_or("-", |l| l.answer.as_str());
                println!(
                    "{:<7} {:<9} {:<8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}  {answer}",
                    name,
                    if b == 0 { "now" } else { "baseline" },
                    cap_name,
                    ms(driver),
                    peak.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
                    ms(find_t),
                    ms(rg_t),
                    ratio(driver, find_t),
                    ratio(driver, rg_t),
                );
            }
        }
    }
    println!(
        "load average (1 min): {load_before} before, {} after",
        load()
    );
}

/// A tree of `files` empty files, [`FILES_PER_DIR`] to a directory, under `root`.
fn make_tree(root: &Path, files: usize) {
    let leaves = files.div_ceil(FILES_PER_DIR);
    for leaf in 0..leaves {
        let dir = root
            .join(format!("d{:03}", leaf / DIRS_PER_DIR))
            .join(format!("e{:02}", leaf % DIRS_PER_DIR));
        std::fs::create_dir_all(&dir).expect("create a directory of the tree");
        let in_this = FILES_PER_DIR.min(files - leaf * FILES_PER_DIR);
        for f in 0..in_this {
            std::fs::File::create(dir.join(format!("f{f:03}.txt"))).expect("create a file");
        }
    }
}

/// One turn whose planner lists `directory` with [`NOTHING`] and then answers.
fn list_turn(binary: &Path, workspace: &Path, directory: &str, settings: Option<&str>) -> Listing {
    let script = vec![
        Reply::tool_call_with_id(
            "call_list",
            "list_files",
            json!({ "directory": directory, "pattern": NOTHING }),
        ),
        Reply::text("Nothing matched."),
    ];
    let model = FakeModel::start_with(move |s| s.planner(script));
    let mut options = LspOptions::new(workspace)
        .binary(binary)
        .timeout(Duration::from_secs(600))
        .model_url(&model.url());
    if let Some(settings) = settings {
        options = options.home_file(".bravebot/settings.json", settings);
    }
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let session = client.new_session();
    let (wall, result) = prompt(&client, &session, "Is there any .zqxjkv file?");
    if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") {
        eprintln!("error: the list turn ended with {result:?}; its figures would mislead");
        std::process::exit(1);
    }
    let peak_kib = proc_status_kib(client.pid(), "VmHWM");
    client.shutdown();
    let answer = describe_listing(&model.tool_result("call_list"));
    Listing {
        driver: wall.saturating_sub(model_time(&model)),
        peak_kib,
        answer,
    }
}

/// What a listing said, in a few words: whether it is whole, and if not which cap stopped it.
fn describe_listing(result: &str) -> String {
    let stop = if result.contains("(search.maxFiles)") {
        "partial: search.maxFiles"
    } else if result.contains("search.maxSeconds") {
        "partial: search.maxSeconds"
    } else if result.contains("[partial") || result.contains("[truncated") {
        "partial: other"
    } else {
        "complete"
    };
    let files = if result.contains("(no file matched the pattern)") {
        "no file matched"
    } else {
        "some files listed"
    };
    format!("{stop}, {files}")
}

// ---------------------------------------------------------------------------------------------
// 2. sessions kept and ended

/// Resident sizes of one server over a run of sessions.
struct Kept {
    /// After the warm-up sessions.
    before: u64,
    /// After [`SESSIONS`] more.
    after: u64,
    /// After ending every session still held (only where they were not ended as they went).
    ended_late: Option<u64>,
    /// After [`SESSIONS`] more kept sessions that followed the late ending.
    again: Option<u64>,
    /// Whether `bravebot/session/end` was answered.
    end_known: bool,
    per_session: Duration,
}

fn sessions(binaries: &[PathBuf]) {
    let workspace = tempfile::tempdir().expect("create a workspace");
    std::fs::write(workspace.path().join("notes.md"), "a note\n").expect("write a file");
    println!();
    println!(
        "2. resident size over {SESSIONS} sessions of one short turn each (after {WARM_UP_SESSIONS} warm-up sessions)"
    );
    let load_before = load();
    let mut runs: Vec<[Vec<Kept>; 2]> = binaries.iter().map(|_| Default::default()).collect();
    for _ in 0..RUNS {
        for (b, binary) in binaries.iter().enumerate() {
            for (c, end) in [false, true].into_iter().enumerate() {
                runs[b][c].push(session_run(binary, workspace.path(), end));
            }
        }
    }
    println!(
        "{:<9} {:<26} {:>11} {:>11} {:>13} {:>14} {:>16} {:>12}",
        "binary",
        "sessions",
        "before MiB",
        "after MiB",
        "KiB/session",
        "ended late MiB",
        "1,000 more MiB",
        "ms/session"
    );
    for (b, _) in binaries.iter().enumerate() {
        let mut per = [None, None];
        for (c, case) in ["(a) never ended", "(b) each ended after it"]
            .iter()
            .enumerate()
        {
            let kept = &runs[b][c];
            let before = median_u64(kept.iter().map(|k| k.before).collect());
            let after = median_u64(kept.iter().map(|k| k.after).collect());
            let growth = median_u64(
                kept.iter()
                    .map(|k| k.after.saturating_sub(k.before))
                    .collect(),
            );
            let late = median_u64(kept.iter().filter_map(|k| k.ended_late).collect());
            let again = median_u64(kept.iter().filter_map(|k| k.again).collect());
            let time = median(kept.iter().map(|k| k.per_session).collect());
            let known = kept.iter().all(|k| k.end_known);
            per[c] = growth.map(|g| g as f64 / SESSIONS as f64);
            let mib =
                |k: Option<u64>| k.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0));
            println!(
                "{:<9} {:<26} {:>11} {:>11} {:>13} {:>14} {:>16} {:>12}{}",
                if b == 0 { "now" } else { "baseline" },
                case,
                mib(before),
                mib(after),
                per[c].map_or("-".into(), |k| format!("{k:.1}")),
                mib(late),
                mib(again),
                time.map_or("-".into(), |t| format!("{:.2}", t.as_secs_f64() * 1e3)),
                if known { "" } else { "  (session/end refused)" },
            );
        }
        if let [Some(kept), Some(ended)] = per {
            println!(
                "{:<9} ended / never ended: {}",
                "",
                if kept > 0.0 {
                    format!("{:.3}x", ended / kept)
                } else {
                    "-".into()
                }
            );
        }
    }
    println!(
        "load average (1 min): {load_before} before, {} after",
        load()
    );
}

/// One server: warm-up sessions, then [`SESSIONS`] sessions of one turn, ended after their turn
/// when `end` is set; the resident size before and after, and for sessions kept, after ending them.
fn session_run(binary: &Path, workspace: &Path, end: bool) -> Kept {
    let total = WARM_UP_SESSIONS + 2 * SESSIONS;
    let script: Vec<Reply> = (0..total).map(|_| Reply::text("Noted.")).collect();
    let model = FakeModel::start_with(move |s| s.planner(script));
    let client = LspClient::start(
        LspOptions::new(workspace)
            .binary(binary)
            .timeout(Duration::from_secs(120))
            .model_url(&model.url()),
    );
    client.initialize(json!({}));
    let mut held = Vec::new();
    let mut end_known = true;
    let mut one = |client: &LspClient, held: &mut Vec<String>| {
        let session = client.new_session();
        let (_, result) = prompt(client, &session, "Remember that the build is green.");
        if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") {
            eprintln!("error: a short turn ended with {result:?}; its figures would mislead");
            std::process::exit(1);
        }
        if end {
            end_known &= client
                .request("bravebot/session/end", json!({ "sessionId": session }))
                .is_ok();
        } else {
            held.push(session);
        }
    };
    for _ in 0..WARM_UP_SESSIONS {
        one(&client, &mut held);
    }
    client.forget_history();
    let before = settled_rss(&client).unwrap_or(0);
    let began = Instant::now();
    for i in 0..SESSIONS {
        one(&client, &mut held);
        if i % 100 == 99 {
            client.forget_history();
        }
    }
    let per_session = began.elapsed() / u32::try_from(SESSIONS).unwrap_or(u32::MAX);
    let after = settled_rss(&client).unwrap_or(0);
    // Memory a process frees mostly stays its own (the allocator keeps it for reuse), so ending
    // the kept sessions shows as room the next thousand take, not as a smaller resident size.
    let (ended_late, again) = if end {
        (None, None)
    } else {
        for session in held.drain(..) {
            let _ = client.request("bravebot/session/end", json!({ "sessionId": session }));
        }
        client.forget_history();
        let late = settled_rss(&client);
        for i in 0..SESSIONS {
            one(&client, &mut held);
            if i % 100 == 99 {
                client.forget_history();
            }
        }
        (late, settled_rss(&client))
    };
    client.shutdown();
    Kept {
        before,
        after,
        ended_late,
        again,
        end_known,
        per_session,
    }
    .validated()
}

impl Kept {
    fn validated(self) -> Kept {
        if self.before == 0 || self.after == 0 {
            eprintln!("error: no VmRSS in /proc for the server");
            std::process::exit(1);
        }
        self
    }
}

/// `VmRSS` once the server has had a moment to finish what the last request left (records
/// written, tasks ended).
fn settled_rss(client: &LspClient) -> Option<u64> {
    std::thread::sleep(Duration::from_millis(300));
    proc_status_kib(client.pid(), "VmRSS")
}

// ---------------------------------------------------------------------------------------------
// 3. reads for a check

/// What one `read_file` turn cost, sent and answered.
struct Read {
    wall: Duration,
    driver: Duration,
    check_bytes: usize,
    checks: usize,
    peak_kib: Option<u64>,
    idle_kib: Option<u64>,
    answer: String,
}

fn reads(binaries: &[PathBuf]) {
    const MIB: usize = 1 << 20;
    let workspace = tempfile::tempdir().expect("create a workspace");
    let cases: [(&str, usize, bool); 5] = [
        ("bin10.dat", 10 * MIB, false),
        ("text10.txt", 10 * MIB, true),
        ("bin4.dat", 4 * MIB, false),
        ("text4.txt", 4 * MIB, true),
        ("text200k.txt", 200 * 1024, true),
    ];
    for &(name, size, text) in &cases {
        std::fs::write(workspace.path().join(name), contents(size, text)).expect("write a file");
    }
    println!();
    println!(
        "3. read_file of a file nobody vouched for: what reaches the check endpoint (budget 256 KiB, read bound 4 MiB)"
    );
    let load_before = load();
    let mut runs: Vec<Vec<Vec<Read>>> = binaries
        .iter()
        .map(|_| cases.iter().map(|_| Vec::new()).collect())
        .collect();
    for _ in 0..RUNS {
        for (b, binary) in binaries.iter().enumerate() {
            for (c, &(name, ..)) in cases.iter().enumerate() {
                runs[b][c].push(read_turn(binary, workspace.path(), name));
            }
        }
    }
    println!(
        "{:<9} {:<13} {:>9} {:>7} {:>13} {:>8} {:>10} {:>9} {:>9}  answered",
        "binary",
        "file",
        "size",
        "checks",
        "check bytes",
        "wall ms",
        "driver ms",
        "start MiB",
        "peak MiB"
    );
    for (b, _) in binaries.iter().enumerate() {
        for (c, &(name, size, _)) in cases.iter().enumerate() {
            let r = &runs[b][c];
            let mib =
                |k: Option<u64>| k.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0));
            println!(
                "{:<9} {:<13} {:>9} {:>7} {:>13} {:>8} {:>10} {:>9} {:>9}  {}",
                if b == 0 { "now" } else { "baseline" },
                name,
                size,
                median_u64(r.iter().map(|x| x.checks as u64).collect()).unwrap_or(0),
                median_u64(r.iter().map(|x| x.check_bytes as u64).collect()).unwrap_or(0),
                ms(median(r.iter().map(|x| x.wall).collect())),
                ms(median(r.iter().map(|x| x.driver).collect())),
                mib(median_u64(r.iter().filter_map(|x| x.idle_kib).collect())),
                mib(median_u64(r.iter().filter_map(|x| x.peak_kib).collect())),
                r.last().map_or("-", |x| x.answer.as_str()),
            );
        }
    }
    println!(
        "load average (1 min): {load_before} before, {} after",
        load()
    );
}

/// `size` bytes of lines of text, or of bytes that hold NULs throughout (not text).
fn contents(size: usize, text: bool) -> Vec<u8> {
    if text {
        let line = b"a line of ordinary text in a large file, nothing to see here.\n";
        line.iter().copied().cycle().take(size).collect()
    } else {
        // Every byte value, over and over, as in an object file or an archive.
        (0..size)
            .map(|i| (i.wrapping_mul(31) % 256) as u8)
            .collect()
    }
}

fn read_turn(binary: &Path, workspace: &Path, file: &str) -> Read {
    let script = vec![
        Reply::tool_call_with_id(
            "call_read",
            "read_file",
            json!({ "path": file, "why": "benchmark" }),
        ),
        Reply::text("Read."),
    ];
    // Every check is answered as a competent screen would answer text with nothing planted.
    let model =
        FakeModel::start_with(move |s| s.planner(script).competent_check("canary-bench-walks"));
    let client = LspClient::start(
        LspOptions::new(workspace)
            .binary(binary)
            .timeout(Duration::from_secs(300))
            .model_url(&model.url()),
    );
    client.initialize(json!({}));
    let session = client.new_session();
    let idle_kib = proc_status_kib(client.pid(), "VmHWM");
    let (wall, result) = prompt(&client, &session, &format!("Read {file}."));
    if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") {
        eprintln!("error: the read turn ended with {result:?}; its figures would mislead");
        std::process::exit(1);
    }
    let peak_kib = proc_status_kib(client.pid(), "VmHWM");
    client.shutdown();
    let checks = model.requests_for("check");
    Read {
        wall,
        driver: wall.saturating_sub(model_time(&model)),
        check_bytes: checks.iter().map(|r| r.raw_body.len()).sum(),
        checks: checks.len(),
        peak_kib,
        idle_kib,
        answer: describe_read(&model.tool_result("call_read")),
    }
}

/// What a read told the planner, in a few words.
fn describe_read(result: &str) -> String {
    if result.contains("was not read") && result.contains("larger than") {
        "not read: over the read bound".into()
    } else if result.contains("larger than the check reads") {
        "held back: over the check budget".into()
    } else if result.contains("not text") {
        "held back: not text".into()
    } else if result.contains("quarantined") {
        "held back: other".into()
    } else {
        "read: checked and shown".into()
    }
}

// ---------------------------------------------------------------------------------------------
// Shared

/// Sends one prompt and waits for its answer; the wall time and the answer.
fn prompt(
    client: &LspClient,
    session: &str,
    text: &str,
) -> (Duration, Result<serde_json::Value, serde_json::Value>) {
    let began = Instant::now();
    let result = client.request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": text }),
    );
    (began.elapsed(), result)
}

/// The time the fake model spent answering, summed over every request it received.
fn model_time(model: &FakeModel) -> Duration {
    model.requests().iter().map(|r| r.duration).sum()
}

fn timed(run: impl FnOnce()) -> Duration {
    let began = Instant::now();
    run();
    began.elapsed()
}

/// The one-minute load average, as `uptime` shows it.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}

fn median(mut values: Vec<Duration>) -> Option<Duration> {
    values.sort();
    values.get(values.len() / 2).copied()
}

fn median_u64(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.1}", d.as_secs_f64() * 1e3))
}

fn ratio(a: Option<Duration>, b: Option<Duration>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if !b.is_zero() => format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64()),
        _ => "-".into(),
    }
}
