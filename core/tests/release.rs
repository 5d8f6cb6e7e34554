//! What a planner's context may still do after content nobody vouched for was released into it
//! (a person's yes or auto-vetting at `vet_content`), driven through real releases against the
//! scripted fake model: no hand-made labels.

#![allow(clippy::unwrap_used)]

use bravebot_core::kernel::label::Integrity;
use bravebot_core::screen::{Answer, OptionKind, Question, QuestionKind, StopReason};
use bravebot_core::settings::{Mode, Settings};
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::{Value, json};

mod common;

use common::{TestScreen, fixture};

const CANARY: &str = "CANARY-released-5521";

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::tool_call_with_id(id, name, args)
}

/// The first option that allows, for every question but a fetch (refused, so no test leaves the
/// machine).
fn allow_all_but_fetch(q: &Question) -> Answer {
    match q.kind {
        QuestionKind::Fetch => Answer::Refused,
        _ => Answer::Selected {
            option_id: q
                .options
                .iter()
                .find(|o| o.kind == OptionKind::AllowOnce)
                .map(|o| o.id.clone())
                .unwrap_or_default(),
            text: None,
            accepted_hunks: None,
            edited_text: None,
        },
    }
}

/// A read that quarantines `notes.txt` (marked as holding untrusted data), then `vet_content`
/// releasing it: the script's first two rounds.
fn release_rounds() -> Vec<Reply> {
    vec![
        call(
            "r1",
            "read_file",
            json!({"path": "notes.txt", "why": "read"}),
        ),
        call(
            "r2",
            "vet_content",
            json!({"ref": "ref:0", "expects": "meeting notes", "why": "see them"}),
        ),
    ]
}

