//! How a tool reads its arguments (`tool_args!`): in the order declared, the first argument of
//! the wrong type is the error, named as the planner has always been told; a switch is off
//! unless `true`; a typed argument such as lsp's operation is refused as it is read.

#![allow(clippy::unwrap_used)]

use bravebot_core::screen::{Answer, ToolStatus};
use bravebot_core::settings::Settings;
use bravebot_core::tools::dispatch;
use bravebot_tests::fake_model::FakeModel;
use serde_json::json;
use tokio_util::sync::CancellationToken;

mod common;

use common::{TestScreen, fixture, fixture_in_git};

// Verifies: TOOL-2
#[tokio::test]
async fn arguments_are_read_in_order_and_the_first_of_the_wrong_type_is_named() {
    // In a repository, so read_git is offered (TOOL-7).
    let f = fixture_in_git(
        FakeModel::start(Vec::new()),
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    let cancel = CancellationToken::new();
    let cases = [
        (
            "read_file",
            json!({"path": 3, "offset": "x", "why": "w"}),
            "error: argument `path` of read_file must be a string",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "offset": "x", "why": "w"}),
            "error: argument `offset` of read_file must be a whole number",
        ),
        (
            "list_files",
            json!({"directory": ".", "depth": [1], "why": "w"}),
            "error: argument `depth` of list_files must be a whole number",
        ),
        (
            "edit_file",
            json!({"path": 1, "old_text": 2, "new_text": "x", "why": "w"}),
            "error: argument `path` of edit_file must be a string",
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_text": 2, "new_text": "x", "why": "w"}),
            "error: argument `old_text` of edit_file must be a string",
        ),
        // `kill` is a switch: "yes" is off, not an error; `wait_seconds` is read after it.
        (
            "job_output",
            json!({"job": "job-9", "kill": "yes", "wait_seconds": "soon", "why": "w"}),
            "error: argument `wait_seconds` of job_output must be a whole number",
        ),
        (
            "vet_content",
            json!({"ref": 5, "expects": "x", "why": "w"}),
            "error: argument `ref` of vet_content must be a string",
        ),
        (
            "todo_write",
            json!({"todos": "x", "why": "w"}),
            "error: `todos` must be a list of {content, status}",
        ),
        (
            "todo_write",
            json!({"todos": [{"status": "pending"}], "why": "w"}),
            "error: every todo needs `content`",
        ),
        (
            "ask_user",
            json!({"questions": {}, "why": "w"}),
            "error: `questions` must be a list",
        ),
        // The four tools that read their arguments by hand until they were declared: the first
        // bad argument in declared order is named, and a check of what a value means comes after
        // every argument is read.
        (
            "search",
            json!({"pattern": "a", "directory": 3, "case_sensitive": "maybe", "why": "w"}),
            "error: argument `directory` of search must be a string",
        ),
        (
            "search",
            json!({"pattern": ["a", 1], "offset": "x", "why": "w"}),
            "error: argument `pattern` of search must be a string or a list of strings",
        ),
        (
            "read_git",
            json!({"query": "log", "repository": 5, "count": "x", "why": "w"}),
            "error: argument `repository` of read_git must be a string",
        ),
        (
            "read_git",
            json!({"query": "blame", "count": "x", "why": "w"}),
            "error: argument `count` of read_git must be a whole number",
        ),
        (
            "read_git",
            json!({"query": "log", "messages": "yes", "why": "w"}),
            "error: argument `messages` of read_git must be true or false",
        ),
        (
            "spawn_agent",
            json!({"kind": "reader", "task": " ", "each": 3, "why": "w"}),
            "error: `each` must be a list of strings",
        ),
        (
            "spawn_agent",
            json!({"kind": "reader", "task": "t", "each": ["a", 2], "why": "w"}),
            "error: every entry of `each` must be a string",
        ),
        (
            "spawn_agent",
            json!({"kind": "reader", "task": "t", "mcp_servers": "notes", "why": "w"}),
            "error: `mcp_servers` must be a list of server names",
        ),
        (
            "spawn_processor",
            json!({"reads": ["ref:0"], "about": 7, "instruction": 5, "why": "w"}),
            "error: argument `about` of spawn_processor must be a string",
        ),
        (
            "spawn_processor",
            json!({"reads": [], "instruction": 5, "why": "w"}),
            "error: argument `instruction` of spawn_processor must be a string",
        ),
        (
            "spawn_processor",
            json!({"reads": ["ref:0", "page"], "instruction": "i", "why": "w"}),
            "error: every entry of `reads` must be a reference like ref:2",
        ),
    ];
    for (tool, args, said) in cases {
        let (output, _, _) = dispatch(&f.session, tool, &args.to_string(), &cancel).await;
        assert_eq!(output.status, ToolStatus::Error, "{tool} {args}");
        assert_eq!(output.text.as_str(), said, "{tool} {args}");
    }
    // An operation lsp does not have is refused before `path` is read.
    let (output, _, _) = dispatch(
        &f.session,
        "lsp",
        &json!({"operation": "rename", "path": 5, "why": "w"}).to_string(),
        &cancel,
    )
    .await;
    assert!(
        output
            .text
            .as_str()
            .starts_with("error: `rename` is not an operation of lsp; the operations are "),
        "{}",
        output.text.as_str()
    );
}

