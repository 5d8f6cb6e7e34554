//! Which tools a session's planner is offered, and that the list it is sent stays the same round
//! after round: `read_git` only in a git repository, `diagnostics` only where the editor answers
//! for them, and what every tool shares said once in the system prompt (TOOL-7..TOOL-9).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use bravebot_core::files::{DiagnosticsScope, EditorDiagnostic, Files};
use bravebot_core::screen::{Answer, BoxFuture, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::{Value, json};

mod common;

use common::{TestScreen, fixture, fixture_in_git, fixture_with_files};

/// The names of the tools a planner request offered, in order.
fn names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// An editor that declared it answers for its diagnostics, and has none.
struct Answering;

impl Files for Answering {
    fn buffer(&self, _path: &Path) -> Option<(Arc<str>, i32)> {
        None
    }

    fn apply_edit<'a>(
        &'a self,
        _path: &'a Path,
        _version: i32,
        _original: &'a str,
        _edits: &'a [bravebot_core::kernel::proposal::LineEdit],
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("not in this test".to_string()) })
    }

    fn answers_diagnostics(&self) -> bool {
        true
    }

    fn diagnostics<'a>(
        &'a self,
        _scope: DiagnosticsScope<'a>,
    ) -> BoxFuture<'a, Result<Vec<EditorDiagnostic>, String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

// Verifies: TOOL-7
#[tokio::test]
async fn read_git_is_offered_in_and_out_of_a_git_repository_as_the_contract_pins() {
    // CONTRACT §4.1 pins `read_git` among the tools offered: out of a repository it is offered
    // still, in its place after search, and its call says there is no repository.
    for in_git in [false, true] {
        let model = FakeModel::start(vec![Reply::text("done")]);
        let screen = TestScreen::new(true, |_| Answer::Refused);
        let f = if in_git {
            fixture_in_git(model, screen, Settings::default())
        } else {
            fixture(model, screen, Settings::default())
        };
        assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
        let offered = names(&f.model.requests_for("planner")[0].body);
        let at = offered
            .iter()
            .position(|t| t == "read_git")
            .unwrap_or_else(|| panic!("read_git offered (in git: {in_git}): {offered:?}"));
        assert_eq!(offered[at - 1], "search");
    }
}

// Verifies: TOOL-7
#[tokio::test]
async fn diagnostics_is_offered_only_where_the_editor_answers_for_them() {
    let model = FakeModel::start(vec![Reply::text("done")]);
    let f = fixture(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert!(!names(&f.model.requests_for("planner")[0].body).contains(&"diagnostics".to_string()));

    let model = FakeModel::start(vec![
        Reply::tool_call_with_id("d", "diagnostics", json!({"why": "errors"})),
        Reply::text("done"),
    ]);
    let g = fixture_with_files(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
        Arc::new(Answering),
    );
    assert_eq!(g.prompt("go", &[]).await, StopReason::EndTurn);
    assert!(names(&g.model.requests_for("planner")[0].body).contains(&"diagnostics".to_string()));
    assert!(!g.result("d").starts_with("error"), "{}", g.result("d"));
}

// Verifies: TOOL-9
#[tokio::test]
async fn the_tool_list_is_the_same_in_every_round_and_turn_of_a_session() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id("r", "read_file", json!({"path": "a.txt", "why": "look"})),
        Reply::tool_call_with_id("s", "search", json!({"pattern": "x", "why": "find"})),
        Reply::text("done"),
        Reply::text("done again"),
    ]);
    let f = fixture_in_git(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    f.write("a.txt", "x\n");
    assert_eq!(f.prompt("go", &["a.txt"]).await, StopReason::EndTurn);
    // A repository made after the session started changes nothing either way.
    std::fs::create_dir(f.path(".git")).unwrap();
    assert_eq!(f.prompt("again", &[]).await, StopReason::EndTurn);
    let requests = f.model.requests_for("planner");
    assert_eq!(requests.len(), 4);
    let first = requests[0].body["tools"].to_string();
    for (at, request) in requests.iter().enumerate() {
        assert_eq!(
            request.body["tools"].to_string(),
            first,
            "request {at} offered another list"
        );
    }
}

// Verifies: TOOL-8
#[tokio::test]
async fn what_every_tool_shares_is_said_once_in_the_system_prompt() {
    let model = FakeModel::start(vec![Reply::text("done")]);
    let f = fixture_in_git(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    let body = &f.model.requests_for("planner")[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system
            .contains("Say `why` on every tool call in one short line: it is shown to the person")
    );
    assert!(
        system.contains("you cannot read it; you may pass the reference to a tool that takes one")
    );
    for tool in body["tools"].as_array().unwrap() {
        let function = &tool["function"];
        assert_eq!(
            function["parameters"]["properties"]["why"],
            json!({"type": "string"}),
            "{}",
            function["name"]
        );
        assert!(
            function["parameters"]["required"]
                .as_array()
                .unwrap()
                .contains(&json!("why"))
        );
        let description = function["description"].as_str().unwrap();
        for said in [
            "pass on but not read",
            "what this call is for",
            "you cannot read, only",
        ] {
            assert!(
                !description.contains(said),
                "{} says again {said:?}",
                function["name"]
            );
        }
    }
}
