//! A benchmark of streamed text (not a test): a planner that answers with 1 MB of text in 4-byte
//! deltas, as fast as the connection takes them.
//!
//! Each run starts a fresh `bravebot`, prompts once and measures, over real stdio:
//!
//! - **turn**: from the prompt being sent to its response;
//! - **first text**: from the model server writing the first delta to the client reading the
//!   first `agentText` update (both clocks are this process's);
//! - **peak RSS**: `VmHWM` of the server after the turn;
//! - **updates**: how many `agentText` notifications carried the text (which must arrive whole).
//!
//! `BRAVEBOT_BASELINE_BIN` names a second binary (an older build, say) to run alternately with
//! the first; medians of `RUNS` runs each are printed.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_stream
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bravebot_tests::lsp_client::{LspClient, LspOptions, SESSION_UPDATE, bravebot_binary};
use bravebot_tests::measure::proc_status_kib;
use serde_json::json;

const RUNS: usize = 5;
const DELTA: &str = "abc ";
const TEXT_BYTES: usize = 1_000_000;

struct Run {
    turn: Duration,
    first_text: Duration,
    peak_kib: u64,
    updates: usize,
}

fn main() {
    let mut binaries: Vec<PathBuf> = vec![bravebot_binary()];
    if let Some(baseline) = std::env::var_os("BRAVEBOT_BASELINE_BIN") {
        binaries.push(PathBuf::from(baseline));
    }
    let workspace = tempfile::tempdir().expect("create a workspace");
    let mut runs: Vec<Vec<Run>> = binaries.iter().map(|_| Vec::new()).collect();
    for _ in 0..RUNS {
        for (binary, runs) in binaries.iter().zip(runs.iter_mut()) {
            runs.push(run(binary, workspace.path()));
        }
    }
    println!(
        "1 MB of {}-byte deltas, median of {RUNS} alternating runs",
        DELTA.len()
    );
    println!(
        "{:<40} {:>10} {:>12} {:>10} {:>9}",
        "binary", "turn", "first text", "peak RSS", "updates"
    );
    for (binary, runs) in binaries.iter().zip(runs.iter_mut()) {
        let turn = median(runs.iter().map(|r| r.turn).collect());
        let first = median(runs.iter().map(|r| r.first_text).collect());
        let peak = median(runs.iter().map(|r| r.peak_kib).collect());
        let updates = median(runs.iter().map(|r| r.updates).collect());
        println!(
            "{:<40} {:>7.0} ms {:>9.2} ms {:>6.1} MiB {:>9}",
            binary.display(),
            turn.as_secs_f64() * 1000.0,
            first.as_secs_f64() * 1000.0,
            peak as f64 / 1024.0,
            updates
        );
    }
}

fn median<T: Ord + Copy>(mut values: Vec<T>) -> T {
    values.sort();
    values[values.len() / 2]
}

fn run(binary: &Path, workspace: &Path) -> Run {
    let first_write = Arc::new(Mutex::new(None));
    let url = start_server(Arc::clone(&first_write));
    let options = LspOptions::new(workspace)
        .binary(binary)
        .timeout(Duration::from_secs(300))
        .model_url(&url);
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let session = client.new_session();
    let began = Instant::now();
    let pending = client.send_request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": "Say a lot." }),
    );
    let first = client.next_notification(SESSION_UPDATE);
    let first_seen = Instant::now();
    let result = client.response(pending);
    let turn = began.elapsed();
    if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn")
        || first["update"]["kind"] != "agentText"
    {
        eprintln!("error: the turn ended with {result:?}, first update {first}");
        std::process::exit(1);
    }
    // The turn's end is the last update; once it is in, every delta is.
    loop {
        let updates = client.updates(&session);
        if updates.iter().any(|u| u["kind"] == "turnEnded") {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let updates = client.updates(&session);
    let texts: Vec<&str> = updates
        .iter()
        .filter(|u| u["kind"] == "agentText")
        .filter_map(|u| u["delta"].as_str())
        .collect();
    let received: usize = texts.iter().map(|t| t.len()).sum();
    if received != TEXT_BYTES {
        eprintln!("error: {received} bytes of text arrived, not {TEXT_BYTES}");
        std::process::exit(1);
    }
    let peak_kib = proc_status_kib(client.pid(), "VmHWM").unwrap_or(0);
    client.shutdown();
    let written = first_write
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .unwrap_or(began);
    Run {
        turn,
        first_text: first_seen.saturating_duration_since(written),
        peak_kib,
        updates: texts.len(),
    }
}

/// Answers one planner request with the text streamed as server-sent events.
fn start_server(first_write: Arc<Mutex<Option<Instant>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
    let addr = listener.local_addr().expect("the model server's address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let first_write = Arc::clone(&first_write);
            std::thread::spawn(move || serve(stream, &first_write));
        }
    });
    format!("http://{addr}/v1")
}

fn serve(stream: TcpStream, first_write: &Mutex<Option<Instant>>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    let event = |content: serde_json::Value, finish: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "bench", "object": "chat.completion.chunk", "model": "bench",
                "choices": [{"index": 0, "delta": content, "finish_reason": finish}]})
        )
    };
    let one = event(json!({"content": DELTA}), serde_json::Value::Null);
    let first = event(
        json!({"role": "assistant", "content": DELTA}),
        serde_json::Value::Null,
    );
    if writer.write_all(first.as_bytes()).is_err() {
        return;
    }
    *first_write
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
    let mut batch = String::new();
    for _ in 1..TEXT_BYTES / DELTA.len() {
        batch.push_str(&one);
        if batch.len() > 64 * 1024 {
            if writer.write_all(batch.as_bytes()).is_err() {
                return;
            }
            batch.clear();
        }
    }
    batch.push_str(&event(json!({}), json!("stop")));
    batch.push_str("data: [DONE]\n\n");
    let _ = writer.write_all(batch.as_bytes());
}
