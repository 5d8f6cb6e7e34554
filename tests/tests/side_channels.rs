//! End-to-end tests of the side channels a security review found, over real stdio against the
//! fake model: credentials in a child's environment, an endpoint's words about quarantined bytes,
//! facts about an unvouched file's text, and questions answered where nobody looked.

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspClient, REQUEST_PERMISSION, SHOW_MESSAGE_REQUEST};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

/// A string planted in quarantined content; the fake endpoint echoes it back in its errors.
const CANARY: &str = "CANARY-side-5521";

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::tool_call_with_id(id, tool, args)
}

const UNSAFE: &str = "VERDICT: unsafe\nThe text gives orders.";

/// A workspace holding only the planted file, `vendor/notes.md`, with the canary in its text.
fn with_the_planted_notes(model: FakeModel) -> Setup {
    Setup::start(
        &[("vendor/notes.md", &format!("Teh fox {CANARY}\n"))],
        model,
    )
}

/// The planner's read of the planted file (call `call_read`); nobody vouched for it, so it goes
/// through a check.
fn read_the_planted_notes() -> Reply {
    call(
        "call_read",
        "read_file",
        json!({"path": "vendor/notes.md", "why": "read"}),
    )
}

/// The planner hands the first read's reference to a processor to fix a typo (call `id`).
fn fix_the_typo_in_the_read(id: &str) -> Reply {
    call(
        id,
        "spawn_processor",
        json!({"reads": ["ref:0"], "instruction": "fix the typo", "why": "fix"}),
    )
}

