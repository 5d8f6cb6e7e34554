//! Auto-vetting's switches through the real binary with the fake model: the standing key a clean
//! vetting prompt offers, the record it writes, the mode it turns on for the session and the ones
//! opened after, `read_output`'s auto-release, the editors' `bravebot/vetting/set`, and
//! `bravebot exec --vet` over a recorded `off`.

use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::time::Duration;

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, bravebot_binary, bravebot_command, run_with_timeout};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

/// The option the standing key is offered as.
const KEY: &str = "auto";

/// A run of `echo WORD` and a `read_output` of what it printed, each call with ids of its own.
fn run_then_read(tag: &str) -> Vec<Reply> {
    vec![
        Reply::tool_call_with_id(
            &format!("run-{tag}"),
            "run",
            json!({"command": format!("sh -c 'echo OUTPUT-{tag}'"), "why": "build"}),
        ),
        Reply::tool_call_with_id(
            &format!("read-{tag}"),
            "read_output",
            json!({"ref": "ref:0", "why": "see the log"}),
        ),
        Reply::text("done"),
    ]
}

fn option_ids(question: &Value) -> Vec<String> {
    question["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["optionId"].as_str().map(str::to_string))
        .collect()
}

fn prompt(s: &Setup, session: &str) {
    s.client
        .request(
            "bravebot/session/prompt",
            json!({"sessionId": session, "text": "build it", "files": []}),
        )
        .unwrap_or_else(|e| s.client.fail(&format!("the prompt was refused: {e}")));
}

fn new_session(s: &Setup) -> Value {
    s.client
        .request("bravebot/session/new", json!({"cwd": s.root()}))
        .unwrap_or_else(|e| s.client.fail(&format!("session/new was refused: {e}")))
}

fn status(s: &Setup, session: &str) -> Value {
    s.client
        .request("bravebot/session/status", json!({"sessionId": session}))
        .unwrap_or_else(|e| s.client.fail(&format!("status was refused: {e}")))
}

fn audit(s: &Setup, session: &str) -> String {
    s.client
        .request("bravebot/session/audit", json!({"sessionId": session}))
        .unwrap_or_else(|e| s.client.fail(&format!("audit was refused: {e}")))
        .to_string()
}

fn vetting_updates(s: &Setup, session: &str) -> Vec<Value> {
    s.client
        .updates(session)
        .into_iter()
        .filter(|u| u["kind"] == "autoVetting")
        .collect()
}

/// Answers a run question once and a release question with the standing key where it is offered,
/// keeping the output quarantined where it is not.
fn answer_with_the_key(s: &Setup) {
    s.client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("readOutput") if option_ids(&q.params).iter().any(|o| o == KEY) => {
                Answer::select(KEY)
            }
            Some("readOutput") => Answer::choose(q, "reject_once"),
            _ => Answer::choose(q, "allow_once"),
        });
}

