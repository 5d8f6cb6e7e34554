//! The content-trust helper through the tools that use it, against the scripted fake model: a
//! verdict covers the bytes it judged, and only text within the budget is sent.

#![allow(clippy::unwrap_used)]

use bravebot_core::screen::{Answer, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::{Value, json};

mod common;

use common::{TestScreen, fixture};

const PLANTED: &str = "canary-judge-3318";

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::tool_call_with_id(id, name, args)
}

fn read(id: &str, path: &str) -> Reply {
    call(id, "read_file", json!({"path": path, "why": "read"}))
}

// Verifies: READ-3, TRUST-5, JUDGE-1, JUDGE-2, JUDGE-4
#[tokio::test]
async fn a_file_changed_after_its_verdict_is_judged_again_and_the_same_bytes_are_not() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            read("r1", "notes.md"),
            read("r2", "notes.md"),
            Reply::text("first turn"),
            read("r3", "notes.md"),
            Reply::text("second turn"),
        ])
        .competent_check(PLANTED)
    });
    let f = fixture(
        model,
        TestScreen::new(false, |_| Answer::Refused),
        Settings::default(),
    );
    f.write("notes.md", "ordinary notes\n");
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert!(
        f.result("r1").contains("ordinary notes"),
        "{}",
        f.result("r1")
    );
    assert!(
        f.result("r2").contains("ordinary notes"),
        "{}",
        f.result("r2")
    );
    assert_eq!(
        f.model.requests_for("check").len(),
        1,
        "the same bytes were judged once"
    );
    f.write("notes.md", &format!("now it says {PLANTED}\n"));
    assert_eq!(f.prompt("again", &[]).await, StopReason::EndTurn);
    assert_eq!(
        f.model.requests_for("check").len(),
        2,
        "changed bytes are judged again"
    );
    let r3 = f.result("r3");
    assert!(r3.contains("quarantined"), "{r3}");
    f.model.assert_no_planner_request_contains(PLANTED);
    let verdicts = f.session.verdicts.lock().unwrap();
    assert_eq!((verdicts.made, verdicts.saved), (2, 1));
}

// Verifies: JUDGE-3
#[tokio::test]
async fn a_large_or_binary_file_is_never_sent_to_a_check() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            read("big", "big.txt"),
            read("bin", "blob.dat"),
            read("small", "small.txt"),
            Reply::text("done"),
        ])
        .competent_check(PLANTED)
    });
    let settings = Settings {
        check_max_bytes: 1024,
        ..Settings::default()
    };
    let f = fixture(model, TestScreen::new(false, |_| Answer::Refused), settings);
    f.write("big.txt", &"a line of text\n".repeat(200));
    std::fs::write(f.path("blob.dat"), b"\x00\x01\x02 binary").unwrap();
    f.write("small.txt", "fits\n");
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    let checks = f.model.requests_for("check");
    assert_eq!(checks.len(), 1, "only the small text file was sent");
    assert!(checks[0].raw_body.contains("fits"));
    assert!(
        f.result("big").contains("larger than the check reads"),
        "{}",
        f.result("big")
    );
    assert!(f.result("bin").contains("not text"), "{}", f.result("bin"));
    assert!(f.result("small").contains("fits"), "{}", f.result("small"));
}
