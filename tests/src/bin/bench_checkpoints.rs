//! A benchmark of what checkpoints cost (not a test): the same turns with checkpoints on and off
//! (`checkpoints.enabled: false` in the home settings).
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_checkpoints
//! ```
//!
//! Two turns, each timed as the turn's wall time less the time the instant fake model spent
//! answering, median of [`RUNS`], every question approved at once:
//!
//! - **edit**: `edit_file` of one line in the middle of a 1 MiB file on disk;
//! - **run**: one `run` line (`touch d000/f*`, 1,000 files named by its glob) in a workspace of 100,000 files,
//!   which the checkpoint keeps before the line runs and walks for unnamed changes after it.
//!
//! The binary is `target/release/bravebot` beside this program, or `BRAVEBOT_BIN`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::path::Path;
use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspClient, LspOptions, bravebot_binary};
use serde_json::json;

const RUNS: usize = 5;
const WORKSPACE_FILES: usize = 100_000;

fn main() {
    let binary = bravebot_binary();
    if !binary.to_string_lossy().contains("release") {
        eprintln!(
            "warning: measuring {}, which does not look like a release build",
            binary.display()
        );
    }
    let big = tempfile::tempdir().expect("a workspace");
    let line = |n: usize| format!("line {n:07} of a one-mebibyte file, padded to a steady width\n");
    let text: String = (0..)
        .map(line)
        .scan(0usize, |size, l| {
            *size += l.len();
            (*size <= 1 << 20).then_some(l)
        })
        .collect();
    std::fs::write(big.path().join("big.txt"), &text).expect("written");
    let middle = line(text.lines().count() / 2);
    let middle = middle.trim_end().to_string();

    let wide = tempfile::tempdir().expect("a workspace");
    for n in 0..WORKSPACE_FILES {
        let dir = wide.path().join(format!("d{:03}", n / 1000));
        if n % 1000 == 0 {
            std::fs::create_dir_all(&dir).expect("made");
        }
        std::fs::write(dir.join(format!("f{n:06}.txt")), "x\n").expect("written");
    }
    // One directory holds the first thousand: a glob names them all (the compiler expands it).
    let touch_line = "touch d000/f*".to_string();

    println!("checkpoints: the same turn with checkpoints on and off (median of {RUNS})");
    for (name, dir, call) in [
        (
            "edit_file of one line in a 1 MiB file",
            big.path(),
            Reply::tool_call_with_id(
                "edit",
                "edit_file",
                json!({"path": "big.txt", "old_text": middle, "new_text": "changed", "why": "bench"}),
            ),
        ),
        (
            "run touching 1,000 files in 100,000",
            wide.path(),
            Reply::tool_call_with_id("run", "run", json!({"command": touch_line, "why": "bench"})),
        ),
    ] {
        let on = median(&binary, dir, &call, true, &text);
        let off = median(&binary, dir, &call, false, &text);
        println!(
            "  {name:<40} on {:>9.1} ms   off {:>9.1} ms   cost {:>8.1} ms",
            ms(on),
            ms(off),
            ms(on.saturating_sub(off))
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median driver time of [`RUNS`] turns making `call`, each in a fresh server.
fn median(binary: &Path, dir: &Path, call: &Reply, checkpoints: bool, big_text: &str) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            // Each run starts from the same files.
            if !dir.join("d000").exists() {
                std::fs::write(dir.join("big.txt"), big_text).expect("written");
            }
            one_turn(binary, dir, call.clone(), checkpoints)
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn one_turn(binary: &Path, dir: &Path, call: Reply, checkpoints: bool) -> Duration {
    let id = if dir.join("big.txt").exists() && !dir.join("d000").exists() {
        "edit"
    } else {
        "run"
    };
    let model = FakeModel::start(vec![Reply::text("warm"), call, Reply::text("done")]);
    let settings = json!({"checkpoints": {"enabled": checkpoints}}).to_string();
    let client = LspClient::start(
        LspOptions::new(dir)
            .binary(binary)
            .model_url(&model.url())
            .home_file(".bravebot/settings.json", settings)
            .timeout(Duration::from_secs(300)),
    );
    client.initialize(json!({}));
    let session = client.new_session();
    client.answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    let named: Vec<&str> = if id == "edit" {
        vec!["big.txt"]
    } else {
        Vec::new()
    };
    let prompt = |text: &str| {
        client
            .request(
                "bravebot/session/prompt",
                json!({"sessionId": session, "text": text, "files": named}),
            )
            .expect("a turn")
    };
    // The first turn asks the endpoint's model listing once; the clock starts after it.
    prompt("warm up");
    let answering = || -> Duration { model.requests().iter().map(|r| r.duration).sum() };
    let model_before = answering();
    let began = Instant::now();
    prompt("go");
    let took = began.elapsed();
    let model_time = answering().saturating_sub(model_before);
    let result = model.tool_result(id);
    assert!(
        !result.starts_with("refused")
            && !result.starts_with("error")
            && !result.contains("not changed"),
        "the call did not do its work: {result}"
    );
    client.shutdown();
    took.saturating_sub(model_time)
}