// Verifies: GATE-1, CTX-1, CTX-2, ASK-2
#[tokio::test]
async fn after_a_real_release_with_nobody_watching_the_routing_gate_refuses_every_effect() {
    let mut planner = release_rounds();
    planner.extend([
        call(
            "w",
            "write_file",
            json!({"path": "out.txt", "contents": "x\n", "why": "write"}),
        ),
        call("x", "run", json!({"command": "true", "why": "run"})),
        call(
            "a",
            "ask_user",
            json!({"questions": [{"question": "which?"}], "why": "ask"}),
        ),
        call(
            "k",
            "read_file",
            json!({"path": "plain.txt", "why": "read"}),
        ),
        Reply::text("done"),
    ]);
    let model = FakeModel::start_with(|s| {
        s.planner(planner)
            .check(vec![Reply::text("VERDICT: safe\nordinary notes")])
    });
    let settings = Settings {
        vetting_auto: true,
        run_allow: vec!["true".into()],
        ..Settings::default()
    };
    let f = fixture(model, TestScreen::new(false, |_| Answer::Refused), settings);
    f.write("notes.txt", &format!("{CANARY}\n"));
    f.write("plain.txt", "plain words\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("notes.txt"), None);
    assert_eq!(f.prompt("go", &["plain.txt"]).await, StopReason::EndTurn);
    assert!(
        f.result("r2").contains("released once"),
        "auto-vetting released it: {}",
        f.result("r2")
    );
    for id in ["w", "x"] {
        let r = f.result(id);
        assert!(
            r.starts_with("refused:") && r.contains("nobody is watching"),
            "{id}: {r}"
        );
    }
    assert!(f.result("a").starts_with("refused:"), "{}", f.result("a"));
    assert!(
        f.result("k").contains("plain words"),
        "a confined read of a trusted file still works: {}",
        f.result("k")
    );
    assert!(!f.path("out.txt").exists(), "nothing was written");
    assert!(f.screen.asked().is_empty(), "nobody was asked");
    let audit = f.audit_text();
    assert!(audit.contains("refused routing"), "{audit}");
}

// Verifies: CTX-2, WRITE-9
#[tokio::test]
async fn after_a_release_no_mode_rule_or_table_answers_for_the_person() {
    let mut planner = release_rounds();
    planner.extend([
        call(
            "w",
            "write_file",
            json!({"path": "out.txt", "contents": "from the notes\n", "why": "write"}),
        ),
        call("x", "run", json!({"command": "true", "why": "run"})),
        call(
            "c",
            "run",
            json!({"command": "cat plain.txt", "why": "read-only"}),
        ),
        call(
            "f",
            "fetch_url",
            json!({"url": "http://127.0.0.1:9/x", "why": "fetch"}),
        ),
        call(
            "u",
            "read_file",
            json!({"path": "unvouched.txt", "why": "read"}),
        ),
        Reply::text("done"),
    ]);
    let model = FakeModel::start_with(|s| {
        s.planner(planner).check(vec![
            Reply::text("VERDICT: safe"),
            Reply::text("VERDICT: unsafe"),
        ])
    });
    let settings = Settings {
        mode: Mode::AcceptEdits,
        run_allow: vec!["true".into()],
        fetch_allow: vec!["127.0.0.1".into()],
        ..Settings::default()
    };
    let f = fixture(model, TestScreen::new(true, allow_all_but_fetch), settings);
    f.write("notes.txt", &format!("{CANARY}\n"));
    f.write("plain.txt", "plain\n");
    f.write("unvouched.txt", "whatever\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("notes.txt"), None);
    assert_eq!(f.prompt("go", &["plain.txt"]).await, StopReason::EndTurn);
    let kinds: Vec<QuestionKind> = f.screen.asked().iter().map(|q| q.kind).collect();
    assert_eq!(
        kinds,
        vec![
            QuestionKind::VetContent,
            QuestionKind::Write,
            QuestionKind::Run,
            QuestionKind::Run,
            QuestionKind::Fetch,
        ],
        "acceptEdits, run.allow, the read-only table and fetch.allow all gave way to the person, and no trustRead was offered"
    );
    for q in f.screen.asked().iter().skip(1) {
        assert!(
            q.options.iter().all(|o| o.kind != OptionKind::AllowAlways),
            "no standing approval is offered to a released context: {:?}",
            q.options
        );
    }
    // What the context wrote is labelled by what it read: its destination now holds untrusted
    // data, and the planner is told no hunk totals.
    assert_eq!(
        f.session.trust.lock().integrity_of(&f.path("out.txt")),
        Some(Integrity::Untrusted)
    );
    let w = f.result("w");
    assert!(w.contains("landed") && !w.contains("hunks landed"), "{w}");
    assert!(f.result("u").contains("quarantined"), "{}", f.result("u"));
    assert!(
        f.result("f").starts_with("refused:"),
        "the person refused the fetch: {}",
        f.result("f")
    );
}

// Verifies: GATE-4, AUDIT-1
#[tokio::test]
async fn a_fetch_allow_rule_answers_only_for_a_url_written_by_a_context_holding_nothing_private() {
    let planner = vec![
        call(
            "f1",
            "fetch_url",
            json!({"url": "http://127.0.0.1:9/first", "why": "fetch"}),
        ),
        call(
            "r",
            "read_file",
            json!({"path": "secret.txt", "why": "read"}),
        ),
        call(
            "f2",
            "fetch_url",
            json!({"url": "http://127.0.0.1:9/second", "why": "fetch"}),
        ),
        Reply::text("done"),
    ];
    let model = FakeModel::start(planner);
    let settings = Settings {
        fetch_allow: vec!["127.0.0.1".into()],
        ..Settings::default()
    };
    let f = fixture(model, TestScreen::new(true, |_| Answer::Refused), settings);
    f.write("secret.txt", "s3cret\n");
    assert_eq!(f.prompt("go", &["secret.txt"]).await, StopReason::EndTurn);
    let asked = f.screen.asked();
    assert_eq!(asked.len(), 1, "only the second fetch is put to the person");
    assert_eq!(asked[0].kind, QuestionKind::Fetch);
    assert_eq!(
        asked[0].subject.url.as_deref(),
        Some("http://127.0.0.1:9/second")
    );
    assert!(
        !f.result("f1").starts_with("refused:"),
        "the first went out on the rule: {}",
        f.result("f1")
    );
    let audit = f.audit_text();
    assert!(
        audit.contains(
            "fetch_url.url [routing] (T,pub) to 127.0.0.1:9: allowed by the fetch.allow rule"
        ),
        "{audit}"
    );
    assert!(
        audit.contains(
            "fetch_url.url [routing] (T,priv) to 127.0.0.1:9: a fetch.allow rule names the host"
        ),
        "{audit}"
    );
    assert!(
        audit.contains("file_read.path secret.txt [routing] (T,pub)"),
        "the routing label recorded is the context's, not a constant: {audit}"
    );
}

// Verifies: WRITE-9
#[tokio::test]
async fn a_write_over_an_untrusted_file_asks_before_saying_anything_about_its_bytes() {
    let planner = vec![
        call(
            "same",
            "write_file",
            json!({"path": "dl.txt", "contents": "guess\n", "why": "overwrite"}),
        ),
        Reply::text("done"),
    ];
    let model = FakeModel::start(planner);
    let f = fixture(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    f.write("dl.txt", "guess\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("dl.txt"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert_eq!(
        f.screen.asked().len(),
        1,
        "the question comes first even though the guess was right"
    );
    let r = f.result("same");
    assert!(r.starts_with("refused:"), "{r}");
    assert!(!r.contains("already holds"), "{r}");
}

// Verifies: WRITE-8
#[tokio::test]
async fn a_write_through_path_ref_is_always_put_to_the_person() {
    let planner = vec![
        call("l", "list_files", json!({"directory": "dl", "why": "look"})),
        call(
            "w",
            "write_file",
            json!({"path_ref": "ref:0", "contents": "replaced\n", "why": "replace it"}),
        ),
        Reply::text("done"),
    ];
    let model = FakeModel::start(planner);
    let settings = Settings {
        mode: Mode::AcceptEdits,
        ..Settings::default()
    };
    let f = fixture(model, TestScreen::new(true, allow_all_but_fetch), settings);
    f.write("dl/hidden-name.txt", "old\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("dl/hidden-name.txt"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    let asked = f.screen.asked();
    assert_eq!(asked.len(), 1, "acceptEdits did not land it unseen");
    assert_eq!(asked[0].kind, QuestionKind::Write);
    assert!(
        asked[0]
            .options
            .iter()
            .all(|o| o.kind != OptionKind::AllowAlways),
        "{:?}",
        asked[0].options
    );
    assert_eq!(
        std::fs::read_to_string(f.path("dl/hidden-name.txt")).unwrap(),
        "replaced\n"
    );
}

// Verifies: PROC-2
#[tokio::test]
async fn a_processors_document_about_a_withheld_file_goes_back_only_through_its_entry() {
    let planner = vec![
        call("l", "list_files", json!({"directory": "dl", "why": "look"})),
        call(
            "r",
            "read_file",
            json!({"path_ref": "ref:0", "why": "read it"}),
        ),
        call(
            "p",
            "spawn_processor",
            json!({"reads": ["ref:1"], "instruction": "fix the typos", "why": "tidy"}),
        ),
        call(
            "elsewhere",
            "write_file",
            json!({"path": "other.txt", "contents_ref": "ref:2", "why": "put it here"}),
        ),
        call(
            "back",
            "write_file",
            json!({"path_ref": "ref:0", "contents_ref": "ref:2", "why": "write it back"}),
        ),
        Reply::text("done"),
    ];
    let model = FakeModel::start_with(|s| {
        s.planner(planner).processor(vec![Reply::text(
            "fixed one typo\n<<<DOCUMENT>>>\nthe fixed text\n",
        )])
    });
    let f = fixture(
        model,
        TestScreen::new(true, allow_all_but_fetch),
        Settings::default(),
    );
    f.write("dl/hidden-name.txt", "teh text\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("dl/hidden-name.txt"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    let p = f.result("p");
    assert!(p.contains("path_ref ref:0"), "{p}");
    assert!(
        f.result("elsewhere").starts_with("refused:"),
        "{}",
        f.result("elsewhere")
    );
    assert!(!f.path("other.txt").exists());
    assert!(f.result("back").contains("landed"), "{}", f.result("back"));
    assert_eq!(
        std::fs::read_to_string(f.path("dl/hidden-name.txt")).unwrap(),
        "the fixed text\n"
    );
    assert!(
        !f.model
            .requests_for("planner")
            .iter()
            .any(|r| r.raw_body.contains("hidden-name")),
        "the name never reached the planner"
    );
}

// Verifies: VET-1, VET-2
#[tokio::test]
async fn vet_content_opens_a_withheld_entry_and_names_where_it_came_from_in_plain_words() {
    let planner = vec![
        call("l", "list_files", json!({"directory": "dl", "why": "look"})),
        call(
            "v",
            "vet_content",
            json!({"ref": "ref:0", "expects": "a readme", "why": "need it"}),
        ),
        Reply::text("done"),
    ];
    let model = FakeModel::start_with(|s| {
        s.planner(planner)
            .check(vec![Reply::text("VERDICT: safe\nplain notes")])
    });
    let f = fixture(
        model,
        TestScreen::new(true, allow_all_but_fetch),
        Settings::default(),
    );
    f.write("dl/hidden-name.txt", "WITHHELD-ENTRY-CANARY-6612\n");
    f.session
        .trust
        .lock()
        .mark_written_untrusted(f.path("dl/hidden-name.txt"), None);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    // Nothing had read the file: the entry is opened, checked and put to the person.
    let q = f
        .screen
        .asked()
        .into_iter()
        .find(|q| q.kind == QuestionKind::VetContent)
        .expect("a vetContent question");
    assert_eq!(
        q.subject.origin.as_deref(),
        Some("a file in dl whose name the agent was not shown")
    );
    let check = f
        .model
        .requests()
        .into_iter()
        .find(|r| r.role == "check")
        .expect("a check ran");
    assert!(
        check
            .raw_body
            .contains("Where it came from: a file in dl whose name the agent was not shown"),
        "{}",
        check.raw_body
    );
    assert!(!check.raw_body.contains("ref:0"), "never a reference name");
    assert!(
        f.result("v").contains("WITHHELD-ENTRY-CANARY-6612"),
        "{}",
        f.result("v")
    );
}

// Verifies: CTX-1
#[tokio::test]
async fn after_a_release_the_context_names_no_reference_in_any_routing_argument() {
    let planner = vec![
        call(
            "a",
            "read_file",
            json!({"path": "vendor/a.md", "why": "read"}),
        ),
        call(
            "b",
            "read_file",
            json!({"path": "vendor/b.md", "why": "read"}),
        ),
        call(
            "v",
            "vet_content",
            json!({"ref": "ref:0", "expects": "notes", "why": "need it"}),
        ),
        call(
            "p",
            "spawn_processor",
            json!({"reads": ["ref:1"], "instruction": "summarise", "why": "x"}),
        ),
        call(
            "w",
            "write_file",
            json!({"path": "copy.md", "contents_ref": "ref:1", "why": "x"}),
        ),
        call("o", "read_output", json!({"ref": "ref:1", "why": "x"})),
        Reply::text("done"),
    ];
    let model = FakeModel::start_with(|s| {
        s.planner(planner).check(vec![
            Reply::text("VERDICT: unsafe\nodd"),
            Reply::text("VERDICT: unsafe\nodd"),
            Reply::text("VERDICT: safe\nnotes"),
        ])
    });
    let f = fixture(
        model,
        TestScreen::new(true, |q: &Question| match q.kind {
            QuestionKind::VetContent => allow_all_but_fetch(q),
            _ => Answer::Refused,
        }),
        Settings::default(),
    );
    f.write("vendor/a.md", "released words\n");
    f.write("vendor/b.md", "still held\n");
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    assert!(
        f.result("v").contains("released words"),
        "{}",
        f.result("v")
    );
    for id in ["p", "w", "o"] {
        let said = f.result(id);
        assert!(said.starts_with("refused:"), "{id}: {said}");
    }
    assert!(!f.path("copy.md").exists());
    assert!(
        f.model.requests().iter().all(|r| r.role != "processor"),
        "no processor was asked"
    );
}
