//! The fake model as a process, for tests written in other languages (the Neovim plugin's Lua
//! suite): `fake_model_server SCRIPT.json REQUESTS.json`.
//!
//! `SCRIPT.json` maps roles to replies: `{"planner": [{"text": "hi"}, {"tool": "run", "id":
//! "call_run", "args": {...}}], "check": [{"text": "VERDICT: safe"}]}`; `{"error": 500, "message":
//! "boom"}` answers that one request with an HTTP error. The server's base URL is
//! printed as the first line of stdout; every request received so far (role and body) is written
//! to `REQUESTS.json` as it arrives. The server stops when stdin ends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fixture: failing loudly is the point.

use std::io::{Read, Write};
use std::time::Duration;

use bravebot_tests::fake_model::{FakeModel, Reply, Script};
use serde_json::{Value, json};

fn replies(script: &Value, role: &str) -> Vec<Reply> {
    let Some(items) = script.get(role).and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| match item.get("tool").and_then(Value::as_str) {
            _ if item.get("error").is_some() => Reply::error(
                item.get("error")
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok())
                    .unwrap_or(500),
                item.get("message").and_then(Value::as_str).unwrap_or("error"),
            ),
            Some(tool) => {
                let args = item.get("args").cloned().unwrap_or_else(|| json!({}));
                match item.get("id").and_then(Value::as_str) {
                    Some(id) => Reply::tool_call_with_id(id, tool, args),
                    None => Reply::tool_call(tool, args),
                }
            }
            None => Reply::text(item.get("text").and_then(Value::as_str).unwrap_or_default()),
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (script_path, out_path) = match args.as_slice() {
        [_, script, out] => (script.clone(), out.clone()),
        _ => {
            eprintln!("usage: fake_model_server SCRIPT.json REQUESTS.json");
            std::process::exit(2);
        }
    };
    let script: Value =
        serde_json::from_str(&std::fs::read_to_string(&script_path).expect("read the script"))
            .expect("the script is JSON");
    let model = FakeModel::start_with(|s: Script| {
        s.planner(replies(&script, "planner"))
            .delegate(replies(&script, "delegate"))
            .processor(replies(&script, "processor"))
            .check(replies(&script, "check"))
    });
    // The one line a caller waits for; stdout carries nothing else.
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", model.url()).expect("write the URL");
    stdout.flush().expect("flush stdout");
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        let _ = done_tx.send(());
    });
    let mut written = usize::MAX;
    loop {
        let requests = model.requests();
        if requests.len() != written {
            let list: Vec<Value> = requests
                .iter()
                .map(|r| json!({"role": r.role, "body": r.body, "headers": r.headers}))
                .collect();
            let tmp = format!("{out_path}.tmp");
            std::fs::write(&tmp, serde_json::to_vec(&list).expect("serialize")).expect("write");
            std::fs::rename(&tmp, &out_path).expect("rename");
            written = requests.len();
        }
        if done_rx.recv_timeout(Duration::from_millis(50)).is_ok() {
            break;
        }
    }
}
