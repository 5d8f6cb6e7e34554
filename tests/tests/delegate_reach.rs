//! What a delegate can reach beyond the workspace, over real stdio against the fake model: the MCP
//! servers its session started (two copies of `tests/src/bin/fake_mcp_server.rs`), narrowed by
//! `mcp_servers`, each call put to the person and its answer a reference; and, where nobody is
//! watching (`bravebot exec`), no delegate at all.

use std::path::Path;
use std::time::Duration;

use bravebot_tests::fake_model::{FakeModel, RecordedRequest, Reply};
use bravebot_tests::lsp_client::{
    Answer, LspClient, LspOptions, bravebot_binary, bravebot_command, run_with_timeout,
};
use serde_json::{Value, json};

/// What the fake server answers an `echo` with: its own words, which no request may carry.
const ECHOED: &str = "echo: NARROW-ECHO-7a1c";

/// Two servers, `fake` and `other`, each the test's MCP server, reading `readable` and writing
/// `writable`.
fn two_servers(readable: &Path, writable: &Path) -> String {
    let server = |log: &str| {
        json!({
            "command": env!("CARGO_BIN_EXE_fake_mcp_server"),
            "args": ["--env-to", writable.join(log).display().to_string()],
            "read": [readable.display().to_string()],
            "write": [writable.display().to_string()]
        })
    };
    json!({"mcp": {"servers": {"fake": server("env-fake"), "other": server("env-other")}}})
        .to_string()
}

/// The delegate requests whose first user message is `task`.
fn of_task<'a>(requests: &'a [RecordedRequest], task: &str) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| {
            r.body["messages"].as_array().is_some_and(|m| {
                m.iter()
                    .find(|m| m["role"] == "user")
                    .is_some_and(|m| m["content"].to_string().contains(task))
            })
        })
        .collect()
}