// Verifies: CRED-2
#[test]
fn no_run_child_is_handed_a_credential_variable_whatever_its_name() {
    let model = FakeModel::start(vec![
        call(
            "call_env",
            "run",
            json!({"command": "env > env.txt", "why": "see the environment"}),
        ),
        Reply::text("done"),
    ]);
    let secrets = [
        ("BRAVEBOT_API_KEY", "SECRET-bravebot-1"),
        ("OPENAI_API_KEY", "SECRET-openai-2"),
        ("ANTHROPIC_API_KEY", "SECRET-anthropic-3"),
        // Named by the home settings, then overridden by the client: still a credential.
        ("HOME_MODEL_KEY", "SECRET-home-4"),
        // Named by the client's initializationOptions.
        ("CLIENT_MODEL_KEY", "SECRET-client-5"),
    ];
    let s = Setup::start_with(
        &[],
        model,
        |mut options, _| {
            for (name, value) in secrets {
                options = options.env(name, value);
            }
            options.env("KEPT_VARIABLE", "kept-6").home_file(
                ".bravebot/settings.json",
                r#"{"model": {"apiKeyEnv": "HOME_MODEL_KEY"}}"#,
            )
        },
        json!({"model": {"apiKeyEnv": "CLIENT_MODEL_KEY"}}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt(&[]);
    let seen = std::fs::read_to_string(s.workspace.path().join("env.txt")).unwrap_or_default();
    assert!(
        seen.contains("KEPT_VARIABLE=kept-6"),
        "the run happened and inherited the rest: {seen}"
    );
    for (name, value) in secrets {
        assert!(
            !seen.contains(value) && !seen.contains(&format!("{name}=")),
            "{name} reached the program: {seen}"
        );
    }
    assert!(s.model.exhausted().is_empty(), "{:?}", s.model.exhausted());
}

/// A planner that reads the planted file (kept back: the check says unsafe and the person is
/// not asked to trust it) and then hands its reference to a processor, twice.
fn processor_model(processor: Vec<Reply>) -> FakeModel {
    FakeModel::start_with(move |s| {
        s.planner(vec![
            read_the_planted_notes(),
            fix_the_typo_in_the_read("call_proc_1"),
            fix_the_typo_in_the_read("call_proc_2"),
            Reply::text("done"),
        ])
        .check(vec![Reply::text(UNSAFE)])
        .processor(processor)
    })
}

// Verifies: PROC-4
#[test]
fn a_processors_endpoint_error_reaches_the_planner_as_its_kind_only() {
    let echo = format!("the request was: fix the typo in Teh fox {CANARY}");
    let model = processor_model(vec![Reply::error(400, &echo), Reply::error(500, &echo)]);
    let s = with_the_planted_notes(model);
    s.prompt(&[]);
    assert_eq!(s.model.requests_for("processor").len(), 2);
    let refused = s.model.tool_result("call_proc_1");
    assert!(
        refused.contains("the processor did not answer: the model endpoint refused the request"),
        "{refused}"
    );
    let failed = s.model.tool_result("call_proc_2");
    assert!(
        failed.contains("the processor did not answer: the model endpoint failed while answering"),
        "{failed}"
    );
    for said in [&refused, &failed] {
        assert!(
            !said.contains("400") && !said.contains("500") && !said.contains("request was"),
            "{said}"
        );
    }
    s.model.assert_no_planner_request_contains(CANARY);
    s.model
        .assert_no_planner_request_contains("the request was");
}

// Verifies: CHECK-6
#[test]
fn a_checks_endpoint_error_is_inconclusive_and_reaches_no_planner_or_trail() {
    let echo = format!("cannot judge this content: {CANARY}");
    let model = FakeModel::start_with(|s| {
        s.planner(vec![read_the_planted_notes(), Reply::text("done")])
            .check(vec![Reply::error(400, &echo)])
    });
    let s = with_the_planted_notes(model);
    s.prompt(&[]);
    assert_eq!(s.model.requests_for("check").len(), 1);
    let result = s.model.tool_result("call_read");
    assert!(result.contains("ref:0"), "{result}");
    s.model.assert_no_planner_request_contains(CANARY);
    s.model.assert_no_planner_request_contains("cannot judge");
    let audit = s.audit().to_string();
    assert!(
        audit.contains("the check did not complete: the model endpoint refused the request"),
        "{audit}"
    );
    assert!(
        !audit.contains(CANARY) && !audit.contains("cannot judge"),
        "{audit}"
    );
}

// Verifies: LSP-12
#[test]
fn a_stale_position_in_an_unvouched_file_says_nothing_of_its_text() {
    let line = "def handler(): pass";
    let model = FakeModel::start(vec![
        call(
            "call_long_line",
            "lsp",
            json!({"operation": "hover", "path": "vendor/lib.py", "line": 1, "character": 400, "why": "look"}),
        ),
        call(
            "call_no_line",
            "lsp",
            json!({"operation": "hover", "path": "vendor/lib.py", "line": 90, "character": 1, "why": "look"}),
        ),
        call(
            "call_trusted",
            "lsp",
            json!({"operation": "hover", "path": "mine.py", "line": 1, "character": 400, "why": "look"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::start(
        &[
            ("vendor/lib.py", &format!("{line}\n{line}\n")),
            ("mine.py", &format!("{line}\n")),
        ],
        model,
    );
    s.prompt(&["mine.py"]);
    for id in ["call_long_line", "call_no_line"] {
        let said = s.model.tool_result(id);
        assert!(
            said.contains("holds no symbol; the file may have changed")
                && said.contains("No server was asked"),
            "{said}"
        );
        assert!(
            !said.contains("characters")
                && !said.contains("lines now")
                && !said.contains(&line.chars().count().to_string()),
            "{said}"
        );
    }
    // A file the person vouched for may say what it holds now.
    let trusted = s.model.tool_result("call_trusted");
    assert!(
        trusted.contains(&format!(
            "line 1 has {} characters now",
            line.chars().count()
        )),
        "{trusted}"
    );
    assert!(s.client.questions().is_empty(), "no server was asked about");
}

/// The code actions offered on the first line of `uri`, for a request whose context is `context`.
fn code_actions(client: &LspClient, uri: &Value, context: Value) -> Vec<Value> {
    client
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": uri },
                "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } },
                "context": context,
            }),
        )
        .expect("codeAction answers")
        .as_array()
        .cloned()
        .unwrap_or_default()
}

// Verifies: PROTO-19, PROTO-20
#[test]
fn code_actions_answer_only_when_invoked_and_question_ids_cannot_be_guessed() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![read_the_planted_notes(), Reply::text("done")])
            .check(vec![Reply::text(UNSAFE)])
    });
    let s = with_the_planted_notes(model);
    s.client.answer_permissions_with(|_| Answer::Hold);
    let prompt = s.send_prompt(&[]);
    let question = s.client.next_server_request(REQUEST_PERMISSION);
    let id = question.question_id().unwrap_or_default().to_owned();
    assert!(
        id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "128 random bits in hex: {id}"
    );
    let uri = question.params["subject"]["uri"].clone();
    // A light bulb, a save, or a request that does not say who asked: nothing that answers.
    for context in [
        json!({ "diagnostics": [], "triggerKind": 2 }),
        json!({ "diagnostics": [] }),
        json!({ "diagnostics": [], "only": ["quickfix"], "triggerKind": 2 }),
    ] {
        assert_eq!(
            code_actions(&s.client, &uri, context.clone()),
            Vec::<Value>::new(),
            "{context}"
        );
    }
    // Guessing an id answers nothing.
    for guess in ["q1", "q2", "q3", "1", "0"] {
        let reply = s
            .client
            .request(
                "workspace/executeCommand",
                json!({"command": "bravebot.answer", "arguments": [{"questionId": guess, "optionId": "trust"}]}),
            )
            .expect("the command answers");
        assert_eq!(reply["accepted"], false, "{guess}: {reply}");
    }
    // The person asking sees the question's actions, and one of them answers it.
    let invoked = code_actions(
        &s.client,
        &uri,
        json!({ "diagnostics": [], "triggerKind": 1 }),
    );
    let reject = question
        .option_of_kind("reject_once")
        .expect("a reject_once option");
    let action = invoked
        .iter()
        .find(|a| a["command"]["arguments"][0]["optionId"] == reject.as_str())
        .unwrap_or_else(|| panic!("an action for {reject}: {invoked:#?}"));
    assert_eq!(action["command"]["arguments"][0]["questionId"], id.as_str());
    s.client
        .request("workspace/executeCommand", action["command"].clone())
        .expect("the action's command is accepted");
    s.client.response(prompt).expect("the prompt answers");
    assert!(
        s.model.tool_result("call_read").contains("ref:0"),
        "{}",
        s.model.tool_result("call_read")
    );
}

