//! Watches and loops end to end over real stdio: `watch_file` firing a turn when its file changes
//! and not otherwise, a loop ticking at a test-sized interval, a self-paced loop paced by
//! `schedule_next`, and where the two tools are offered at all.
//!
//! Every wait is for an event (a `turnEnded` update, a response); the loop's interval is made one
//! second through `loop.minSeconds` in the test's home settings.

use std::path::Path;

use bravebot_tests::fake_model::{FakeModel, Reply, message_text};
use bravebot_tests::lsp_client::{
    Answer, LspClient, LspOptions, SESSION_UPDATE, bravebot_command, default_timeout,
    run_with_timeout,
};
use serde_json::{Value, json};
use tempfile::TempDir;

const FAST: &str = r#"{"loop": {"minSeconds": 1}}"#;

fn workspace() -> TempDir {
    let dir = tempfile::tempdir().expect("workspace");
    std::fs::write(dir.path().join("build.log"), "compiling\n").expect("write");
    std::fs::write(dir.path().join("other.txt"), "unrelated\n").expect("write");
    std::fs::create_dir_all(dir.path().join("logs")).expect("mkdir");
    dir
}

fn start(ws: &Path, model: &FakeModel) -> LspClient {
    let client = LspClient::start(
        LspOptions::new(ws)
            .model_url(&model.url())
            .home_file(".bravebot/settings.json", FAST),
    );
    client.initialize(json!({}));
    client.answer_permissions_with(|q| Answer::choose(q, "reject_once"));
    client
}

fn ok(client: &LspClient, method: &str, params: Value) -> Value {
    client
        .request(method, params)
        .unwrap_or_else(|e| client.fail(&format!("{method} was refused: {e}")))
}

/// Waits until `count` more turns of `session` have ended.
fn await_turns(client: &LspClient, session: &str, count: usize) {
    let mut seen = 0;
    while seen < count {
        let params = client.next_notification(SESSION_UPDATE);
        if params["sessionId"] == session && params["update"]["kind"] == "turnEnded" {
            seen += 1;
        }
    }
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn read_file_description(request: &Value) -> String {
    request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["function"]["name"] == "read_file"))
        .and_then(|t| t["function"]["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn last_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|ms| ms.iter().rev().find(|m| m["role"] == "user"))
        .map(message_text)
        .unwrap_or_default()
}

// Verifies: LOOP-1, LOOP-6, LOOP-7, PROTO-14
/// A watch is armed on one existing file without a question; a directory, a missing file and a
/// path outside the workspace are refused with the reason; status lists the watch; a write to a
/// neighbour fires nothing, and a write to the file starts one turn with the driver's sentence.
#[test]
fn a_watch_fires_a_turn_when_its_file_changes_and_not_otherwise() {
    let ws = workspace();
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id("w_dir", "watch_file", json!({"path": "logs", "why": "w"})),
        Reply::tool_call_with_id(
            "w_none",
            "watch_file",
            json!({"path": "nope.log", "why": "w"}),
        ),
        Reply::tool_call_with_id(
            "w_out",
            "watch_file",
            json!({"path": "/etc/hostname", "why": "w"}),
        ),
        Reply::tool_call_with_id(
            "w_ok",
            "watch_file",
            json!({"path": "build.log", "why": "w"}),
        ),
        Reply::text("I will tell you when the build log changes."),
        // The firing's turn.
        Reply::text("The build log changed."),
        // A prompt of the person's after it.
        Reply::text("Nothing else."),
    ]);
    let client = start(ws.path(), &model);
    let id = client.new_session();
    let done = ok(
        &client,
        "bravebot/session/prompt",
        json!({"sessionId": id, "text": "tell me when the build log changes"}),
    );
    assert_eq!(done["stopReason"], "endTurn", "{done}");
    assert!(client.questions().is_empty(), "a watch asks nothing");
    let first = &model.requests_for("planner")[0].body;
    let offered = tool_names(first);
    assert!(offered.iter().any(|t| t == "watch_file"), "{offered:?}");
    assert!(
        read_file_description(first).contains("watch_file is the better answer"),
        "read_file's change-token note points at watch_file"
    );
    for (call, says) in [
        ("w_dir", "cannot be watched"),
        ("w_none", "cannot be watched"),
        ("w_out", "outside the places"),
    ] {
        let result = model.tool_result(call);
        assert!(
            result.starts_with("refused:") && result.contains(says),
            "{call}: {result}"
        );
    }
    assert!(model.tool_result("w_ok").contains("build.log is watched"));
    let status = ok(&client, "bravebot/session/status", json!({"sessionId": id}));
    assert_eq!(
        status["watches"],
        json!([{"path": "build.log", "fired": 0}])
    );

    await_turns(&client, &id, 1);
    std::fs::write(ws.path().join("other.txt"), "changed too\n").expect("write");
    std::fs::write(ws.path().join("build.log"), "compiling\nerror[E0308]\n").expect("write");
    await_turns(&client, &id, 1);
    let planner = model.requests_for("planner");
    assert_eq!(planner.len(), 6, "one turn for the firing");
    let fired = last_user_text(&planner[5].body);
    assert!(
        fired.starts_with("[bravebot: build.log, a file this session watches, changed."),
        "{fired}"
    );
    let offered = tool_names(&planner[5].body);
    assert!(
        !offered.iter().any(|t| t == "schedule_next"),
        "a firing's turn is not offered schedule_next: {offered:?}"
    );
    ok(
        &client,
        "bravebot/session/prompt",
        json!({"sessionId": id, "text": "anything else?"}),
    );
    let planner = model.requests_for("planner");
    assert_eq!(planner.len(), 7, "the neighbour's write fired nothing");
    let firings = planner
        .iter()
        .filter(|r| last_user_text(&r.body).contains("a file this session watches"))
        .count();
    assert_eq!(firings, 1);
    let status = ok(&client, "bravebot/session/status", json!({"sessionId": id}));
    assert_eq!(
        status["watches"],
        json!([{"path": "build.log", "fired": 1}])
    );
    client.shutdown();
}