// Verifies: DELEG-20, DELEG-21, MCP-20
#[test]
fn a_worker_calls_its_sessions_servers_as_narrowed_and_leaves_them_running() {
    let workspace = tempfile::tempdir().expect("workspace");
    let readable = tempfile::tempdir().expect("readable");
    let writable = tempfile::tempdir().expect("writable");
    std::fs::write(readable.path().join("a"), "granted text\n").expect("write");
    let at = |dir: &tempfile::TempDir, file: &str| dir.path().join(file).display().to_string();
    let spawn = |id: &str, kind: &str, task: &str, servers: Option<Value>| {
        let mut args = json!({"kind": kind, "task": task, "why": "hand it over"});
        if let Some(servers) = servers {
            args["mcp_servers"] = servers;
        }
        Reply::tool_call_with_id(id, "spawn_agent", args)
    };
    let model = FakeModel::start_with(|m| {
        m.planner(vec![
            // The turn's own call changes `fake`'s echo (a rug pull): withheld from here on.
            Reply::tool_call_with_id(
                "first",
                "mcp__fake__echo",
                json!({"text": "TURN-ECHO", "why": "try it"}),
            ),
            spawn("unknown", "worker", "UNKNOWN-TASK", Some(json!(["gmail"]))),
            spawn("narrow", "worker", "NARROW-TASK", Some(json!(["other"]))),
            spawn("whole", "worker", "WHOLE-TASK", None),
            spawn("reader", "reader", "READER-TASK", Some(json!(["fake"]))),
            Reply::text("waiting for the delegates"),
            Reply::tool_call_with_id(
                "after",
                "mcp__fake__copy",
                json!({"from": at(&readable, "a"), "to": at(&writable, "a"), "why": "still mine"}),
            ),
            Reply::text("done"),
        ])
        .delegate_when(
            "NARROW-TASK",
            vec![
                Reply::tool_call_with_id(
                    "dcall",
                    "mcp__other__echo",
                    json!({"text": "NARROW-ECHO-7a1c", "why": "repeat it"}),
                ),
                Reply::tool_call_with_id(
                    "dfake",
                    "mcp__fake__copy",
                    json!({"from": at(&readable, "a"), "to": at(&writable, "refused"), "why": "not mine"}),
                ),
                Reply::text("narrow: the server answered with a reference"),
            ],
        )
        .delegate_when("WHOLE-TASK", vec![Reply::text("whole: nothing to do")])
        .delegate_when("READER-TASK", vec![Reply::text("reader: nothing to do")])
    });
    let options = LspOptions::new(workspace.path())
        .model_url(&model.url())
        .home_file(
            ".bravebot/settings.json",
            two_servers(readable.path(), writable.path()),
        )
        .timeout(Duration::from_secs(60));
    let client = LspClient::start(options);
    client.initialize(json!({}));
    client.answer_permissions_with(|q| match q.question_kind() {
        Some("mcpTools") => Answer::select("schemas-only"),
        _ => Answer::choose(q, "allow_once"),
    });
    let session = client.new_session();
    let result = client
        .request(
            "bravebot/session/prompt",
            json!({"sessionId": session, "text": "hand out the work", "files": []}),
        )
        .unwrap_or_else(|e| client.fail(&format!("prompt refused: {e}")));
    assert_eq!(result["stopReason"], "endTurn");
    assert!(
        !model.exhausted().iter().any(|r| r == "delegate"),
        "every delegate answered from its script"
    );

    // A server the run cannot call is refused, naming the ones it can; nothing started.
    let unknown = model.tool_result("unknown");
    assert!(
        unknown.starts_with("refused:")
            && unknown.contains("no grant for the MCP server `gmail`")
            && unknown.contains("the servers it holds are fake, other"),
        "{unknown}"
    );
    let delegates = model.requests_for("delegate");
    assert!(of_task(&delegates, "UNKNOWN-TASK").is_empty());

    // Narrowed to `other`: its tools and none of `fake`'s; the call was put to the person with
    // the delegate's name, and its answer came back as a reference in the delegate's own slots.
    let narrow = of_task(&delegates, "NARROW-TASK");
    assert_eq!(narrow.len(), 3, "three rounds");
    let names = narrow[0].tool_names();
    for held in ["mcp__other__echo", "mcp__other__copy", "write_file"] {
        assert!(names.contains(&held.to_string()), "{held}: {names:?}");
    }
    assert!(
        !names.iter().any(|n| n.starts_with("mcp__fake__")),
        "{names:?}"
    );
    let second = narrow[1].all_text();
    assert!(
        second.contains("mcp__other__echo answered") && second.contains("held back as ref:0"),
        "{second}"
    );
    let third = narrow[2].all_text();
    assert!(
        third.contains("refused: mcp__fake__copy is not offered to this delegate")
            && third.contains("the MCP servers it holds are other"),
        "{third}"
    );
    assert!(
        !writable.path().join("refused").exists(),
        "the refused call reached the server"
    );
    model.assert_no_planner_request_contains(ECHOED);
    model.assert_no_planner_request_contains("echo: TURN-ECHO");
    let questions = client.questions();
    let calls: Vec<_> = questions
        .iter()
        .filter(|q| q.question_kind() == Some("mcpCall"))
        .collect();
    assert_eq!(
        calls.len(),
        3,
        "the turn's two and the delegate's one: {calls:#?}"
    );
    let delegated = calls
        .iter()
        .find(|q| q.params["subject"]["command"] == "mcp__other__echo")
        .expect("the delegate's call was asked");
    assert!(
        delegated.params["why"]
            .as_str()
            .is_some_and(|w| w.starts_with("[delegate 1 (worker)]")),
        "{}",
        delegated.params
    );
    // Started once each, by the turn: no delegate put a start or tools question, not even for
    // the tool withheld since the turn's first call.
    let kinds: Vec<&str> = questions.iter().filter_map(|q| q.question_kind()).collect();
    for once in ["mcpStart", "mcpTools"] {
        assert_eq!(kinds.iter().filter(|k| **k == once).count(), 2, "{kinds:?}");
    }

    // Without `mcp_servers` a worker holds every server the turn may call, as the turn is offered
    // them (the changed echo withheld); a reader holds none.
    let whole = of_task(&delegates, "WHOLE-TASK")[0].tool_names();
    assert!(whole.contains(&"mcp__other__copy".to_string()), "{whole:?}");
    assert!(whole.contains(&"mcp__fake__copy".to_string()), "{whole:?}");
    assert!(!whole.contains(&"mcp__fake__echo".to_string()), "{whole:?}");
    let reader = of_task(&delegates, "READER-TASK")[0].tool_names();
    assert!(!reader.iter().any(|n| n.starts_with("mcp__")), "{reader:?}");
    let reader_started = model.tool_result("reader");
    assert!(
        reader_started.contains("holds none of the MCP servers"),
        "{reader_started}"
    );

    // The delegates ended and the turn's server still answers: copied, and a reference.
    let after = model.tool_result("after");
    assert!(after.contains("ref:"), "{after}");
    assert_eq!(
        std::fs::read_to_string(writable.path().join("a")).expect("copied after"),
        "granted text\n"
    );

    // The audit trail names the delegate that made the call.
    let audit = client
        .request("bravebot/session/audit", json!({"sessionId": session}))
        .expect("audit");
    let details: Vec<String> = audit["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["detail"].as_str().map(str::to_string))
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d == "delegate 1 (worker): mcpCall mcp__other__echo: approved"),
        "{details:#?}"
    );

    // Status lists each server once, running, and the delegates done: nothing new to draw.
    let status = client
        .request("bravebot/session/status", json!({"sessionId": session}))
        .expect("status");
    let servers = status["mcpServers"].as_array().expect("servers");
    assert_eq!(servers.len(), 2, "{status}");
    assert!(
        servers.iter().all(|s| s["state"] == "running, confined"),
        "{status}"
    );
    let listed = status["delegates"].as_array().expect("delegates");
    assert_eq!(listed.len(), 3, "{status}");
    assert!(listed.iter().all(|d| d["state"] == "done"), "{status}");
    client.shutdown();
}

