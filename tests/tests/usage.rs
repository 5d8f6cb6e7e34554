//! What a turn costs, over real stdio: the `usage` update and `session/status` carry exactly the
//! counts the fake model reported, in both wire formats, split between the planner and
//! protection, priced where the person gave a price, and say so where an endpoint reported none.

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

const HOME_SETTINGS: &str = r#"{
  "model": {"contextTokens": 32000},
  "usage": {"prices": {"fake-model": {"input": 3, "cachedInput": 0.3, "output": 15}}}
}"#;

fn usage_updates(s: &Setup) -> Vec<Value> {
    s.client
        .updates(&s.session)
        .into_iter()
        .filter(|u| u["kind"] == "usage")
        .collect()
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-12)
}

// Verifies: USAGE-3, USAGE-4, USAGE-5, USAGE-6, USAGE-7, MODEL-10
#[test]
fn the_usage_update_and_status_carry_what_an_openai_endpoint_reported() {
    let model =
        FakeModel::start_with(|m| {
            m.planner(vec![
                Reply::tool_call("read_file", json!({"path": "notes.md", "why": "asked"}))
                    .with_usage(1000, 20, Some(800)),
                Reply::text("read it").with_usage(1500, 30, None),
                Reply::text("again").with_usage(1600, 10, None),
            ])
            .check(vec![
                Reply::text("VERDICT: safe\nplain notes").with_usage(300, 5, None),
            ])
        });
    let s = Setup::start_with(
        &[("notes.md", "some notes\n")],
        model,
        |o, _| o.home_file(".bravebot/settings.json", HOME_SETTINGS),
        json!({}),
    );
    s.prompt_text("read notes.md", &[]);
    // Every chat request asked for usage.
    for request in s.model.requests() {
        if request.path.ends_with("/chat/completions") {
            assert_eq!(
                request.body["stream_options"],
                json!({"include_usage": true}),
                "{}",
                request.role
            );
        }
    }
    let updates = usage_updates(&s);
    let roles: Vec<&str> = updates.iter().filter_map(|u| u["role"].as_str()).collect();
    assert_eq!(roles, ["planner", "check", "planner"], "{updates:#?}");
    let first = &updates[0];
    assert_eq!(first["reported"], true);
    assert_eq!(
        (&first["inputTokens"], &first["outputTokens"]),
        (&json!(1000), &json!(20))
    );
    assert_eq!(first["cachedInputTokens"], 800);
    assert_eq!(first["contextTokens"], 1020);
    assert_eq!(first["contextLimit"], 32000);
    let check = &updates[1];
    assert_eq!(
        (&check["inputTokens"], &check["outputTokens"]),
        (&json!(300), &json!(5))
    );
    assert!(check.get("contextTokens").is_none(), "{check}");
    assert!(check.get("cachedInputTokens").is_none(), "{check}");

    let meter = &updates[2]["meter"];
    assert_eq!(meter["contextTokens"], 1530);
    assert_eq!(meter["contextLimit"], 32000);
    let planner = &meter["session"]["planner"];
    assert_eq!(
        [
            &planner["calls"],
            &planner["unreported"],
            &planner["inputTokens"],
            &planner["outputTokens"],
            &planner["cachedInputTokens"]
        ],
        [&json!(2), &json!(0), &json!(2500), &json!(50), &json!(800)]
    );
    // 200 uncached at $3/M, 800 cached at $0.30/M, 20 out at $15/M; then 1500 in, 30 out.
    assert!(close(&planner["costUsd"], 0.00609), "{planner}");
    let protection = &meter["session"]["protection"];
    assert_eq!(
        (
            &protection["calls"],
            &protection["inputTokens"],
            &protection["outputTokens"]
        ),
        (&json!(1), &json!(300), &json!(5))
    );
    assert!(close(&protection["costUsd"], 0.000975), "{protection}");
    assert_eq!(meter["turn"], meter["session"]);
    let status = s.status();
    assert_eq!(status["usage"], *meter);
    // The budget, and that a setting named it (MODEL-10).
    assert_eq!(
        (
            &status["model"]["contextTokens"],
            &status["model"]["contextSource"]
        ),
        (&json!(32000), &json!("setting"))
    );

    // The next turn starts its totals again; the session's go on.
    s.prompt_text("again", &[]);
    let status = s.status();
    let usage = &status["usage"];
    assert_eq!(usage["turn"]["planner"]["calls"], 1);
    assert_eq!(usage["turn"]["planner"]["inputTokens"], 1600);
    assert_eq!(usage["turn"]["protection"]["calls"], 0);
    assert_eq!(usage["session"]["planner"]["calls"], 3);
    assert_eq!(usage["session"]["planner"]["inputTokens"], 4100);
    assert_eq!(usage["contextTokens"], 1610);
    s.client.shutdown();
}