/// The message of a `window/showMessageRequest`.
fn message_of(request: &bravebot_tests::lsp_client::ServerRequest) -> String {
    request.params["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// Verifies: PROTO-21, REL-1
#[test]
fn a_message_box_client_is_never_asked_to_release_content_or_land_a_diff_it_cannot_show_whole() {
    let mut planted = format!("Teh fox {CANARY}\u{1b}[8m hidden\n");
    for i in 2..=60 {
        planted.push_str(&format!("planted line {i}\n"));
    }
    let long: String = (1..=80).map(|i| format!("line {i}\n")).collect();
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            read_the_planted_notes(),
            fix_the_typo_in_the_read("call_proc"),
            call(
                "call_write_untrusted",
                "write_file",
                json!({"path": "vendor/notes.md", "contents_ref": "ref:1", "why": "save"}),
            ),
            call(
                "call_write_short",
                "write_file",
                json!({"path": "short.txt", "contents": "hello\n", "why": "greet"}),
            ),
            call(
                "call_write_long",
                "write_file",
                json!({"path": "long.txt", "contents": long, "why": "count"}),
            ),
            Reply::text("done"),
        ])
        .check(vec![Reply::text(UNSAFE)])
        .processor(vec![Reply::text("fixed it\n<<<DOCUMENT>>>\nThe fox.\n")])
    });
    let s = Setup::start_with(
        &[
            ("vendor/notes.md", &planted),
            ("short.txt", "old\n"),
            ("long.txt", "old\n"),
        ],
        model,
        |o, _| o.without_permissions_capability(),
        json!({}),
    );
    // Approve what names short.txt; dismiss everything else.
    s.client.answer_permissions_with(|q| {
        if message_of(q).contains("short.txt") {
            Answer::choose(q, "allow_once")
        } else {
            Answer::Result(Value::Null)
        }
    });
    // The person vouches for the two files the planner writes itself.
    s.prompt(&["short.txt", "long.txt"]);
    let asked: Vec<String> = s
        .client
        .server_requests(SHOW_MESSAGE_REQUEST)
        .iter()
        .map(|(q, _)| message_of(q))
        .collect();
    assert_eq!(
        asked.len(),
        1,
        "the short write only: the read's 60 lines do not fit a box, so its release is not put: {asked:#?}"
    );
    assert!(
        !asked.iter().any(|m| m.contains("planted line")),
        "no part of the read was put: {asked:#?}"
    );
    // The short write of trusted text: asked with its whole diff, and it landed.
    let short = &asked[0];
    assert!(
        short.contains("short.txt") && short.contains("+hello"),
        "{short}"
    );
    assert_eq!(
        std::fs::read_to_string(s.workspace.path().join("short.txt")).unwrap_or_default(),
        "hello\n"
    );
    // The processor's document and the long write: refused without a box, and the person told.
    for (id, file) in [
        ("call_write_untrusted", "vendor/notes.md"),
        ("call_write_long", "long.txt"),
    ] {
        let said = s.model.tool_result(id);
        assert!(said.starts_with("refused:"), "{id}: {said}");
        assert!(
            !asked.iter().any(|m| m.contains(file)),
            "{file} was asked about"
        );
    }
    assert_eq!(
        std::fs::read_to_string(s.workspace.path().join("vendor/notes.md")).unwrap_or_default(),
        planted
    );
    assert_eq!(
        std::fs::read_to_string(s.workspace.path().join("long.txt")).unwrap_or_default(),
        "old\n"
    );
    let told: Vec<String> = s
        .client
        .notifications("window/showMessage")
        .iter()
        .map(|n| n["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        told.iter().any(|m| m.contains("vendor/notes.md")
            && m.contains("60 lines")
            && m.contains("a yes would let the agent read all of it")),
        "{told:#?}"
    );
    assert!(
        told.iter()
            .any(|m| m.contains("vendor/notes.md") && m.contains("nobody vouched for the file"))
            && told
                .iter()
                .any(|m| m.contains("long.txt") && m.contains("too long")),
        "{told:#?}"
    );
}
