//! The fake model as a process, for tests written in other languages (the Neovim plugin's Lua
//! suite): `fake_model_server SCRIPT.json REQUESTS.json`.
//!
//! `SCRIPT.json` maps roles to replies: `{"planner": [{"text": "hi"}, {"tool": "run", "id":
//! "call_run", "args": {...}}], "check": [{"text": "VERDICT: safe"}]}`; a reply may also be
//! `{"error": 500, "message": "..."}` (an HTTP error), `{"broken": true}` (a stream that breaks
//! off), `{"webPage": true}` (a `200` web page, as a captive portal answers), `{"stall": "first
//! words"}` (a stream that starts and then hangs until the client hangs up) or carry
//! `"nonStreaming": true` (one JSON body) or `"usage": {"input": N, "output": N, "cached": N}` (the
//! counts it reports, `cached` optional). `"delegateWhen": [{"needle": "alpha.txt", "replies":
//! [...]}]` scripts the delegate whose request holds `needle` apart from the others (delegates run
//! side by side, so which asks first is not fixed); `"competentCheck": "needle"` answers every
//! check past the script `VERDICT: unsafe` when it holds `needle`, else `VERDICT: safe`;
//! `"simulateUsage": true` has every answer scripted without usage report a simulated provider's
//! counts, its prefix cache included (`bravebot_tests::prompt_cache`). The
//! server's base URL is printed as the first line of stdout; every request received so far (role,
//! body, headers, the `usage` its reply reported or `null`, and its `cache_control` `breakpoints`)
//! is written to `REQUESTS.json` as it arrives. The server stops when stdin ends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fixture: failing loudly is the point.

use std::io::{Read, Write};
use std::time::Duration;

use bravebot_tests::fake_model::{FakeModel, Reply, Script};
use serde_json::{Value, json};

fn replies(script: &Value, role: &str) -> Vec<Reply> {
    script
        .get(role)
        .and_then(Value::as_array)
        .map(|items| parse(items))
        .unwrap_or_default()
}

fn parse(items: &[Value]) -> Vec<Reply> {
    items
        .iter()
        .map(|item| {
            let text = item.get("text").and_then(Value::as_str).unwrap_or_default();
            let reply = if let Some(status) = item.get("error").and_then(Value::as_u64) {
                let message = item
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Reply::error(u16::try_from(status).unwrap(), message)
            } else if item.get("broken").is_some() {
                Reply::broken()
            } else if item.get("webPage").is_some() {
                Reply::web_page()
            } else if let Some(first) = item.get("stall").and_then(Value::as_str) {
                Reply::stall(first)
            } else if let Some(tool) = item.get("tool").and_then(Value::as_str) {
                let args = item.get("args").cloned().unwrap_or_else(|| json!({}));
                match item.get("id").and_then(Value::as_str) {
                    Some(id) => Reply::tool_call_with_id(id, tool, args),
                    None => Reply::tool_call(tool, args),
                }
            } else {
                Reply::text(text)
            };
            let count = |key: &str| {
                item.pointer(&format!("/usage/{key}"))
                    .and_then(Value::as_u64)
            };
            let reply = match (count("input"), count("output")) {
                (Some(input), Some(output)) => reply.with_usage(input, output, count("cached")),
                _ => reply,
            };
            if item.get("nonStreaming").and_then(Value::as_bool) == Some(true) {
                reply.non_streaming()
            } else {
                reply
            }
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
        let mut s = s
            .planner(replies(&script, "planner"))
            .delegate(replies(&script, "delegate"))
            .processor(replies(&script, "processor"))
            .check(replies(&script, "check"));
        for when in script
            .get("delegateWhen")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let needle = when
                .get("needle")
                .and_then(Value::as_str)
                .expect("a needle");
            let items = when
                .get("replies")
                .and_then(Value::as_array)
                .expect("replies");
            s = s.delegate_when(needle, parse(items));
        }
        if let Some(needle) = script.get("competentCheck").and_then(Value::as_str) {
            s = s.competent_check(needle);
        }
        if script.get("simulateUsage").and_then(Value::as_bool) == Some(true) {
            s = s.simulate_usage();
        }
        s
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
                .map(|r| {
                    let usage = r.usage.map(|u| {
                        json!({"input": u.input, "output": u.output, "cached": u.cached,
                            "written": u.written})
                    });
                    json!({"role": r.role, "body": r.body, "headers": r.headers,
                        "usage": usage, "breakpoints": r.cache_breakpoints()})
                })
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
