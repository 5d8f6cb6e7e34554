//! What a read presents is what was checked or shown: turns driven inside the library against the
//! scripted fake model, with the file changed on disk while the person is being asked about it.

#![allow(clippy::unwrap_used)]

use bravebot_core::screen::{Answer, QuestionKind, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::json;

mod common;

use common::{TestScreen, fixture};

// Verifies: READ-9
#[tokio::test]
async fn a_file_changed_while_its_trust_read_question_is_open_is_presented_as_it_was_shown() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_read",
            "read_file",
            json!({"path": "n.md", "why": "read it"}),
        ),
        Reply::text("ok"),
    ]);
    let settings = Settings {
        vetting_reads: false,
        ..Settings::default()
    };
    // The person is shown the file; before they answer, somebody rewrites it on disk.
    let screen = TestScreen::new(true, |q| {
        let uri = q.subject.uri.clone().unwrap_or_default();
        let path = uri.trim_start_matches("file://").to_string();
        std::fs::write(&path, "swapped-after-it-was-shown-9931\n").unwrap();
        Answer::select("trust")
    });
    let f = fixture(model, screen, settings);
    f.write("n.md", "as-shown-to-the-person-4417\n");
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert_eq!(f.screen.asked()[0].kind, QuestionKind::TrustRead);
    let result = f.result("call_read");
    assert!(result.contains("as-shown-to-the-person-4417"), "{result}");
    f.model
        .assert_no_planner_request_contains("swapped-after-it-was-shown-9931");
}

// Verifies: READ-10
#[tokio::test]
async fn a_trusted_path_linking_to_a_file_marked_untrusted_is_read_as_untrusted() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_read",
            "read_file",
            json!({"path": "AGENTS.md", "why": "read the instructions"}),
        ),
        Reply::text("ok"),
    ]);
    let f = fixture(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    f.write("CLAUDE.md", "written-from-a-fetched-page-2208\n");
    std::os::unix::fs::symlink("CLAUDE.md", f.path("AGENTS.md")).unwrap();
    // As a write of content nobody vouched for through the link would leave it: the mark is on
    // the file the link leads to, and the default rule on the link itself is still there.
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("CLAUDE.md"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    let system = f.model.requests_for("planner")[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("AGENTS.md was not read") && system.contains("marked untrusted"),
        "{system}"
    );
    let result = f.result("call_read");
    assert!(result.contains("quarantined"), "{result}");
    f.model
        .assert_no_planner_request_contains("written-from-a-fetched-page-2208");
}
