//! End-to-end tests of questions that wait, over real stdio with the fake model: a question nobody
//! answers within `questions.timeoutSeconds` is refused, the editor is told to take it down, the
//! chat and the audit trail say it timed out, the turn goes on, and an answer after that is
//! refused; the setting is the person's (home file or client), never a workspace's.

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspOptions, REQUEST_PERMISSION};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

/// A turn that writes `a.txt` once and then says it is done.
fn one_write() -> FakeModel {
    FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_write",
            "write_file",
            json!({"path": "a.txt", "contents": "hello\n", "why": "greet"}),
        ),
        Reply::text("done"),
    ])
}

fn timeout_of(s: &Setup) -> Value {
    s.status()["questionTimeoutSeconds"].clone()
}

// Verifies: ATTN-1, ATTN-2, ATTN-4, PROTO-38
#[test]
fn a_question_nobody_answers_in_time_is_refused_the_turn_goes_on_and_a_late_answer_is_refused() {
    let s = Setup::start_with(
        &[],
        one_write(),
        |options, _| options,
        json!({"questions": {"timeoutSeconds": 1}}),
    );
    // Nobody is at the editor: the question is never answered.
    s.client.answer_permissions_with(|_| Answer::Hold);
    let result = s.prompt(&[]);
    // The turn went on past the refusal and ended as the model said.
    assert_eq!(result["stopReason"], "endTurn", "{result}");
    assert_eq!(s.model.requests_for("planner").len(), 2);
    let told = s.model.tool_result("call_write");
    assert!(told.starts_with("refused:"), "{told}");
    assert!(!s.path("a.txt").exists(), "nothing was written");

    let questions = s.client.questions();
    assert_eq!(questions.len(), 1);
    let q = &questions[0];
    let id = q.question_id().expect("a question id").to_owned();
    // The editor was told the question is no longer waiting, and the chat why.
    let updates = s.client.updates(&s.session);
    let closed = updates
        .iter()
        .position(|u| u["kind"] == "questionClosed" && u["questionId"] == id.as_str())
        .unwrap_or_else(|| panic!("no questionClosed for {id}: {updates:#?}"));
    // Said in the server's own words (a notice), never framed as words nobody vouched for.
    assert!(
        !updates.iter().any(|u| u["kind"] == "remark"),
        "{updates:#?}"
    );
    let remark = updates
        .iter()
        .position(|u| {
            u["kind"] == "notice"
                && u["text"].as_str().is_some_and(|t| {
                    t.contains("within 1 s (questions.timeoutSeconds), so it was refused")
                        && t.contains(q.params["title"].as_str().unwrap_or("?"))
                })
        })
        .unwrap_or_else(|| panic!("no notice saying the question timed out: {updates:#?}"));
    let ended = updates
        .iter()
        .position(|u| u["kind"] == "turnEnded")
        .expect("the turn ended");
    assert!(closed < remark && remark < ended, "{updates:#?}");
    // The audit trail names the timeout, and records the refusal like any other.
    let audit = s.audit_details();
    assert!(
        audit.iter().any(|d| d
            == "write question: nobody answered within 1 s (questions.timeoutSeconds), refused"),
        "{audit:#?}"
    );
    assert!(
        audit
            .iter()
            .any(|d| d.starts_with("write a.txt") && d.contains("refused")),
        "{audit:#?}"
    );

    // The person comes back and answers yes, both ways an editor answers: each is refused.
    s.client.reply(q, Answer::choose(q, "allow_once"));
    let late = s
        .client
        .request(
            "workspace/executeCommand",
            json!({"command": "bravebot.answer", "arguments": [{"questionId": id, "optionId": q.option_of_kind("allow_once")}]}),
        )
        .expect("the command is answered");
    assert_eq!(late["accepted"], false, "{late}");
    assert!(
        late["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not pending")),
        "{late}"
    );
    assert!(!s.path("a.txt").exists(), "a late yes wrote nothing");
    assert!(
        !s.audit_details().iter().any(|d| d.contains("allowed")),
        "{:#?}",
        s.audit_details()
    );
    s.client.shutdown();
}

// Verifies: ATTN-1, ATTN-4
#[test]
fn a_question_answered_in_time_is_not_refused() {
    let s = Setup::start_with(
        &[],
        one_write(),
        |options, _| options,
        json!({"questions": {"timeoutSeconds": 30}}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    assert_eq!(s.prompt(&[])["stopReason"], "endTurn");
    assert_eq!(s.disk("a.txt"), "hello\n");
    let updates = s.client.updates(&s.session);
    assert!(
        !updates.iter().any(|u| u["kind"] == "questionClosed"),
        "{updates:#?}"
    );
    s.client.shutdown();
}

// Verifies: ATTN-3
#[test]
fn the_timeout_is_set_by_the_home_file_or_the_client_and_never_by_the_workspace() {
    // Unset, a question waits until it is answered.
    let s = Setup::start(&[], FakeModel::start(vec![]));
    assert_eq!(timeout_of(&s), Value::Null);
    s.client.shutdown();
    // A workspace's file cannot shorten the wait the person gets.
    let s = Setup::start(
        &[(
            ".bravebot/settings.json",
            r#"{"questions": {"timeoutSeconds": 1}}"#,
        )],
        FakeModel::start(vec![]),
    );
    assert_eq!(timeout_of(&s), Value::Null);
    s.client.shutdown();
    // The home file sets it ...
    let home = |options: LspOptions, _: &std::path::Path| {
        options.home_file(
            ".bravebot/settings.json",
            r#"{"questions": {"timeoutSeconds": 300}}"#,
        )
    };
    let s = Setup::start_with(&[], FakeModel::start(vec![]), home, json!({}));
    assert_eq!(timeout_of(&s), json!(300));
    s.client.shutdown();
    // ... and the client's initializationOptions over it.
    let s = Setup::start_with(
        &[],
        FakeModel::start(vec![]),
        home,
        json!({"questions": {"timeoutSeconds": 45}}),
    );
    assert_eq!(timeout_of(&s), json!(45));
    s.client.shutdown();
}

// Verifies: ATTN-4, PROTO-38
#[test]
fn a_cancelled_turn_takes_its_question_down_in_the_editor() {
    let s = Setup::start(&[], one_write());
    s.client.answer_permissions_with(|_| Answer::Hold);
    let prompt = s.send_prompt(&[]);
    let q = s.client.next_server_request(REQUEST_PERMISSION);
    let id = q.question_id().expect("a question id").to_owned();
    s.client
        .notify("bravebot/session/cancel", json!({"sessionId": s.session}));
    let result = s.client.response(prompt).expect("the prompt ends");
    assert_eq!(result["stopReason"], "cancelled", "{result}");
    let updates = s.client.updates(&s.session);
    assert!(
        updates
            .iter()
            .any(|u| u["kind"] == "questionClosed" && u["questionId"] == id.as_str()),
        "{updates:#?}"
    );
    // No timeout was set, so nothing says one passed.
    assert!(
        !updates
            .iter()
            .any(|u| u["kind"] == "remark" || u["kind"] == "notice"),
        "{updates:#?}"
    );
    s.client.shutdown();
}