// Verifies: DELEG-22
#[test]
fn exec_offers_spawn_agent_but_refuses_every_call_before_anything_is_asked() {
    let model = FakeModel::start_with(|m| {
        m.planner(vec![
            Reply::tool_call_with_id(
                "spawn",
                "spawn_agent",
                json!({"kind": "reader", "task": "read the readme", "why": "delegate"}),
            ),
            Reply::text("I read it myself."),
        ])
        .delegate(vec![Reply::text("never asked")])
    });
    let workspace = tempfile::tempdir().expect("workspace");
    let home = tempfile::tempdir().expect("home");
    let mut command = bravebot_command(&bravebot_binary(), home.path(), workspace.path());
    command
        .args(["exec", "What does the readme say?"])
        .env("BRAVEBOT_MODEL_URL", model.url())
        .env("BRAVEBOT_MODEL", "fake-model")
        .env("BRAVEBOT_MODEL_API", "openai");
    let output = run_with_timeout(command, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let planner = model.requests_for("planner");
    assert!(
        planner[0].tool_names().contains(&"spawn_agent".to_string()),
        "offered, as ask_user is"
    );
    let refused = model.tool_result("spawn");
    assert!(
        refused.starts_with("refused:") && refused.contains("nobody is watching"),
        "{refused}"
    );
    assert!(model.requests_for("delegate").is_empty(), "no delegate ran");
    assert!(
        !stdout.contains("refused without asking"),
        "no question was put: {stdout}"
    );
    assert!(
        stdout.contains("refused: nobody is watching this run to approve a delegate"),
        "{stdout}"
    );
}
