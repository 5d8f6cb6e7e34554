//! The person's deny rules through turns against the scripted fake model: a denied path is read,
//! searched, listed and asked about by nobody, whatever other rule stands on it.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use bravebot_core::kernel::trust::{RuleOrigin, Scope};
use bravebot_core::screen::{Answer, Question, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::{Value, json};

mod common;

use common::{Fixture, TestScreen, fixture};

/// The screen says yes to everything it is asked: a deny must hold even so.
fn yes(question: &Question) -> Answer {
    Answer::Selected {
        option_id: question
            .options
            .first()
            .map(|o| o.id.clone())
            .unwrap_or_default(),
        text: None,
        accepted_hunks: None,
        edited_text: None,
    }
}

/// A session whose planner makes `calls` (ids c0, c1, ...) and then stops, with somebody
/// watching who would agree to anything.
async fn session_with(
    calls: Vec<(&str, Value)>,
    settings: Settings,
    setup: impl FnOnce(&Fixture),
) -> Fixture {
    let mut replies: Vec<Reply> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (tool, a))| Reply::tool_call_with_id(&format!("c{i}"), tool, a))
        .collect();
    replies.push(Reply::text("done"));
    let model = FakeModel::start_with(|s| s.planner(replies));
    let f = fixture(model, TestScreen::new(true, yes), settings);
    f.write(".env", "TOKEN=DENIED-MARKER-4471\n");
    f.write(
        "secrets/key.txt",
        "DENIED-MARKER-4471 in a denied directory\n",
    );
    f.write(
        "src/lib.rs",
        "// DENIED-MARKER-4471 is named here, in a readable file\n",
    );
    std::os::unix::fs::symlink(f.path(".env"), f.path("env-link")).unwrap();
    setup(&f);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    f
}

fn deny_both(f: &Fixture) {
    f.session.deny_path(Path::new(".env"), Scope::File);
    f.session.deny_path(Path::new("secrets"), Scope::Directory);
    // A trust the person gives afterwards on the same path does not lift the deny.
    f.session.trust_path(Path::new(".env"), Scope::File);
}

fn no_denied_bytes(f: &Fixture) {
    f.model
        .assert_no_planner_request_contains("TOKEN=DENIED-MARKER-4471");
    f.model
        .assert_no_planner_request_contains("in a denied directory");
}

// Verifies: TRUST-7, TRUST-9
#[tokio::test]
async fn a_denied_path_is_not_read_searched_or_listed_and_nobody_is_asked() {
    let f = session_with(
        vec![
            ("read_file", json!({"path": ".env", "why": "x"})),
            ("read_file", json!({"path": "env-link", "why": "x"})),
            ("read_file", json!({"path": "secrets/key.txt", "why": "x"})),
            ("list_files", json!({"directory": "secrets", "why": "x"})),
            (
                "search",
                json!({"pattern": "DENIED-MARKER", "directory": "secrets", "why": "x"}),
            ),
            ("search", json!({"pattern": "DENIED-MARKER", "why": "x"})),
            ("list_files", json!({"directory": ".", "why": "x"})),
            (
                "lsp",
                json!({"operation": "documentSymbol", "path": ".env", "why": "x"}),
            ),
        ],
        Settings::default(),
        deny_both,
    )
    .await;
    for id in ["c0", "c1", "c2"] {
        let r = f.result(id);
        assert!(r.contains("deny rule covers it"), "{id}: {r}");
    }
    for id in ["c3", "c4"] {
        let r = f.result(id);
        assert!(r.contains("deny rule covers it"), "{id}: {r}");
    }
    let search = f.result("c5");
    assert!(
        search.contains("left out unread, by the person's deny rule: .env, secrets"),
        "{search}"
    );
    // Seed 002: a listing holding a denied path is withheld whole, names and all.
    let listing = f.result("c6");
    assert!(
        listing.contains("names are withheld") && !listing.contains("src/lib.rs"),
        "{listing}"
    );
    assert!(f.result("c7").contains("deny rule"), "{}", f.result("c7"));
    no_denied_bytes(&f);
    assert!(
        f.screen.asked().is_empty(),
        "nobody was asked: {:?}",
        f.screen.asked()
    );
    // The rule is the person's, recorded with its origin, and the later trust did not replace it.
    let rules = f.session.trust.lock().rules().cloned().collect::<Vec<_>>();
    assert!(
        rules
            .iter()
            .any(|r| r.path == f.path(".env") && r.origin == RuleOrigin::Denied),
        "{rules:?}"
    );
    assert!(
        f.audit_text()
            .contains(".env denied by the person (origin personDeny)")
    );
}

// Verifies: TRUST-8, TRUST-9
#[tokio::test]
async fn read_deny_in_settings_denies_from_the_first_turn() {
    let settings = Settings {
        read_deny: vec![".env".into(), "secrets".into()],
        ..Settings::default()
    };
    let f = session_with(
        vec![
            ("read_file", json!({"path": ".env", "why": "x"})),
            ("search", json!({"pattern": "DENIED-MARKER", "why": "x"})),
            ("read_file", json!({"path": "src/lib.rs", "why": "x"})),
        ],
        settings,
        |_| {},
    )
    .await;
    assert!(
        f.result("c0").contains("deny rule covers it"),
        "{}",
        f.result("c0")
    );
    assert!(
        f.result("c1").contains("left out unread"),
        "{}",
        f.result("c1")
    );
    assert!(!f.result("c2").contains("deny rule"), "{}", f.result("c2"));
    no_denied_bytes(&f);
    let rules = f.session.trust.lock().rules().cloned().collect::<Vec<_>>();
    assert_eq!(
        rules
            .iter()
            .filter(|r| r.origin == RuleOrigin::DeniedBySettings)
            .count(),
        2,
        "{rules:?}"
    );
}