// Verifies: USAGE-1, USAGE-2, USAGE-7
#[test]
fn an_anthropic_endpoint_s_cached_tokens_count_and_a_call_without_usage_says_so() {
    let model = FakeModel::start(vec![
        Reply::tool_call("list_files", json!({"path": ".", "why": "look"})).with_usage(
            2100,
            40,
            Some(2000),
        ),
        Reply::text("done"),
    ]);
    let url = model.anthropic_url();
    let s = Setup::start_with(
        &[("a.txt", "a\n")],
        model,
        |o, _| {
            o.env("BRAVEBOT_MODEL_API", "anthropic")
                .env("BRAVEBOT_MODEL_URL", &url)
                .home_file(
                    ".bravebot/settings.json",
                    r#"{"model": {"contextTokens": 64000}}"#,
                )
        },
        json!({}),
    );
    s.prompt_text("list", &[]);
    assert!(
        s.model
            .requests_for("planner")
            .iter()
            .all(|r| r.path == "/v1/messages"),
        "the session spoke the anthropic format"
    );
    let updates = usage_updates(&s);
    assert_eq!(updates.len(), 2, "{updates:#?}");
    let first = &updates[0];
    assert_eq!(
        (
            &first["reported"],
            &first["inputTokens"],
            &first["outputTokens"],
            &first["cachedInputTokens"],
            &first["contextTokens"],
            &first["contextLimit"]
        ),
        (
            &json!(true),
            &json!(2100),
            &json!(40),
            &json!(2000),
            &json!(2140),
            &json!(64000)
        )
    );
    // The endpoint said nothing: so does the update, and the meter makes nothing up.
    let second = &updates[1];
    assert_eq!(second["reported"], false, "{second}");
    assert_eq!(
        (&second["inputTokens"], &second["outputTokens"]),
        (&json!(0), &json!(0))
    );
    assert!(second.get("contextTokens").is_none(), "{second}");
    assert!(second["meter"].get("contextTokens").is_none(), "{second}");
    let planner = &second["meter"]["session"]["planner"];
    assert_eq!(
        (&planner["calls"], &planner["unreported"]),
        (&json!(2), &json!(1))
    );
    assert_eq!(planner["inputTokens"], 2100);
    // No price was given: no money is shown.
    assert!(planner.get("costUsd").is_none(), "{planner}");
    assert_eq!(s.status()["usage"], second["meter"]);
    s.client.shutdown();
}

// Verifies: USAGE-14
#[test]
fn a_resumed_session_s_meter_goes_on_from_what_its_record_kept() {
    use bravebot_tests::lsp_client::{LspClient, LspOptions};
    let (home, ws) = (
        tempfile::tempdir().expect("home"),
        tempfile::tempdir().expect("workspace"),
    );
    let model = FakeModel::start(vec![
        Reply::text("first").with_usage(1000, 20, Some(800)),
        Reply::text("second").with_usage(1500, 30, None),
    ]);
    let start = || {
        let client = LspClient::start(
            LspOptions::new(ws.path())
                .home_dir(home.path())
                .home_file(".bravebot/settings.json", HOME_SETTINGS)
                .model_url(&model.url()),
        );
        client.initialize(json!({}));
        client
    };
    let request = |client: &LspClient, method: &str, params: Value| {
        client
            .request(method, params)
            .unwrap_or_else(|e| client.fail(&format!("{method} was refused: {e}")))
    };
    let first = start();
    let id = first.new_session();
    request(
        &first,
        "bravebot/session/prompt",
        json!({"sessionId": id, "text": "one", "files": []}),
    );
    let before =
        request(&first, "bravebot/session/status", json!({"sessionId": id}))["usage"]["session"]
            .clone();
    first.shutdown();
    assert_eq!(before["planner"]["inputTokens"], 1000, "{before}");

    let second = start();
    request(&second, "bravebot/session/resume", json!({"sessionId": id}));
    let resumed =
        request(&second, "bravebot/session/status", json!({"sessionId": id}))["usage"]["session"]
            .clone();
    assert_eq!(resumed, before, "the meter goes on from the record");
    request(
        &second,
        "bravebot/session/prompt",
        json!({"sessionId": id, "text": "two", "files": []}),
    );
    let after =
        request(&second, "bravebot/session/status", json!({"sessionId": id}))["usage"].clone();
    second.shutdown();
    let planner = &after["session"]["planner"];
    assert_eq!(
        (
            planner["calls"].as_u64(),
            planner["inputTokens"].as_u64(),
            planner["outputTokens"].as_u64(),
            planner["cachedInputTokens"].as_u64()
        ),
        (Some(2), Some(2500), Some(50), Some(800)),
        "{after}"
    );
    assert!(
        close(
            &planner["costUsd"],
            0.001 * 3.0 * 0.2 + 0.0008 * 0.3 + 0.00005 * 15.0 + 0.0015 * 3.0
        ),
        "{after}"
    );
    // The turn's own totals are the new turn's alone.
    assert_eq!(after["turn"]["planner"]["calls"], 1, "{after}");
}