// Verifies: LOOP-1, LOOP-2, PROTO-24
/// A loop with an interval sends its prompt now and again, unchanged, with no `schedule_next`
/// offered; the interval asked for is held to the minimum; stopping it says how many ticks ran.
#[test]
fn a_loop_with_an_interval_ticks_until_it_is_stopped() {
    let ws = workspace();
    let model = FakeModel::start(vec![
        Reply::text("tick one"),
        Reply::text("tick two"),
        Reply::text("tick three"),
        Reply::text("tick four"),
    ]);
    let client = start(ws.path(), &model);
    let id = client.new_session();
    let started = ok(
        &client,
        "bravebot/session/loop",
        json!({"sessionId": id, "prompt": "is the build green?", "intervalSeconds": 0}),
    );
    assert_eq!(started["intervalSeconds"], 1, "held to the minimum");
    let again = client
        .request(
            "bravebot/session/loop",
            json!({"sessionId": id, "prompt": "a second loop"}),
        )
        .expect_err("one loop at a time");
    assert!(
        again["message"]
            .as_str()
            .unwrap_or_default()
            .contains("running a loop"),
        "{again}"
    );
    await_turns(&client, &id, 2);
    let stopped = ok(
        &client,
        "bravebot/session/loop/stop",
        json!({"sessionId": id}),
    );
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert!(stopped["ticks"].as_u64() >= Some(2), "{stopped}");
    let planner = model.requests_for("planner");
    for request in &planner[..2] {
        assert_eq!(last_user_text(&request.body), "is the build green?");
        let offered = tool_names(&request.body);
        assert!(!offered.iter().any(|t| t == "schedule_next"), "{offered:?}");
    }
    let stopped = ok(
        &client,
        "bravebot/session/loop/stop",
        json!({"sessionId": id}),
    );
    assert_eq!(stopped["stopped"], false, "nothing runs now");
    let listed = ok(&client, "bravebot/session/list", json!({}));
    assert_eq!(listed["sessions"][0]["sessionId"], id, "{listed}");
    assert_eq!(listed["sessions"][0]["title"], "is the build green?");
    client.shutdown();
}