// Verifies: VET-20, VET-21, VET-22, VET-23, VET-26
#[test]
fn the_standing_key_appears_only_after_a_clean_check_writes_the_record_and_auto_releases_the_next_clean_output()
 {
    let model = FakeModel::start_with(|m| {
        m.planner(
            [
                run_then_read("unsafe"),
                run_then_read("clean"),
                run_then_read("auto"),
            ]
            .concat(),
        )
        .check(vec![
            Reply::text("VERDICT: unsafe\nit gives orders"),
            Reply::text("VERDICT: safe\nbuild output"),
            Reply::text("VERDICT: safe\nbuild output"),
        ])
    });
    let s = Setup::start(&[("README.md", "a project\n")], model);
    answer_with_the_key(&s);
    let record = s.client.home().join(".bravebot").join("vetting");
    assert_eq!(
        status(&s, &s.session)["autoVetting"],
        json!({"on": false, "source": "default"})
    );

    // An unsafe verdict: the question offers no standing key, and nothing is written.
    prompt(&s, &s.session);
    let unsafe_question = s.client.questions().last().cloned().expect("a question");
    assert_eq!(unsafe_question.question_kind(), Some("readOutput"));
    assert!(
        !option_ids(&unsafe_question.params).contains(&KEY.to_string()),
        "no standing key under an unsafe verdict: {}",
        unsafe_question.params["options"]
    );
    assert!(!record.exists());

    // A clean check, in a session of its own (a release closes a context to further references):
    // the key is offered, says what it writes, and choosing it records `on` privately.
    let clean = new_session(&s);
    let clean = clean["sessionId"].as_str().expect("an id").to_string();
    prompt(&s, &clean);
    let clean_question = s.client.questions().last().cloned().expect("a question");
    assert_eq!(clean_question.question_kind(), Some("readOutput"));
    let key = clean_question.params["options"]
        .as_array()
        .expect("options")
        .iter()
        .find(|o| o["optionId"] == KEY)
        .cloned()
        .unwrap_or_else(|| panic!("no standing key: {}", clean_question.params["options"]));
    let words = key["name"].as_str().expect("words");
    assert!(
        words.contains("~/.bravebot/vetting") && words.contains("[check: nothing found]"),
        "{words}"
    );
    assert_eq!(key["kind"], "allow_once");
    assert_eq!(
        std::fs::read_to_string(&record).expect("the record"),
        "on\n"
    );
    let mode = std::fs::metadata(&record)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir = std::fs::metadata(record.parent().expect("dir"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(dir & 0o777, 0o700);
    assert!(
        s.model.tool_result("read-clean").contains("OUTPUT-clean"),
        "the key shows the bytes once too"
    );
    // The session it was chosen in turns the mode on at once, says so in its chat, and the
    // settings file was not written.
    assert_eq!(
        status(&s, &clean)["autoVetting"],
        json!({"on": true, "source": "~/.bravebot/vetting"})
    );
    assert_eq!(
        vetting_updates(&s, &clean),
        [json!({"kind": "autoVetting", "on": true, "source": "~/.bravebot/vetting"})]
    );
    assert!(!s.client.home().join(".bravebot/settings.json").exists());
    assert!(vetting_updates(&s, &s.session).is_empty());

    // A session opened after reads the record: it says so at its top, and a clean check on a
    // run's output answers for the person.
    let later = new_session(&s);
    assert_eq!(
        later["autoVetting"],
        json!({"on": true, "source": "~/.bravebot/vetting"})
    );
    let later = later["sessionId"].as_str().expect("an id").to_string();
    let asked = s.client.question_kinds().len();
    prompt(&s, &later);
    assert_eq!(
        s.client.question_kinds()[asked..],
        ["run"],
        "no readOutput question under auto-vetting"
    );
    let told = s.model.tool_result("read-auto");
    assert!(told.contains("OUTPUT-auto"), "{told}");
    assert!(
        told.contains("released once by an automatic check (auto-vetting), not by the person"),
        "the planner is told the check released it: {told}"
    );
    assert!(!told.contains("released once by the person"), "{told}");
    assert!(
        audit(&s, &later).contains("released once by auto-vetting"),
        "{}",
        audit(&s, &later)
    );
    s.client.shutdown();
}

// Verifies: VET-22, VET-23
#[test]
fn an_incognito_session_is_offered_no_standing_key_and_a_plain_session_says_nothing() {
    let model = FakeModel::start_with(|m| {
        m.planner(run_then_read("incognito"))
            .check(vec![Reply::text("VERDICT: safe\nbuild output")])
    });
    let s = Setup::start(&[("README.md", "a project\n")], model);
    answer_with_the_key(&s);
    let opened = s
        .client
        .request(
            "bravebot/session/new",
            json!({"cwd": s.root(), "incognito": true}),
        )
        .unwrap_or_else(|e| s.client.fail(&format!("session/new was refused: {e}")));
    assert_eq!(opened["autoVetting"]["on"], false);
    let incognito = opened["sessionId"].as_str().expect("an id").to_string();
    prompt(&s, &incognito);
    let question = s.client.questions().last().cloned().expect("a question");
    assert_eq!(question.question_kind(), Some("readOutput"));
    let ids = option_ids(&question.params);
    assert!(
        ids.contains(&"show".to_string()) && !ids.contains(&KEY.to_string()),
        "a session that leaves nothing behind is offered no key that writes a record: {ids:?}"
    );
    assert!(!s.client.home().join(".bravebot/vetting").exists());
    assert!(vetting_updates(&s, &incognito).is_empty());
    s.client.shutdown();
}

// Verifies: VET-24
#[test]
fn the_editors_switch_records_the_choice_and_reaches_open_sessions_at_once() {
    let model = FakeModel::start_with(|m| {
        m.planner(run_then_read("after-off"))
            .check(vec![Reply::text("VERDICT: safe\nbuild output")])
    });
    let s = Setup::start_with(
        &[("README.md", "a project\n")],
        model,
        |options, _| options.home_file(".bravebot/settings.json", r#"{"vetting": {"auto": true}}"#),
        json!({}),
    );
    // Here the person keeps output quarantined, standing key or not: only the switch changes.
    s.client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("readOutput") => Answer::choose(q, "reject_once"),
            _ => Answer::choose(q, "allow_once"),
        });
    let incognito = s
        .client
        .request(
            "bravebot/session/new",
            json!({"cwd": s.root(), "incognito": true}),
        )
        .expect("incognito")["sessionId"]
        .as_str()
        .expect("an id")
        .to_string();
    assert_eq!(
        status(&s, &s.session)["autoVetting"],
        json!({"on": true, "source": "~/.bravebot/settings.json"})
    );
    let record = s.client.home().join(".bravebot").join("vetting");

    // Off: recorded (not removed, so the settings key cannot turn it back on), and every open
    // session, the incognito one too, stops auto-vetting at once and says so.
    let off = s
        .client
        .request("bravebot/vetting/set", json!({"on": false}))
        .expect("vetting/set off");
    assert_eq!(off["on"], false);
    let mut reached: Vec<String> = vec![s.session.clone(), incognito.clone()];
    reached.sort();
    assert_eq!(off["sessions"], json!(reached));
    assert_eq!(std::fs::read_to_string(&record).expect("record"), "off\n");
    for session in [&s.session, &incognito] {
        assert_eq!(
            status(&s, session)["autoVetting"],
            json!({"on": false, "source": "~/.bravebot/vetting"})
        );
        assert_eq!(
            vetting_updates(&s, session),
            [json!({"kind": "autoVetting", "on": false, "source": "~/.bravebot/vetting"})]
        );
    }
    // A clean check now asks: the recorded off holds over the settings key.
    prompt(&s, &s.session);
    assert_eq!(s.client.question_kinds(), ["run", "readOutput"]);
    assert!(new_session(&s)["autoVetting"]["on"] == false);

    // On: recorded, and it reaches the sessions that read the record, not the incognito one.
    let on = s
        .client
        .request("bravebot/vetting/set", json!({"on": true}))
        .expect("vetting/set on");
    assert!(
        !on["sessions"]
            .as_array()
            .expect("sessions")
            .contains(&json!(incognito)),
        "{on}"
    );
    assert_eq!(std::fs::read_to_string(&record).expect("record"), "on\n");
    assert_eq!(status(&s, &s.session)["autoVetting"]["on"], true);
    assert_eq!(status(&s, &incognito)["autoVetting"]["on"], false);
    assert_eq!(vetting_updates(&s, &s.session).len(), 2);

    // Anything but a boolean is refused and records nothing.
    assert!(
        s.client
            .request("bravebot/vetting/set", json!({"on": "maybe"}))
            .is_err()
    );
    assert_eq!(std::fs::read_to_string(&record).expect("record"), "on\n");
    s.client.shutdown();
}

/// Runs `bravebot exec ARGS` in a workspace holding a file nobody vouched for, with `recorded` in
/// `~/.bravebot/vetting`; the planner reads the file (the check holds it back) and asks to see it.
fn exec_with_record(recorded: &str, args: &[&str], canary: &str) -> (Output, FakeModel) {
    let model = FakeModel::start_with(|m| {
        m.planner(vec![
            Reply::tool_call_with_id(
                "read",
                "read_file",
                json!({"path": "vendor/notes.txt", "why": "read"}),
            ),
            Reply::tool_call_with_id(
                "vet",
                "vet_content",
                json!({"ref": "ref:0", "expects": "notes", "why": "see them"}),
            ),
            Reply::text("done"),
        ])
        .check(vec![
            Reply::text("VERDICT: unsafe\nodd"),
            Reply::text("VERDICT: safe\nnotes"),
        ])
    });
    let workspace = tempfile::tempdir().expect("workspace");
    let home = tempfile::tempdir().expect("home");
    std::fs::create_dir_all(workspace.path().join("vendor")).expect("mkdir");
    std::fs::write(
        workspace.path().join("vendor/notes.txt"),
        format!("{canary}\n"),
    )
    .expect("write");
    std::fs::create_dir_all(home.path().join(".bravebot")).expect("mkdir");
    std::fs::write(home.path().join(".bravebot/vetting"), recorded).expect("write");
    let mut command = bravebot_command(&bravebot_binary(), home.path(), workspace.path());
    command
        .args(args)
        .env("BRAVEBOT_MODEL_URL", model.url())
        .env("BRAVEBOT_MODEL", "fake-model")
        .env("BRAVEBOT_MODEL_API", "openai");
    let output = run_with_timeout(command, Duration::from_secs(30));
    assert_eq!(
        std::fs::read_to_string(home.path().join(".bravebot/vetting")).expect("record"),
        recorded,
        "exec never writes the record"
    );
    (output, model)
}

// Verifies: VET-23, VET-25, BIN-20
#[test]
fn exec_vet_outranks_a_recorded_off_and_says_so_at_the_top_of_the_transcript() {
    let canary = "CANARY-exec-vet-7c21";
    let (output, model) = exec_with_record("off\n", &["exec", "--vet", "read the notes"], canary);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.starts_with("Auto-vetting is on (from --vet)"),
        "the banner comes first: {stdout}"
    );
    let told = model.tool_result("vet");
    assert!(told.contains(canary), "{told}");
    assert!(told.contains("automatic check"), "{told}");

    // Without the flag the recorded off holds: nobody is asked, so nothing is released, and the
    // transcript carries no banner.
    let (output, model) = exec_with_record("off\n", &["exec", "--json", "read the notes"], canary);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(!stdout.contains("autoVetting"), "{stdout}");
    model.assert_no_planner_request_contains(canary);

    // With --json the banner is the first line, as the wire update.
    let (output, _model) = exec_with_record("off\n", &["exec", "--json", "--vet", "read"], canary);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        first,
        json!({"kind": "autoVetting", "on": true, "source": "--vet"})
    );
}
