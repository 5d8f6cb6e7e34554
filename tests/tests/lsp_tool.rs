//! End-to-end tests of the `lsp` tool over real stdio: the question that starts a server, the five
//! kinds of nothing, what reaches the planner and what is quarantined, and that no server outlives
//! its session.
//!
//! Tests against a fake server (`tests/src/bin/fake_language_server.rs`, put on `PATH` under a
//! table binary's name) always run. Tests against real servers (pyright, typescript-language-server,
//! clangd on the fixture projects in `tests/fixtures/lsp/`) run when `BRAVEBOT_LSP_TESTS=1`, which
//! `scripts/test.sh` sets after installing them; with it set, a missing binary fails the test.

use std::path::Path;
use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::Answer;
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};
use tempfile::TempDir;

const FAKE_HOVER_CANARY: &str = "CANARY-fake-hover-5120";
const FAKE_DETAIL_CANARY: &str = "CANARY-fake-detail-6631";
const FAKE_ERROR_CANARY: &str = "CANARY-fake-error";
const PYTHON_HOVER_CANARY: &str = "CANARY-pyright-hover-7731";

/// The server over `workspace`, with `path` as its `PATH` when given.
fn start(workspace: TempDir, model: FakeModel, path: Option<&Path>, init: Value) -> Setup {
    Setup::in_workspace(
        workspace,
        model,
        |options, _| match path {
            Some(path) => options.env("PATH", path),
            None => options,
        },
        init,
    )
}

