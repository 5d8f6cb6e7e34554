//! A benchmark of what the tool list and the system prompt cost in every planner request (not a
//! test): the first planner request of a one-round turn, in a plain git repository and in a folder
//! that is not one, each with an editor that answers diagnostics and with one that does not. Per
//! tool: the bytes of its entry in the request as sent (name, description, schema) and the
//! driver's own token estimate of them (a quarter of the bytes, rounded up); then the whole list
//! and the system prompt.
//!
//! `BRAVEBOT_BASELINE_BIN` names a second binary (an older build) measured the same way.
//!
//! ```sh
//! cargo build -p bravebot
//! cargo run -p bravebot-tests --bin bench_tools
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use serde_json::{Value, json};

/// What one planner request carried besides the conversation.
struct Fixed {
    /// Each tool's name and the bytes of its entry as sent.
    tools: Vec<(String, usize)>,
    system: usize,
}

fn main() {
    let mut binaries: Vec<PathBuf> = vec![bravebot_binary()];
    if let Some(baseline) = std::env::var_os("BRAVEBOT_BASELINE_BIN") {
        binaries.push(PathBuf::from(baseline));
    }
    let git = tempfile::tempdir().expect("create a workspace");
    // A repository as `git init` leaves it; only its `.git` is looked at before the first request.
    let made = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(git.path())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        std::fs::create_dir(git.path().join(".git")).expect("make .git");
    }
    let plain = tempfile::tempdir().expect("create a workspace");
    let cases: [(&str, &Path, bool); 4] = [
        (
            "git repository, editor without diagnostics",
            git.path(),
            false,
        ),
        ("git repository, editor with diagnostics", git.path(), true),
        (
            "not a git repository, editor without diagnostics",
            plain.path(),
            false,
        ),
        (
            "not a git repository, editor with diagnostics",
            plain.path(),
            true,
        ),
    ];
    for binary in &binaries {
        println!("{}", binary.display());
        for (name, workspace, diagnostics) in cases {
            let fixed = measure(binary, workspace, diagnostics);
            let total: usize = fixed.tools.iter().map(|(_, b)| b).sum();
            println!("  {name}");
            for (tool, bytes) in &fixed.tools {
                println!(
                    "    {tool:<16} {bytes:>6} B {:>5} tokens",
                    bytes.div_ceil(4)
                );
            }
            println!(
                "    tool list: {} tools, {total} B, about {} tokens; system prompt {} B, about {} tokens",
                fixed.tools.len(),
                total.div_ceil(4),
                fixed.system,
                fixed.system.div_ceil(4)
            );
        }
    }
}

/// The tools and system prompt of the first planner request of a turn in `workspace`.
fn measure(binary: &Path, workspace: &Path, diagnostics: bool) -> Fixed {
    let model = FakeModel::start_with(|s| s.planner(vec![Reply::text("Done.")]));
    let mut options = LspOptions::new(workspace)
        .binary(binary)
        .timeout(Duration::from_secs(120))
        .model_url(&model.url());
    if diagnostics {
        options = options.diagnostics_capability();
    }
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let session = client.new_session();
    let result = client.request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": "Say done." }),
    );
    client.shutdown();
    if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") {
        eprintln!("error: the turn ended with {result:?}");
        std::process::exit(1);
    }
    let Some(request) = model.requests_for("planner").into_iter().next() else {
        eprintln!("error: no planner request was made");
        std::process::exit(1);
    };
    let tools = request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let name = t["function"]["name"].as_str().unwrap_or("?").to_string();
            (name, t.to_string().len())
        })
        .collect();
    let system = request.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .map(|m| match &m["content"] {
            Value::String(s) => s.len(),
            other => other.to_string().len(),
        })
        .sum();
    Fixed { tools, system }
}