// Verifies: LOOP-1, LOOP-3, LOOP-4, LOOP-5
/// A line that calls `schedule_next` starts a self-paced loop over itself: the delay is held to
/// the minimum and said back, the reason and the quiet ticks reach the screen, the next tick sends
/// the line again unchanged and is offered `schedule_next` again; a call leaving out `noop` is
/// refused rather than filled in.
#[test]
fn schedule_next_paces_a_loop_over_the_line_the_person_typed() {
    let ws = workspace();
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "s_bad",
            "schedule_next",
            json!({"delay_seconds": 5, "why": "later"}),
        ),
        Reply::tool_call_with_id(
            "s_ok",
            "schedule_next",
            json!({"delay_seconds": 0, "noop": true, "reason": "the queue is still full", "why": "later"}),
        ),
        Reply::text("Still full; I will look again."),
        // The tick.
        Reply::text("The queue drained."),
    ]);
    let client = start(ws.path(), &model);
    let id = client.new_session();
    let line = "tell me when the queue drains";
    let done = ok(
        &client,
        "bravebot/session/prompt",
        json!({"sessionId": id, "text": line}),
    );
    assert_eq!(done["stopReason"], "endTurn", "{done}");
    let bad = model.tool_result("s_bad");
    assert!(bad.contains("needs the argument `noop`"), "{bad}");
    let good = model.tool_result("s_ok");
    assert!(good.contains("the next look is in 1 seconds"), "{good}");
    let summary = client
        .updates(&id)
        .into_iter()
        .find(|u| u["kind"] == "toolResult" && u["callId"] == "s_ok")
        .expect("the result was drawn");
    assert_eq!(
        summary["summary"],
        "next look in 1 s: the queue is still full; quiet ticks: 1"
    );
    await_turns(&client, &id, 2);
    let planner = model.requests_for("planner");
    assert_eq!(planner.len(), 4);
    assert!(
        tool_names(&planner[0].body)
            .iter()
            .any(|t| t == "schedule_next")
    );
    let tick = &planner[3].body;
    assert_eq!(
        last_user_text(tick),
        line,
        "the line is sent again unchanged"
    );
    assert!(
        tool_names(tick).iter().any(|t| t == "schedule_next"),
        "a self-paced tick is offered schedule_next"
    );
    client.shutdown();
}

// Verifies: LOOP-1, TOOL-1
/// A one-shot run is offered neither tool.
#[test]
fn a_one_shot_run_is_offered_neither_watch_file_nor_schedule_next() {
    let ws = workspace();
    let home = tempfile::tempdir().expect("home");
    let model = FakeModel::start(vec![Reply::text("done")]);
    let mut command = bravebot_command(
        &bravebot_tests::lsp_client::bravebot_binary(),
        home.path(),
        ws.path(),
    );
    command
        .args(["exec", "tell me when build.log changes"])
        .env("BRAVEBOT_MODEL_URL", model.url())
        .env("BRAVEBOT_MODEL", "fake-model")
        .env("BRAVEBOT_MODEL_API", "openai");
    let output = run_with_timeout(command, default_timeout());
    assert!(output.status.success(), "{output:?}");
    let first = &model.requests_for("planner")[0].body;
    let offered = tool_names(first);
    assert!(offered.iter().any(|t| t == "read_file"), "{offered:?}");
    assert!(!read_file_description(first).contains("watch_file"));
    assert!(
        !offered
            .iter()
            .any(|t| t == "watch_file" || t == "schedule_next"),
        "{offered:?}"
    );
}