/// The language servers `session/status` reports.
fn servers(s: &Setup) -> Vec<Value> {
    s.status()["languageServers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn call(id: &str, args: Value) -> Reply {
    Reply::tool_call_with_id(id, "lsp", args)
}

/// A workspace holding these files.
fn workspace(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("workspace");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

/// A copy of a fixture project in a fresh directory, so no server writes into the repository.
fn fixture(name: &str) -> TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lsp")
        .join(name);
    let to = tempfile::tempdir().expect("workspace");
    copy_tree(&from, to.path());
    to
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A directory for `PATH` holding the fake server under each of `names`, behaving as `mode`
/// says, logging what it receives to `log` when given.
fn fake_servers(names: &[(&str, &str)], log: Option<&Path>) -> TempDir {
    let dir = tempfile::tempdir().expect("bin");
    let fake = env!("CARGO_BIN_EXE_fake_language_server");
    for (name, mode) in names {
        let log = log
            .map(|l| format!("FAKE_LSP_LOG='{}' ", l.display()))
            .unwrap_or_default();
        let script = format!("#!/bin/sh\nFAKE_LSP_MODE='{mode}' {log}exec '{fake}' \"$@\"\n");
        let path = dir.path().join(name);
        std::fs::write(&path, script).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    dir
}

/// Whether a process is gone: no entry in /proc, or a zombie nobody reaped yet (it runs nothing).
fn gone(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[track_caller]
fn assert_gone(pid: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gone(pid) {
        assert!(
            Instant::now() < deadline,
            "language server {pid} outlived its session"
        );
        // Another process's end raises no event here: look again shortly.
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pids(servers: &[Value]) -> Vec<u64> {
    servers.iter().filter_map(|s| s["pid"].as_u64()).collect()
}

/// Whether the real-server tests run; with `BRAVEBOT_LSP_TESTS` set, every binary named must be
/// on `PATH` or the test fails.
fn real_servers(binaries: &[&str]) -> bool {
    if std::env::var_os("BRAVEBOT_LSP_TESTS").is_none() {
        eprintln!(
            "real language servers not tested: BRAVEBOT_LSP_TESTS is not set (scripts/test.sh sets it)"
        );
        return false;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for binary in binaries {
        let found = std::env::split_paths(&path).any(|d| d.join(binary).is_file());
        assert!(
            found,
            "BRAVEBOT_LSP_TESTS is set but `{binary}` is not on PATH; scripts/test.sh installs it"
        );
    }
    true
}

fn allow_lsp(setup: &Setup) {
    setup
        .client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("lspStart") => Answer::choose(q, "allow_once"),
            _ => Answer::choose(q, "reject_once"),
        });
}

// Verifies: LSP-6
#[test]
fn a_missing_binary_and_a_language_without_a_server_are_their_own_answers() {
    let model = FakeModel::start(vec![
        call(
            "call_py",
            json!({"operation": "findReferences", "path": "app.py", "line": 1, "character": 5, "why": "callers"}),
        ),
        call(
            "call_md",
            json!({"operation": "documentSymbol", "path": "notes.md", "why": "outline"}),
        ),
        Reply::text("done"),
    ]);
    let empty = tempfile::tempdir().expect("empty PATH");
    let s = start(
        workspace(&[
            ("app.py", "def f():\n    pass\n"),
            ("notes.md", "# notes\n"),
        ]),
        model,
        Some(empty.path()),
        json!({}),
    );
    allow_lsp(&s);
    s.prompt(&[]);
    let missing = s.model.tool_result("call_py");
    assert!(
        missing.contains("pyright-langserver` was not found on PATH")
            && missing.contains("not an empty answer"),
        "{missing}"
    );
    let none = s.model.tool_result("call_md");
    assert!(
        none.contains("no language server for .md files") && none.contains("not an empty answer"),
        "{none}"
    );
    assert!(
        s.client.questions().is_empty(),
        "nothing to start, nothing asked"
    );
    assert!(servers(&s).is_empty());
    s.client.shutdown();
}

// Verifies: LSP-6, LSP-8, LSP-9
#[test]
fn a_server_that_fails_to_start_and_one_that_crashes_are_their_own_answers() {
    let position = |id: &str, path: &str| {
        call(
            id,
            json!({"operation": "goToDefinition", "path": path, "line": 1, "character": 1, "why": "where"}),
        )
    };
    let model = FakeModel::start(vec![
        position("call_fail_1", "app.py"),
        position("call_fail_2", "app.py"),
        position("call_crash_1", "main.c"),
        position("call_crash_2", "main.c"),
        position("call_crash_3", "main.c"),
        Reply::text("done"),
    ]);
    let bin = fake_servers(
        &[
            ("pyright-langserver", "exit-at-start"),
            ("clangd", "crash-on-request"),
        ],
        None,
    );
    let s = start(
        workspace(&[
            ("app.py", "x = 1\n"),
            ("main.c", "int main(void) { return 0; }\n"),
        ]),
        model,
        Some(bin.path()),
        json!({}),
    );
    allow_lsp(&s);
    s.prompt(&[]);
    let failed = s.model.tool_result("call_fail_1");
    assert!(
        failed.contains("failed to start: it exited before it finished starting (exit code 3)"),
        "{failed}"
    );
    assert!(
        s.model
            .tool_result("call_fail_2")
            .contains("failed to start earlier in this session"),
        "a failed server stays stopped: {}",
        s.model.tool_result("call_fail_2")
    );
    let crashed = s.model.tool_result("call_crash_1");
    assert!(
        crashed.contains("crashed while answering goToDefinition (exit code 1)")
            && crashed.contains("the next question restarts it"),
        "{crashed}"
    );
    let again = s.model.tool_result("call_crash_2");
    assert!(
        again.contains("crashed while answering") && again.contains("restarted once already"),
        "{again}"
    );
    let last = s.model.tool_result("call_crash_3");
    assert!(
        last.contains("crashed (exit code 1) after its one restart"),
        "{last}"
    );
    for text in [&failed, &crashed, &last] {
        assert!(!text.contains("nothing found"), "{text}");
    }
    assert_eq!(
        s.client.questions().len(),
        2,
        "one question per language, restarts included"
    );
    s.client.shutdown();
}

// Verifies: LSP-2, LSP-4, LSP-5, LSP-6, LSP-9, PLAIN-1
#[test]
fn locations_are_structure_and_the_text_beside_them_and_hover_are_references() {
    let at = |id: &str, operation: &str| {
        call(
            id,
            json!({"operation": operation, "path": "app.py", "line": 2, "character": 5, "why": "look"}),
        )
    };
    let model = FakeModel::start(vec![
        at("call_def", "goToDefinition"),
        at("call_refs", "findReferences"),
        at("call_hover", "hover"),
        call(
            "call_symbols",
            json!({"operation": "documentSymbol", "path": "app.py", "why": "outline"}),
        ),
        at("call_impl", "goToImplementation"),
        call(
            "call_stale",
            json!({"operation": "goToDefinition", "path": "app.py", "line": 40, "character": 1, "why": "old line"}),
        ),
        Reply::text("done"),
    ]);
    let bin = fake_servers(&[("pyright-langserver", "")], None);
    let s = start(
        workspace(&[("app.py", "import os\nprint(os.getcwd())\n")]),
        model,
        Some(bin.path()),
        json!({}),
    );
    allow_lsp(&s);
    s.prompt(&[]);
    let definition = s.model.tool_result("call_def");
    assert!(
        definition.contains("app.py:1:5\n")
            && definition.contains("[outside the workspace] …/hidden/secret.py:42:3"),
        "{definition}"
    );
    assert!(!definition.contains("/usr/lib"), "{definition}");
    let references = s.model.tool_result("call_refs");
    assert_eq!(
        references
            .lines()
            .filter(|l| l.starts_with("app.py:"))
            .count(),
        200
    );
    assert!(
        references
            .contains("[partial: stopped at the cap of 200 locations; 50 more were not listed"),
        "{references}"
    );
    let hover = s.model.tool_result("call_hover");
    assert!(
        hover.contains("quarantined as ref:") && hover.contains("always a reference"),
        "{hover}"
    );
    let symbols = s.model.tool_result("call_symbols");
    assert!(
        symbols.contains("app.py:1:5 function evil\u{240a}name\n"),
        "one location one line, the newline pictured: {symbols}"
    );
    assert!(
        symbols.contains("comes from files nobody vouched for: quarantined as ref:"),
        "{symbols}"
    );
    let implementation = s.model.tool_result("call_impl");
    assert!(
        implementation.contains("does not implement goToImplementation"),
        "{implementation}"
    );
    let stale = s.model.tool_result("call_stale");
    assert!(
        stale.starts_with("nothing found: app.py:40:1 holds no symbol"),
        "{stale}"
    );
    for canary in [FAKE_HOVER_CANARY, FAKE_DETAIL_CANARY, FAKE_ERROR_CANARY] {
        s.model.assert_no_planner_request_contains(canary);
    }
    let updates = s.client.updates(&s.session);
    assert!(
        updates
            .iter()
            .any(|u| u["kind"] == "quarantined" || u.to_string().contains("hover text")),
        "the person is told what was quarantined"
    );
    // The person's summary line says what was asked in words; the exact operation stays in the
    // call's routing.
    let summary = |id: &str| {
        s.tool_update(id)["summary"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let definition = summary("call_def");
    assert!(
        definition.starts_with("language server, definition: ")
            && definition.ends_with(" locations"),
        "{definition}"
    );
    let hover = summary("call_hover");
    assert!(
        hover.starts_with("language server, hover text at "),
        "{hover}"
    );
    for id in ["call_def", "call_refs", "call_hover", "call_symbols"] {
        let line = summary(id);
        assert!(!line.contains("lsp") && !line.contains('`'), "{line}");
    }
    assert!(
        updates.iter().any(|u| u["kind"] == "quarantined"
            && u["origin"]
                == "text the language server gave beside the locations of the file's symbols"),
        "{updates:#?}"
    );
    let called = updates
        .iter()
        .find(|u| u["kind"] == "toolCall" && u["callId"] == "call_def")
        .expect("the call was shown");
    assert_eq!(
        (&called["tool"], &called["routing"]["operation"]),
        (&json!("lsp"), &json!("goToDefinition"))
    );
    let audit = s.audit().to_string();
    assert!(audit.contains("lsp: started the python server"), "{audit}");
    assert!(audit.contains("lsp.goToDefinition at app.py:2:5 sent to the python server"));
    assert!(!audit.contains(FAKE_HOVER_CANARY) && !audit.contains(FAKE_DETAIL_CANARY));
    let question = &s.client.questions()[0];
    assert_eq!(question.question_kind(), Some("lspStart"));
    let notice = question.params["subject"]["notice"]
        .as_str()
        .unwrap_or_default();
    assert!(
        notice.contains("runs with your access")
            && notice.contains("code from the project and its dependencies"),
        "{notice}"
    );
    assert_eq!(
        s.client.questions().len(),
        1,
        "asked once for six questions"
    );
    s.client.shutdown();
}

// Verifies: LSP-1, LSP-7, LSP-8, LSP-11
#[test]
fn requests_wait_for_initialize_and_a_server_that_ignores_shutdown_is_killed() {
    let model = FakeModel::start(vec![
        call(
            "call_def",
            json!({"operation": "goToDefinition", "path": "a.py", "line": 1, "character": 1, "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let log_dir = tempfile::tempdir().expect("log");
    let log = log_dir.path().join("received");
    let bin = fake_servers(
        &[(
            "pyright-langserver",
            "slow-initialize,ignore-shutdown,apply-edit",
        )],
        Some(&log),
    );
    let s = start(
        workspace(&[("a.py", "a = 1\n")]),
        model,
        Some(bin.path()),
        json!({}),
    );
    allow_lsp(&s);
    // The editor holds unsaved text: the server is shown the buffer, not the disk.
    let uri = bravebot_tests::lsp_client::file_uri(&s.workspace.path().join("a.py"));
    s.client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 3, "text": "unsaved = 2\n"}}),
    );
    s.prompt(&[]);
    let answer = s.model.tool_result("call_def");
    assert!(answer.contains("\na.py:1:5"), "{answer}");
    let received = std::fs::read_to_string(&log).expect("the fake server's log");
    assert!(
        received.contains("applyEdit applied: false"),
        "a server's edit is never applied: {received}"
    );
    assert!(
        received.contains("opened: unsaved = 2"),
        "the open buffer's text: {received}"
    );
    let order: Vec<&str> = received
        .lines()
        .filter(|l| !l.starts_with("applyEdit") && !l.starts_with("opened:"))
        .collect();
    assert_eq!(
        &order[..4],
        [
            "initialize",
            "initialized",
            "textDocument/didOpen",
            "textDocument/definition"
        ],
        "nothing before initialize completed: {order:?}"
    );
    let servers = servers(&s);
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0]["language"], "python");
    assert_eq!(servers[0]["state"], "ready");
    let pid = pids(&servers)[0];
    assert!(!gone(pid));
    s.client.shutdown();
    assert_gone(pid);
}

// Verifies: LSP-9
#[test]
fn nobody_watching_refuses_and_a_refusal_for_the_session_is_kept() {
    let model = FakeModel::start(vec![
        call(
            "call_1",
            json!({"operation": "documentSymbol", "path": "a.py", "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let bin = fake_servers(&[("pyright-langserver", "")], None);
    let unwatched = start(
        workspace(&[("a.py", "a = 1\n")]),
        model,
        Some(bin.path()),
        json!({"interactive": false}),
    );
    unwatched.prompt(&[]);
    let refused = unwatched.model.tool_result("call_1");
    assert!(
        refused.starts_with("refused: nobody is watching")
            && refused.contains("not an empty answer"),
        "{refused}"
    );
    assert!(servers(&unwatched).is_empty());
    unwatched.client.shutdown();

    let symbols = |id: &str| {
        call(
            id,
            json!({"operation": "documentSymbol", "path": "a.py", "why": "x"}),
        )
    };
    let model = FakeModel::start(vec![
        symbols("call_once"),
        symbols("call_never"),
        symbols("call_after"),
        Reply::text("done"),
    ]);
    let s = start(
        workspace(&[("a.py", "a = 1\n")]),
        model,
        Some(bin.path()),
        json!({}),
    );
    let mut answers = vec!["reject_always", "reject_once"];
    s.client.answer_permissions_with(move |q| {
        let kind = answers.pop().unwrap_or("allow_once");
        Answer::choose(q, kind)
    });
    s.prompt(&[]);
    assert_eq!(
        s.client.questions().len(),
        2,
        "not now asks again; not in this session does not"
    );
    assert!(s.model.tool_result("call_once").contains("did not allow"));
    assert!(
        s.model
            .tool_result("call_after")
            .contains("chose not to start the Python language server in this session")
    );
    assert!(servers(&s).is_empty());
    s.client.shutdown();
}

// Verifies: LSP-1, LSP-3, LSP-4, LSP-5, LSP-8, LSP-9, LSP-11
/// The fixture's Python project, asked about by a real pyright.
#[test]
fn pyright_answers_definition_references_symbols_and_hover_and_is_kept_warm() {
    if !real_servers(&["pyright-langserver"]) {
        return;
    }
    let at = |id: &str, operation: &str, path: &str, line: u64, character: u64| {
        call(
            id,
            json!({"operation": operation, "path": path, "line": line, "character": character, "why": "x"}),
        )
    };
    let model = FakeModel::start(vec![
        at("call_def", "goToDefinition", "app.py", 5, 11),
        at("call_refs", "findReferences", "util.py", 4, 5),
        call(
            "call_symbols",
            json!({"operation": "documentSymbol", "path": "util.py", "why": "outline"}),
        ),
        at("call_hover", "hover", "app.py", 5, 11),
        at("call_impl", "goToImplementation", "util.py", 13, 9),
        Reply::text("first turn done"),
        at("call_warm", "goToDefinition", "app.py", 6, 11),
        Reply::text("second turn done"),
        at("call_restarted", "goToDefinition", "app.py", 5, 11),
        Reply::text("third turn done"),
    ]);
    let s = start(fixture("python"), model, None, json!({}));
    allow_lsp(&s);
    s.prompt(&[]);
    let definition = s.model.tool_result("call_def");
    assert!(definition.contains("\nutil.py:4:5"), "{definition}");
    let references = s.model.tool_result("call_refs");
    for place in ["util.py:4:5", "util.py:14:16", "app.py:1:27", "app.py:5:11"] {
        assert!(references.contains(place), "{place} in {references}");
    }
    let symbols = s.model.tool_result("call_symbols");
    for symbol in [
        "util.py:4:5 function greet",
        "util.py:9:7 class Greeter",
        "util.py:13:9 method say in Greeter",
    ] {
        assert!(symbols.contains(symbol), "{symbol} in {symbols}");
    }
    let hover = s.model.tool_result("call_hover");
    assert!(hover.contains("quarantined as ref:"), "{hover}");
    s.model
        .assert_no_planner_request_contains(PYTHON_HOVER_CANARY);
    let implementation = s.model.tool_result("call_impl");
    assert!(
        implementation.contains("does not implement goToImplementation"),
        "{implementation}"
    );
    let first = pids(&servers(&s));
    assert_eq!(first.len(), 1);

    s.prompt(&[]);
    let warm = s.model.tool_result("call_warm");
    assert!(warm.contains("\nutil.py:9:7"), "{warm}");
    assert_eq!(pids(&servers(&s)), first, "the same server answered");
    assert_eq!(s.client.questions().len(), 1, "asked once for the session");

    // A server killed from outside is a crash: the next question restarts it, once.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &first[0].to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    assert_gone(first[0]);
    // Once the session has seen the server's output end, status calls it crashed.
    let deadline = Instant::now() + Duration::from_secs(10);
    while servers(&s)[0]["state"] != "crashed" {
        assert!(Instant::now() < deadline, "{:?}", servers(&s));
        std::thread::sleep(Duration::from_millis(20));
    }
    s.prompt(&[]);
    let restarted = s.model.tool_result("call_restarted");
    assert!(
        restarted.contains("had crashed (signal 9) and was restarted")
            && restarted.contains("\nutil.py:4:5"),
        "{restarted}"
    );
    let second = pids(&servers(&s));
    assert_ne!(second, first);
    assert_eq!(
        s.client.questions().len(),
        1,
        "a restart is not asked about again"
    );
    s.client.shutdown();
    assert_gone(second[0]);
}

// Verifies: LSP-3, LSP-7, LSP-8
#[test]
fn typescript_language_server_answers_with_the_declaration_not_the_import() {
    if !real_servers(&["typescript-language-server"]) {
        return;
    }
    let model = FakeModel::start(vec![
        call(
            "call_def",
            json!({"operation": "goToDefinition", "path": "src/main.ts", "line": 3, "character": 13, "why": "x"}),
        ),
        call(
            "call_refs",
            json!({"operation": "findReferences", "path": "src/util.ts", "line": 1, "character": 17, "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let s = start(fixture("typescript"), model, None, json!({}));
    allow_lsp(&s);
    s.prompt(&[]);
    let definition = s.model.tool_result("call_def");
    assert!(definition.contains("\nsrc/util.ts:1:17"), "{definition}");
    assert!(
        !definition.contains("src/main.ts:1:"),
        "not the import binding: {definition}"
    );
    let references = s.model.tool_result("call_refs");
    for place in ["src/util.ts:1:17", "src/util.ts:9:12", "src/main.ts:3:13"] {
        assert!(references.contains(place), "{place} in {references}");
    }
    let servers = pids(&servers(&s));
    s.client.shutdown();
    for pid in servers {
        assert_gone(pid);
    }
}

// Verifies: LSP-3, LSP-10
#[test]
fn clangd_answers_definition_and_document_symbols() {
    if !real_servers(&["clangd"]) {
        return;
    }
    let model = FakeModel::start(vec![
        call(
            "call_def",
            json!({"operation": "goToDefinition", "path": "main.c", "line": 6, "character": 12, "why": "x"}),
        ),
        call(
            "call_symbols",
            json!({"operation": "documentSymbol", "path": "main.c", "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let s = start(fixture("c"), model, None, json!({}));
    allow_lsp(&s);
    s.prompt(&[]);
    let definition = s.model.tool_result("call_def");
    assert!(definition.contains("\nmain.c:3:12"), "{definition}");
    let symbols = s.model.tool_result("call_symbols");
    for symbol in ["main.c:3:12 function twice", "main.c:5:5 function main"] {
        assert!(symbols.contains(symbol), "{symbol} in {symbols}");
    }
    let servers = pids(&servers(&s));
    s.client.shutdown();
    for pid in servers {
        assert_gone(pid);
    }
    assert!(
        !s.workspace.path().join(".cache").exists(),
        "no index was written inside the tree"
    );
}

// Verifies: LSP-20
#[test]
fn clangd_started_confined_answers_and_writes_nothing_in_the_tree() {
    if !real_servers(&["clangd"]) {
        return;
    }
    let model = FakeModel::start(vec![
        call(
            "call_def",
            json!({"operation": "goToDefinition", "path": "main.c", "line": 6, "character": 12, "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::in_workspace(
        fixture("c"),
        model,
        |options, _| {
            options.home_file(
                ".bravebot/settings.json",
                r#"{"run": {"confined": "unasked"}}"#,
            )
        },
        json!({}),
    );
    allow_lsp(&s);
    s.prompt(&[]);
    let definition = s.model.tool_result("call_def");
    assert!(definition.contains("\nmain.c:3:12"), "{definition}");
    let notice = s.client.questions()[0].params["subject"]["notice"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(notice.contains("clangd runs confined"), "{notice}");
    let running = servers(&s);
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(running[0]["confined"], true, "{running:?}");
    let pid = running[0]["pid"].as_u64().expect("a pid");
    // The kernel holds it: its process carries a Landlock domain (no new privileges, seccomp on).
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(status.contains("Seccomp:\t2"), "{status}");
    s.client.shutdown();
    assert_gone(pid);
    assert!(!s.workspace.path().join(".cache").exists());
}

// Verifies: LSP-20
#[test]
fn without_confined_runs_a_language_server_starts_as_before() {
    let bin = fake_servers(&[("clangd", "")], None);
    let model = FakeModel::start(vec![
        call(
            "call_symbols",
            json!({"operation": "documentSymbol", "path": "main.c", "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let s = start(
        workspace(&[("main.c", "int main(void) { return 0; }\n")]),
        model,
        Some(bin.path()),
        json!({}),
    );
    allow_lsp(&s);
    s.prompt(&[]);
    let notice = s.client.questions()[0].params["subject"]["notice"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(notice.contains("and is not confined"), "{notice}");
    let running = servers(&s);
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(running[0]["confined"], false, "{running:?}");
    let pid = running[0]["pid"].as_u64().expect("a pid");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(status.contains("Seccomp:\t0"), "{status}");
    s.client.shutdown();
}

// Verifies: LSP-11
#[test]
fn doctor_lists_the_tables_binaries_where_the_tool_finds_them() {
    use bravebot_core::language::Language;
    use bravebot_tests::lsp_client::{bravebot_binary, bravebot_command, run_with_timeout};
    let names: Vec<(&str, &str)> = Language::ALL.iter().map(|l| (l.binary(), "")).collect();
    let bin = fake_servers(&names, None);
    let home = tempfile::tempdir().expect("home");
    let cwd = tempfile::tempdir().expect("cwd");
    let mut command = bravebot_command(&bravebot_binary(), home.path(), cwd.path());
    command
        .arg("doctor")
        .env("PATH", bin.path())
        .env("BRAVEBOT_MODEL_URL", "http://127.0.0.1:9/v1");
    let output = run_with_timeout(command, Duration::from_secs(30));
    let report = String::from_utf8_lossy(&output.stdout);
    for language in Language::ALL {
        let line = format!(
            "language server for {}: {} at {}",
            language.name(),
            language.binary(),
            bin.path().join(language.binary()).display()
        );
        assert!(report.contains(&line), "{line} in:\n{report}");
    }
}

// Verifies: LSP-11
#[test]
fn doctor_reports_a_server_found_only_once_it_runs_and_names_rustups_proxy() {
    use bravebot_tests::lsp_client::{bravebot_binary, bravebot_command, run_with_timeout};
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().expect("bin");
    let script = |name: &str, body: &str| {
        let path = bin.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    };
    // rustup's proxy: rustup itself under the component's name, which fails when the component
    // is not installed, as the real one does.
    let rustup = script(
        "rustup",
        "echo \"error: Unknown binary 'rust-analyzer' in official toolchain\" >&2; exit 1",
    );
    std::fs::hard_link(&rustup, bin.path().join("rust-analyzer")).expect("link the proxy");
    script("gopls", "exit 2");
    // One that never answers is given a bounded wait and stopped.
    script("typescript-language-server", "exec /bin/sleep 600");
    script("clangd", "echo 'clangd version 18'");
    let home = tempfile::tempdir().expect("home");
    let cwd = tempfile::tempdir().expect("cwd");
    let mut command = bravebot_command(&bravebot_binary(), home.path(), cwd.path());
    command
        .arg("doctor")
        .env("PATH", bin.path())
        .env("BRAVEBOT_MODEL_URL", "http://127.0.0.1:9/v1");
    let output = run_with_timeout(command, Duration::from_secs(60));
    let report = String::from_utf8_lossy(&output.stdout);
    let line = |language: &str| {
        report
            .lines()
            .find(|l| l.starts_with(&format!("language server for {language}:")))
            .unwrap_or_else(|| panic!("no line for {language} in:\n{report}"))
            .to_owned()
    };
    let rust = line("Rust");
    assert!(
        rust.contains("rustup's proxy is there")
            && rust.contains("the component is not installed: rustup component add rust-analyzer"),
        "{rust}"
    );
    let go = line("Go");
    assert!(
        go.contains("does not run") && go.contains("status 2") && !go.contains("rustup"),
        "{go}"
    );
    let typescript = line("TypeScript/JavaScript");
    assert!(
        typescript.contains("does not run (asked its version, it did not answer within"),
        "{typescript}"
    );
    let c = line("C/C++");
    assert_eq!(
        c,
        format!(
            "language server for C/C++: clangd at {}",
            bin.path().join("clangd").display()
        )
    );
    // What the servers printed is not the report's business.
    assert!(
        !report.contains("Unknown binary") && !report.contains("version 18"),
        "{report}"
    );
}

// Verifies: LSP-5
#[test]
fn hover_on_a_file_the_person_trusted_is_still_a_reference() {
    let model = FakeModel::start(vec![
        call(
            "call_hover",
            json!({"operation": "hover", "path": "app.py", "line": 2, "character": 5, "why": "look"}),
        ),
        Reply::text("done"),
    ]);
    let bin = fake_servers(&[("pyright-langserver", "")], None);
    let s = start(
        workspace(&[("app.py", "import os\nprint(os.getcwd())\n")]),
        model,
        Some(bin.path()),
        json!({}),
    );
    allow_lsp(&s);
    // Naming the file in the prompt trusts it for the session (TRUST-4).
    s.prompt(&["app.py"]);
    let hover = s.model.tool_result("call_hover");
    assert!(
        hover.contains("quarantined as ref:") && hover.contains("always a reference"),
        "{hover}"
    );
    s.model
        .assert_no_planner_request_contains(FAKE_HOVER_CANARY);
    let status = s.status();
    assert!(
        status["trustRules"].as_array().is_some_and(|r| r
            .iter()
            .any(|r| r["path"] == "app.py" && r["trusted"] == true)),
        "the file was trusted: {status}"
    );
    s.client.shutdown();
}

// Verifies: SESS-10
#[test]
fn an_incognito_session_starts_its_language_server_with_no_cache_under_home() {
    let bin = fake_servers(&[("rust-analyzer", "")], None);
    let symbols = |id: &str| {
        call(
            id,
            json!({"operation": "documentSymbol", "path": "src/main.rs", "why": "outline"}),
        )
    };
    let model = FakeModel::start(vec![
        symbols("call_incognito"),
        Reply::text("done"),
        symbols("call_plain"),
        Reply::text("done"),
    ]);
    let s = start(
        workspace(&[
            (
                "Cargo.toml",
                "[package]\nname = \"p\"\nversion = \"0.1.0\"\n",
            ),
            ("src/main.rs", "fn main() {}\n"),
        ]),
        model,
        Some(bin.path()),
        json!({}),
    );
    allow_lsp(&s);
    let cache = s.client.home().join(".bravebot/lsp");
    let prompt = |session: &str| {
        s.client
            .request(
                "bravebot/session/prompt",
                json!({"sessionId": session, "text": "outline", "files": []}),
            )
            .unwrap_or_else(|e| s.client.fail(&format!("the prompt was refused: {e}")));
    };
    let opened = s
        .client
        .request(
            "bravebot/session/new",
            json!({"cwd": s.root(), "incognito": true}),
        )
        .unwrap_or_else(|e| s.client.fail(&format!("session/new was refused: {e}")));
    let incognito = opened["sessionId"].as_str().expect("an id").to_string();
    prompt(&incognito);
    assert_eq!(
        s.client
            .questions()
            .iter()
            .filter(|q| q.question_kind() == Some("lspStart"))
            .count(),
        1,
        "the incognito session started its server"
    );
    assert!(
        !s.model.tool_result("call_incognito").contains("could not"),
        "{}",
        s.model.tool_result("call_incognito")
    );
    assert!(
        !cache.exists(),
        "an incognito session wrote a language server cache under {}",
        cache.display()
    );
    // The same server started by a session that keeps records has its cache there: the
    // difference is the incognito session's, not the fake server's.
    prompt(&s.session);
    assert!(
        cache.is_dir(),
        "a plain session's rust-analyzer has its cache under {}",
        cache.display()
    );
    s.client.shutdown();
}

// Verifies: LSP-15
#[test]
fn a_delegate_uses_the_sessions_language_server_and_its_approval() {
    let bin = fake_servers(&[("clangd", "")], None);
    let symbols = |id: &str| {
        call(
            id,
            json!({"operation": "documentSymbol", "path": "main.c", "why": "outline"}),
        )
    };
    let model = FakeModel::start_with(|m| {
        m.planner(vec![
            symbols("call_turn"),
            Reply::tool_call(
                "spawn_agent",
                json!({"kind": "checker", "task": "outline main.c", "why": "delegate"}),
            ),
            Reply::text("wait"),
            Reply::text("done"),
        ])
        .delegate(vec![symbols("call_delegate"), Reply::text("outlined")])
    });
    let s = start(
        workspace(&[("main.c", "int main(void) { return 0; }\n")]),
        model,
        Some(bin.path()),
        json!({}),
    );
    s.client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("lspStart" | "delegate") => Answer::choose(q, "allow_once"),
            _ => Answer::choose(q, "reject_once"),
        });
    s.prompt(&[]);
    let kinds: Vec<String> = s
        .client
        .questions()
        .iter()
        .filter_map(|q| q.question_kind().map(str::to_string))
        .collect();
    assert_eq!(
        kinds,
        ["lspStart", "delegate"],
        "the delegate is not asked to start a server the session runs"
    );
    let turn = s.model.tool_result("call_turn");
    // The delegate's own requests carry what its call was answered.
    let delegate: String = s
        .model
        .requests_for("delegate")
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool" && m["tool_call_id"] == "call_delegate")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .next()
        .unwrap_or_else(|| panic!("the delegate's lsp call was answered"));
    assert!(turn.contains("main"), "{turn}");
    assert!(
        delegate.contains("main") && !delegate.contains("refused"),
        "the delegate is answered by the running server: {delegate}"
    );
    let running = servers(&s);
    assert_eq!(
        running.len(),
        1,
        "one server for the session and its delegate: {running:?}"
    );
    s.client.shutdown();
}