// Verifies: TOOL-1
#[tokio::test]
async fn a_call_without_why_still_runs() {
    let f = fixture(
        FakeModel::start(Vec::new()),
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    f.write("notes.md", "plain words\n");
    let cancel = CancellationToken::new();
    let (output, _, _) = dispatch(
        &f.session,
        "list_files",
        &json!({"directory": "."}).to_string(),
        &cancel,
    )
    .await;
    assert_eq!(output.status, ToolStatus::Ok, "{}", output.text.as_str());
    assert!(
        output.text.as_str().contains("notes.md"),
        "{}",
        output.text.as_str()
    );
}

// Verifies: LOOP-6
#[tokio::test]
async fn a_watch_is_refused_past_the_limit_and_in_a_session_running_a_loop() {
    let f = fixture(
        FakeModel::start(Vec::new()),
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    let cancel = CancellationToken::new();
    // Offered as a turn in a session that keeps watches offers it (LOOP-1).
    f.session.state().offers.watch_file = true;
    let watch = |n: usize| json!({"path": format!("w{n}.txt"), "why": "w"}).to_string();
    for n in 0..=bravebot_core::watch::MAX_WATCHES {
        f.write(&format!("w{n}.txt"), "x\n");
    }
    for n in 0..bravebot_core::watch::MAX_WATCHES {
        let (output, _, _) = dispatch(&f.session, "watch_file", &watch(n), &cancel).await;
        assert_eq!(output.status, ToolStatus::Ok, "{}", output.text.as_str());
    }
    let (over, _, _) = dispatch(
        &f.session,
        "watch_file",
        &watch(bravebot_core::watch::MAX_WATCHES),
        &cancel,
    )
    .await;
    assert_eq!(over.status, ToolStatus::Refused);
    assert!(
        over.text.as_str().contains("already keeps 8 watches"),
        "{}",
        over.text.as_str()
    );
    // A session running a loop keeps no watch (LOOP-6).
    let g = fixture(
        FakeModel::start(Vec::new()),
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    g.write("w.txt", "x\n");
    g.session.state().offers.watch_file = true;
    g.session.state().looping = Some(bravebot_core::looping::LoopState {
        id: 1,
        prompt: "check the build".into(),
        interval_seconds: Some(60),
        ticks: 0,
        quiet_ticks: 0,
        stop: CancellationToken::new(),
    });
    let (looping, _, _) = dispatch(
        &g.session,
        "watch_file",
        &json!({"path": "w.txt", "why": "w"}).to_string(),
        &cancel,
    )
    .await;
    assert_eq!(looping.status, ToolStatus::Refused);
    assert!(
        looping.text.as_str().contains("loop"),
        "{}",
        looping.text.as_str()
    );
}

// Verifies: LIST-1
#[tokio::test]
async fn a_listing_past_a_thousand_entries_is_cut_and_says_so() {
    let f = fixture(
        FakeModel::start(Vec::new()),
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
    );
    std::fs::create_dir_all(f.path("many")).unwrap();
    for n in 0..1_100 {
        std::fs::write(f.path(&format!("many/f{n:04}.txt")), "").unwrap();
    }
    let cancel = CancellationToken::new();
    let (output, _, _) = dispatch(
        &f.session,
        "list_files",
        &json!({"directory": "many", "why": "w"}).to_string(),
        &cancel,
    )
    .await;
    let text = output.text.as_str();
    assert!(
        text.contains(
            "[truncated at 1000 entries: narrow the directory, the pattern or the depth]"
        ),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert_eq!(text.lines().filter(|l| l.ends_with(".txt")).count(), 1000);
}
