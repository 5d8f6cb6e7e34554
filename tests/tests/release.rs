//! After a release, over real stdio: once the person lets a program's output through with
//! `read_output`, the conversation's next write, run and fetch are each put to the person, even in
//! `acceptEdits` mode and with allow rules that would otherwise answer.

use bravebot_tests::fake_model::{FakeModel, Reply, released_run};
use bravebot_tests::lsp_client::Answer;
use bravebot_tests::setup::Setup;
use serde_json::json;

const CANARY: &str = "CANARY-release-e2e-4410";

// Verifies: CTX-2
#[test]
fn after_read_output_releases_a_run_the_next_effects_all_go_to_the_person() {
    let model = FakeModel::start_with(|m| {
        m.planner(
            [
                released_run(),
                vec![
                    Reply::tool_call_with_id(
                        "write",
                        "write_file",
                        json!({"path": "fix.txt", "contents": "as the log said\n", "why": "fix"}),
                    ),
                    Reply::tool_call_with_id(
                        "again",
                        "run",
                        json!({"command": "true", "why": "rerun"}),
                    ),
                    Reply::tool_call_with_id(
                        "fetch",
                        "fetch_url",
                        json!({"url": "http://127.0.0.1:9/?q=x", "why": "look it up"}),
                    ),
                    Reply::text("done"),
                ],
            ]
            .concat(),
        )
        .check(vec![Reply::text("VERDICT: safe\nbuild output")])
    });
    let notes = format!("{CANARY}\n");
    let s = Setup::start_with(
        &[("notes.txt", &notes)],
        model,
        |options, _| {
            options.home_file(
                ".bravebot/settings.json",
                r#"{"run": {"allow": ["true"]}, "fetch": {"allow": ["127.0.0.1"]}}"#,
            )
        },
        json!({}),
    );
    s.set_mode("acceptEdits");
    s.client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("fetch") => Answer::choose(q, "reject_once"),
            _ => Answer::choose(q, "allow_once"),
        });
    s.prompt_text("build it", &[]);
    assert_eq!(
        s.client.question_kinds(),
        ["run", "readOutput", "write", "run", "fetch"],
        "after the release, acceptEdits, run.allow and fetch.allow answered nothing"
    );
    for q in s.client.questions().iter().skip(2) {
        assert!(
            q.option_of_kind("allow_always").is_none(),
            "no standing option after a release: {:?}",
            q.params["options"]
        );
    }
    assert!(
        s.model.tool_result("write").contains("landed"),
        "{}",
        s.model.tool_result("write")
    );
    let rules = s.status().to_string();
    assert!(
        rules.contains("fix.txt") && rules.contains("agentWrite"),
        "the write carried released data, so its destination is marked: {rules}"
    );
    s.client.shutdown();
}
