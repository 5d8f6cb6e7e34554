//! A benchmark of the model connection against a server that writes a response's headers and
//! its body in two writes without `TCP_NODELAY` (not a test).
//!
//! Python's `http.server` with `HTTP/1.1`, and cpp-httplib as llama.cpp's server uses it, answer
//! that way. On a kept-alive connection the body then waits until the headers are acknowledged,
//! and the client's kernel delays that acknowledgement (40 ms on Linux). This binary serves an
//! OpenAI-compatible planner from such a server (std sockets, keep-alive, Nagle left on, headers
//! and body written apart) and, as the reference, from the same server writing each response in
//! one write. Each run is a turn of `ROUNDS` `read_file` rounds in a fresh `bravebot`; the two
//! servers alternate, `RUNS` times each, and the medians of the time per round are printed.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_stall
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use serde_json::json;

const ROUNDS: usize = 20;
const RUNS: usize = 5;
const SMALL_FILE: &str = "small.txt";

fn main() {
    let binary = bravebot_binary();
    let workspace = tempfile::tempdir().expect("create a workspace");
    std::fs::write(workspace.path().join(SMALL_FILE), "a small trusted file\n")
        .expect("write the small file");
    let mut split = Vec::new();
    let mut whole = Vec::new();
    for _ in 0..RUNS {
        split.push(run_turn(&binary, workspace.path(), true));
        whole.push(run_turn(&binary, workspace.path(), false));
    }
    let (split, whole) = (median(split), median(whole));
    println!("bravebot model connection: {}", binary.display());
    println!("{ROUNDS}-round turn, median of {RUNS} alternating runs, time per round");
    println!(
        "headers and body in two writes, no TCP_NODELAY  {:>10.2} ms",
        ms(split)
    );
    println!(
        "headers and body in one write (reference)       {:>10.2} ms",
        ms(whole)
    );
    println!(
        "ratio                                           {:>10.2}x",
        split.as_secs_f64() / whole.as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// One turn of [`ROUNDS`] rounds; the wall time of the prompt divided by the rounds.
fn run_turn(binary: &std::path::Path, workspace: &std::path::Path, split: bool) -> Duration {
    let server = start_server(split);
    let options = LspOptions::new(workspace)
        .binary(binary)
        .timeout(Duration::from_secs(120))
        .home_file(
            ".bravebot/settings.json",
            format!("{{\"maxRounds\": {}}}", ROUNDS + 10),
        )
        .model_url(&server.url);
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
    match &result {
        Ok(r) if r["stopReason"] == "endTurn" => {}
        other => {
            eprintln!("error: the turn ended with {other:?}; its figures would mislead");
            std::process::exit(1);
        }
    }
    wall / u32::try_from(ROUNDS).unwrap_or(u32::MAX)
}

struct Server {
    url: String,
}

/// A keep-alive HTTP/1.1 server on a thread per connection; the planner calls `read_file`
/// [`ROUNDS`] times and then answers. Every reply is one JSON body (no stream).
fn start_server(split: bool) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
    let addr = listener.local_addr().expect("the model server's address");
    let served = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let served = Arc::clone(&served);
            std::thread::spawn(move || serve(stream, &served, split));
        }
    });
    Server {
        url: format!("http://{addr}/v1"),
    }
}

fn serve(stream: TcpStream, served: &AtomicUsize, split: bool) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        let mut first = true;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if first {
                first = false;
                continue;
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
        let n = served.fetch_add(1, Ordering::SeqCst);
        let message = if n < ROUNDS {
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("call_{n}"), "type": "function",
                "function": {"name": "read_file",
                    "arguments": json!({"path": SMALL_FILE, "why": "benchmark"}).to_string()},
            }]})
        } else {
            json!({"role": "assistant", "content": "Done."})
        };
        let finish = if n < ROUNDS { "tool_calls" } else { "stop" };
        let reply = json!({
            "id": "bench", "object": "chat.completion", "model": "bench",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            reply.len()
        );
        let written = if split {
            writer
                .write_all(head.as_bytes())
                .and_then(|()| writer.write_all(reply.as_bytes()))
        } else {
            writer.write_all(format!("{head}{reply}").as_bytes())
        };
        if written.is_err() {
            return;
        }
    }
}
