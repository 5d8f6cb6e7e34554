//! The soak benchmark (not a test): a scripted working day against one `bravebot lsp`, reporting
//! its resident memory as the day goes.
//!
//! The day: 50 sessions, one after another, each running 4 turns (200 in all) that alternately
//! read a file and edit an open buffer (approved, landed through `workspace/applyEdit`, then the
//! editor's `didChange`); between turns the editor asks for code actions 100 times, as it does on
//! every cursor move (20,000 in all, one in ten invoked), and types into the open buffer 10 times
//! (2,000 `didChange`s). The protocol has no request that ends a session, so a session the day is
//! done with is left alone, as an editor that opened a new chat would leave it.
//!
//! ```sh
//! cargo build --release -p bravebot
//! BRAVEBOT_BIN=target/release/bravebot cargo run -p bravebot-tests --bin soak [SESSIONS]
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::time::Instant;

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::fuzz::resident_kib;
use bravebot_tests::lsp_client::{Answer, LspClient, LspOptions, file_uri};
use serde_json::json;

const TURNS_PER_SESSION: usize = 4;
const CODE_ACTIONS_PER_TURN: usize = 100;
const TYPING_PER_TURN: usize = 10;
const LINES: usize = 200;

/// The editor's copy of the open buffer, kept in step with what it tells the server.
struct Buffer {
    lines: Vec<String>,
    version: i32,
}

impl Buffer {
    fn text(&self) -> String {
        self.lines.concat()
    }
}

fn main() {
    let sessions: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let turns = sessions * TURNS_PER_SESSION;
    // Turn t: even reads notes.md, odd edits line t of the buffer.
    let mut planner = Vec::new();
    for t in 0..turns {
        if t % 2 == 0 {
            planner.push(Reply::tool_call(
                "read_file",
                json!({"path": "notes.md", "why": "read the notes"}),
            ));
        } else {
            let line = t % LINES;
            planner.push(Reply::tool_call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_text": format!("fn item_{line}() {{}}\n"),
                    "new_text": format!("fn item_{line}() {{ /* edited in turn {t} */ }}\n"), "why": "edit"}),
            ));
        }
        planner.push(Reply::text(format!("turn {t} done")));
    }
    let model = FakeModel::start(planner);
    let workspace = tempfile::tempdir().expect("a workspace");
    let root = workspace.path();
    std::fs::create_dir_all(root.join("src")).expect("mkdir src");
    std::fs::write(root.join("notes.md"), "The notes of the day.\n".repeat(40)).expect("notes");
    let mut buffer = Buffer {
        lines: (0..LINES)
            .map(|i| format!("fn item_{i}() {{}}\n"))
            .collect(),
        version: 1,
    };
    std::fs::write(root.join("src/lib.rs"), buffer.text()).expect("lib.rs");
    let lib_uri = file_uri(&root.join("src/lib.rs"));

    let client = LspClient::start(LspOptions::new(root).model_url(&model.url()));
    client.initialize(json!({}));
    client.answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": lib_uri, "languageId": "rust", "version": buffer.version, "text": buffer.text()}}),
    );
    let began = Instant::now();
    let start = resident_kib(client.pid());
    println!("| after | resident |");
    println!("|---|---|");
    println!("| initialize | {:.1} MiB |", start as f64 / 1024.0);
    let (mut code_actions, mut typed, mut turn, mut landed) = (0usize, 0usize, 0usize, 0usize);
    for s in 0..sessions {
        let session = client.new_session();
        for _ in 0..TURNS_PER_SESSION {
            for i in 0..CODE_ACTIONS_PER_TURN {
                let line = (code_actions + i) % LINES;
                let trigger = if i % 10 == 0 { 1 } else { 2 };
                client
                    .request(
                        "textDocument/codeAction",
                        json!({"textDocument": {"uri": lib_uri},
                            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}},
                            "context": {"diagnostics": [], "triggerKind": trigger}}),
                    )
                    .expect("a code action request is answered");
            }
            code_actions += CODE_ACTIONS_PER_TURN;
            for _ in 0..TYPING_PER_TURN {
                // Typing at the end of the first line, which the edits never touch.
                let last = 0;
                let at = buffer.lines[last].len() - 1;
                buffer.lines[last].insert(at, 'x');
                buffer.version += 1;
                client.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": lib_uri, "version": buffer.version},
                        "contentChanges": [{"range": {"start": {"line": last, "character": at}, "end": {"line": last, "character": at}}, "text": "x"}]}),
                );
                typed += 1;
            }
            let result = client
                .request(
                    "bravebot/session/prompt",
                    json!({"sessionId": session, "text": format!("turn {turn}"), "files": ["notes.md", "src/lib.rs"]}),
                )
                .expect("the prompt is answered");
            assert_eq!(result["stopReason"], "endTurn", "turn {turn}: {result}");
            if turn % 2 == 1 {
                // The editor applied the edit: it says so with a didChange, as editors do.
                let line = turn % LINES;
                let edits = client.server_requests("workspace/applyEdit");
                assert_eq!(
                    edits.len(),
                    1,
                    "turn {turn}: the edit did not come as applyEdit"
                );
                buffer.lines[line] =
                    format!("fn item_{line}() {{ /* edited in turn {turn} */ }}\n");
                buffer.version += 1;
                client.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": lib_uri, "version": buffer.version},
                        "contentChanges": [{"text": buffer.text()}]}),
                );
                landed += 1;
            }
            client.forget_history();
            turn += 1;
        }
        if (s + 1) % 10 == 0 {
            println!(
                "| {} sessions, {turn} turns, {code_actions} code actions, {typed} changes | {:.1} MiB |",
                s + 1,
                resident_kib(client.pid()) as f64 / 1024.0
            );
        }
    }
    let end = resident_kib(client.pid());
    println!();
    println!(
        "{sessions} sessions, {turn} turns ({landed} edits landed), {code_actions} code actions, \
         {typed} typed changes in {:.1} s; resident {:.1} MiB at the start, {:.1} MiB at the end",
        began.elapsed().as_secs_f64(),
        start as f64 / 1024.0,
        end as f64 / 1024.0
    );
    let status = client.shutdown();
    assert!(
        status.success(),
        "the server did not end cleanly: {status:?}"
    );
}
