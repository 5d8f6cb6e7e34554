//! A benchmark of the session record (not a test): a 200-turn session whose every reply is 4 KB
//! of text, with a context of a million tokens so nothing is compacted (the record reaches about
//! 1 MB), and what writing its record costs the server.
//!
//! Each run starts a fresh `bravebot` over real stdio with a model that answers at once, and
//! measures:
//!
//! - **written**: the bytes the server wrote (`wchar` of `/proc/<pid>/io`: its record, its audit
//!   trail, its requests to the model and its replies on stdout) over all the turns, and in the
//!   last turn alone;
//! - **record**: the size of `session.json` once the session ends;
//! - **turns**: the wall time of all the turns.
//!
//! The requests, the replies on stdout and the audit trail are the same for any build, so the difference
//! between two builds' bytes written is their records'. `BRAVEBOT_BASELINE_BIN` names a second
//! binary (an older build, say) to run alternately with the first; medians of `RUNS` runs each are
//! printed.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_record
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use serde_json::json;

const RUNS: usize = 3;
const TURNS: usize = 200;
const REPLY_BYTES: usize = 4096;

struct Run {
    written: u64,
    last_turn: u64,
    record: u64,
    turns: Duration,
}

fn main() {
    let mut binaries: Vec<PathBuf> = vec![bravebot_binary()];
    if let Some(baseline) = std::env::var_os("BRAVEBOT_BASELINE_BIN") {
        binaries.push(PathBuf::from(baseline));
    }
    let mut runs: Vec<Vec<Run>> = binaries.iter().map(|_| Vec::new()).collect();
    for _ in 0..RUNS {
        for (binary, runs) in binaries.iter().zip(runs.iter_mut()) {
            runs.push(run(binary));
        }
    }
    println!("{TURNS} turns of {REPLY_BYTES}-byte replies, median of {RUNS} alternating runs");
    println!(
        "{:<40} {:>14} {:>14} {:>12} {:>10}",
        "binary", "written", "last turn", "record", "turns"
    );
    for (binary, runs) in binaries.iter().zip(runs.iter_mut()) {
        let written = median(runs.iter().map(|r| r.written).collect());
        let last = median(runs.iter().map(|r| r.last_turn).collect());
        let record = median(runs.iter().map(|r| r.record).collect());
        let turns = median(runs.iter().map(|r| r.turns).collect());
        println!(
            "{:<40} {:>10.1} MiB {:>10.1} KiB {:>8.1} KiB {:>7.0} ms",
            binary.display(),
            written as f64 / (1024.0 * 1024.0),
            last as f64 / 1024.0,
            record as f64 / 1024.0,
            turns.as_secs_f64() * 1000.0
        );
    }
}

fn median<T: Ord + Copy>(mut values: Vec<T>) -> T {
    values.sort();
    values[values.len() / 2]
}

/// Bytes the process has written through `write` and its kin so far.
fn written_by(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("wchar:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

fn run(binary: &Path) -> Run {
    let workspace = tempfile::tempdir().expect("create a workspace");
    let home = tempfile::tempdir().expect("create a home");
    let replies: Vec<Reply> = (0..TURNS)
        .map(|n| {
            let line = format!("answer {n}: the build is fixed and the tests pass. ");
            Reply::text(line.repeat(REPLY_BYTES / line.len() + 1)[..REPLY_BYTES].to_string())
        })
        .collect();
    let model = FakeModel::start(replies);
    let client = LspClient::start(
        LspOptions::new(workspace.path())
            .binary(binary)
            .home_dir(home.path())
            .home_file(
                ".bravebot/settings.json",
                json!({"model": {"contextTokens": 1_000_000}}).to_string(),
            )
            .timeout(Duration::from_secs(300))
            .model_url(&model.url()),
    );
    client.initialize(json!({}));
    let session = client.new_session();
    let pid = client.pid();
    let start = written_by(pid);
    let began = Instant::now();
    let mut before_last = start;
    for n in 0..TURNS {
        if n + 1 == TURNS {
            before_last = written_by(pid);
        }
        let result = client.request(
            "bravebot/session/prompt",
            json!({"sessionId": session, "text": format!("prompt {n}: fix the build"), "files": []}),
        );
        if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") {
            eprintln!("error: turn {n} ended with {result:?}");
            std::process::exit(1);
        }
    }
    let turns = began.elapsed();
    let end = written_by(pid);
    let record = home
        .path()
        .join(".bravebot/sessions")
        .join(&session)
        .join("session.json");
    let record = std::fs::metadata(&record).map(|m| m.len()).unwrap_or(0);
    client.shutdown();
    Run {
        written: end - start,
        last_turn: end - before_last,
        record,
        turns,
    }
}
