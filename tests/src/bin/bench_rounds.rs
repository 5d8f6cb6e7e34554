//! A benchmark of the driver's cost per round as a turn grows (not a test).
//!
//! A turn whose planner calls `read_file` on a small trusted file N times and then answers, for
//! N = 10 and N = 400, in a fresh `bravebot` each: the turn's wall time less the time the fake
//! model spent answering, divided by N. `BRAVEBOT_BASELINE_BIN` names a second binary (an older
//! build) run alternately with the first; medians of `RUNS` runs each are printed, with the
//! ratio of the 400-round cost to the 10-round one.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_rounds
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use serde_json::json;

const RUNS: usize = 5;
const ROUNDS: [usize; 2] = [10, 400];
const SMALL_FILE: &str = "small.txt";

fn main() {
    let mut binaries: Vec<PathBuf> = vec![bravebot_binary()];
    if let Some(baseline) = std::env::var_os("BRAVEBOT_BASELINE_BIN") {
        binaries.push(PathBuf::from(baseline));
    }
    let workspace = tempfile::tempdir().expect("create a workspace");
    let text: String = (1..=20)
        .map(|n| format!("line {n} of a small trusted file\n"))
        .collect();
    std::fs::write(workspace.path().join(SMALL_FILE), text).expect("write the small file");
    // results[binary][rounds] = per-round costs
    let mut results = vec![vec![Vec::new(); ROUNDS.len()]; binaries.len()];
    for _ in 0..RUNS {
        for (b, binary) in binaries.iter().enumerate() {
            for (r, n) in ROUNDS.iter().enumerate() {
                results[b][r].push(per_round(binary, workspace.path(), *n));
            }
        }
    }
    println!("driver time per round, median of {RUNS} alternating runs");
    for (binary, costs) in binaries.iter().zip(results) {
        let medians: Vec<Duration> = costs
            .into_iter()
            .map(|mut c| {
                c.sort();
                c[c.len() / 2]
            })
            .collect();
        println!(
            "{}: {} rounds {:.2} ms, {} rounds {:.2} ms, ratio {:.2}x",
            binary.display(),
            ROUNDS[0],
            medians[0].as_secs_f64() * 1000.0,
            ROUNDS[1],
            medians[1].as_secs_f64() * 1000.0,
            medians[1].as_secs_f64() / medians[0].as_secs_f64()
        );
    }
}

fn per_round(binary: &Path, workspace: &Path, n: usize) -> Duration {
    let mut script: Vec<Reply> = (0..n)
        .map(|i| {
            Reply::tool_call_with_id(
                &format!("call_{i}"),
                "read_file",
                json!({ "path": SMALL_FILE, "why": "benchmark" }),
            )
        })
        .collect();
    script.push(Reply::text("Done."));
    let model = FakeModel::start_with(move |s| s.planner(script));
    let options = LspOptions::new(workspace)
        .binary(binary)
        .timeout(Duration::from_secs(300))
        .home_file(
            ".bravebot/settings.json",
            format!("{{\"maxRounds\": {}}}", n + 10),
        )
        .model_url(&model.url());
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let session = client.new_session();
    let began = Instant::now();
    let result = client.request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": "Read the file again and again.", "files": [SMALL_FILE] }),
    );
    let wall = began.elapsed();
    client.shutdown();
    if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") {
        eprintln!("error: the {n}-round turn ended with {result:?}");
        std::process::exit(1);
    }
    let model_time: Duration = model.requests().iter().map(|r| r.duration).sum();
    wall.saturating_sub(model_time) / u32::try_from(n).unwrap_or(u32::MAX)
}
