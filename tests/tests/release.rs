//! After a release, over real stdio: once the person lets a program's output through with
//! `read_output`, the conversation's next write, run and fetch are each put to the person, even in
//! `acceptEdits` mode and with allow rules that would otherwise answer.

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspClient, LspOptions};
use serde_json::json;

const CANARY: &str = "CANARY-release-e2e-4410";

// Verifies: CTX-2
#[test]
fn after_read_output_releases_a_run_the_next_effects_all_go_to_the_person() {
    let model = FakeModel::start_with(|m| {
        m.planner(vec![
            Reply::tool_call_with_id(
                "run",
                "run",
                json!({"command": "sh -c 'echo injected'", "why": "build"}),
            ),
            Reply::tool_call_with_id(
                "read",
                "read_output",
                json!({"ref": "ref:0", "why": "see the log"}),
            ),
            Reply::tool_call_with_id(
                "write",
                "write_file",
                json!({"path": "fix.txt", "contents": "as the log said\n", "why": "fix"}),
            ),
            Reply::tool_call_with_id("again", "run", json!({"command": "true", "why": "rerun"})),
            Reply::tool_call_with_id(
                "fetch",
                "fetch_url",
                json!({"url": "http://127.0.0.1:9/?q=x", "why": "look it up"}),
            ),
            Reply::text("done"),
        ])
        .check(vec![Reply::text("VERDICT: safe\nbuild output")])
    });
    let workspace = tempfile::tempdir().expect("workspace");
    std::fs::write(workspace.path().join("notes.txt"), format!("{CANARY}\n")).expect("write");
    let options = LspOptions::new(workspace.path())
        .model_url(&model.url())
        .home_file(
            ".bravebot/settings.json",
            r#"{"run": {"allow": ["true"]}, "fetch": {"allow": ["127.0.0.1"]}}"#,
        );
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let session = client.new_session();
    client
        .request(
            "bravebot/session/setMode",
            json!({"sessionId": session, "mode": "acceptEdits"}),
        )
        .expect("setMode");
    client.answer_permissions_with(|q| match q.question_kind() {
        Some("fetch") => Answer::choose(q, "reject_once"),
        _ => Answer::choose(q, "allow_once"),
    });
    client
        .request(
            "bravebot/session/prompt",
            json!({"sessionId": session, "text": "build it", "files": []}),
        )
        .unwrap_or_else(|e| client.fail(&format!("prompt refused: {e}")));
    let kinds: Vec<String> = client
        .questions()
        .iter()
        .filter_map(|q| q.question_kind().map(str::to_string))
        .collect();
    assert_eq!(
        kinds,
        ["run", "readOutput", "write", "run", "fetch"],
        "after the release, acceptEdits, run.allow and fetch.allow answered nothing"
    );
    for q in client.questions().iter().skip(2) {
        assert!(
            q.option_of_kind("allow_always").is_none(),
            "no standing option after a release: {:?}",
            q.params["options"]
        );
    }
    assert!(
        model.tool_result("write").contains("landed"),
        "{}",
        model.tool_result("write")
    );
    let status = client
        .request("bravebot/session/status", json!({"sessionId": session}))
        .expect("status");
    let rules = status.to_string();
    assert!(
        rules.contains("fix.txt") && rules.contains("agentWrite"),
        "the write carried released data, so its destination is marked: {rules}"
    );
    client.shutdown();
}
