//! A session record of a conversation that met released content: what it keeps, and what a
//! session taken up from it may still do. Driven through a real release against the fake model.

#![allow(clippy::unwrap_used)]

use bravebot_core::kernel::context::Routing;
use bravebot_core::kernel::trust::RuleOrigin;
use bravebot_core::record::StateDir;
use bravebot_core::screen::{Answer, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::json;

mod common;

use common::{Fixture, TestScreen, fixture};

const CANARY: &str = "CANARY-record-release-9051";

// Verifies: SESS-2, SESS-6
/// Auto-vetting releases a file's bytes into the conversation; the record keeps neither those
/// bytes nor the reply written after them, and a session restored from it has still met
/// untrusted content: its routing is not its own.
#[tokio::test]
async fn a_record_of_a_released_conversation_keeps_no_released_byte_and_stays_tainted() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            Reply::tool_call_with_id(
                "r1",
                "read_file",
                json!({"path": "notes.txt", "why": "read"}),
            ),
            Reply::tool_call_with_id(
                "r2",
                "vet_content",
                json!({"ref": "ref:0", "expects": "meeting notes", "why": "see them"}),
            ),
            Reply::text(format!("The notes say {CANARY}.")),
        ])
        .check(vec![Reply::text("VERDICT: safe\nordinary notes")])
    });
    let settings = Settings {
        vetting_auto: true,
        ..Settings::default()
    };
    let home = tempfile::tempdir().unwrap();
    let state = StateDir::in_home(home.path());
    let f = fixture(
        model,
        TestScreen::new(false, |_| Answer::Refused),
        settings.clone(),
    );
    let f = Fixture {
        session: f.session.keeping_records(state.clone()),
        ..f
    };
    f.write("notes.txt", &format!("{CANARY}\n"));
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("notes.txt"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert!(
        f.result("r2").contains(CANARY),
        "released: {}",
        f.result("r2")
    );

    // The record is written on its own thread (SESS-14): read it once what was handed over is.
    bravebot_core::record::finish_writes();
    let record =
        std::fs::read_to_string(state.session_dir("test").unwrap().join("session.json")).unwrap();
    assert!(!record.contains(CANARY), "{record}");
    assert!(record.contains("\"go\""), "the prompt is kept: {record}");

    let restored = state.load("test").unwrap();
    let g = fixture(
        FakeModel::start(vec![Reply::text("hi")]),
        TestScreen::new(false, |_| Answer::Refused),
        settings,
    );
    assert_eq!(g.session.state().context.routing(), Routing::Own);
    g.session.restore(restored);
    let state = g.session.state();
    assert!(state.context.met_released());
    assert_eq!(state.context.routing(), Routing::PersonOnly);
    assert_eq!(
        g.session
            .trust
            .lock()
            .rule_for(&f.path("notes.txt"))
            .map(|r| r.origin),
        Some(RuleOrigin::AgentWroteUntrusted),
        "the mark the write left is back"
    );
}

// Verifies: LOOP-1
/// After content was released into the conversation, `watch_file` is refused: arming a watch is an
/// effect nobody is asked about, and the context's routing is no longer its own.
#[tokio::test]
async fn a_context_that_met_released_content_arms_no_watch() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            Reply::tool_call_with_id(
                "r1",
                "read_file",
                json!({"path": "notes.txt", "why": "read"}),
            ),
            Reply::tool_call_with_id(
                "r2",
                "vet_content",
                json!({"ref": "ref:0", "expects": "meeting notes", "why": "see them"}),
            ),
            Reply::tool_call_with_id(
                "w",
                "watch_file",
                json!({"path": "plain.txt", "why": "watch"}),
            ),
            Reply::text("done"),
        ])
        .check(vec![Reply::text("VERDICT: safe\nordinary notes")])
    });
    let settings = Settings {
        vetting_auto: true,
        ..Settings::default()
    };
    let f = fixture(model, TestScreen::new(false, |_| Answer::Refused), settings);
    let f = Fixture {
        session: f.session.keeping_watches(),
        ..f
    };
    f.write("notes.txt", "meeting notes\n");
    f.write("plain.txt", "plain\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("notes.txt"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert!(
        f.result("r2").contains("meeting notes"),
        "{}",
        f.result("r2")
    );
    let refused = f.result("w");
    assert!(
        refused.starts_with("refused:") && refused.contains("never put to them"),
        "{refused}"
    );
    assert!(f.session.state().watches.is_empty());
}
