//! What a provider's prompt cache sees, over real stdio: each planner request begins with the one
//! before it (the same tools, the same system prompt, every earlier message byte for byte) in both
//! wire formats, Anthropic's carry their cache breakpoints on the tools, the system prompt and the
//! history, and a compaction, which breaks that prefix, is counted where the person sees it.

use bravebot_tests::fake_model::{FakeModel, RecordedRequest, Reply};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

/// A session of two turns: two rounds of tool calls and an answer, then a second prompt.
fn two_turns(api: &str) -> Setup {
    let model = FakeModel::start(vec![
        Reply::tool_call("list_files", json!({"path": ".", "why": "look"})),
        Reply::tool_call("list_files", json!({"path": "src", "why": "look closer"})),
        Reply::text("done"),
        Reply::text("again done"),
    ]);
    let url = match api {
        "anthropic" => model.anthropic_url(),
        _ => model.url(),
    };
    let api = api.to_owned();
    let s = Setup::start_with(
        &[("a.txt", "a\n"), ("src/b.rs", "fn b() {}\n")],
        model,
        move |o, _| {
            o.env("BRAVEBOT_MODEL_API", &api)
                .env("BRAVEBOT_MODEL_URL", &url)
        },
        json!({}),
    );
    assert_eq!(s.prompt_text("look around", &[])["stopReason"], "endTurn");
    assert_eq!(s.prompt_text("and again", &[])["stopReason"], "endTurn");
    s
}

/// `value` with every `cache_control` key taken out.
fn without_breakpoints(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), without_breakpoints(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_breakpoints).collect()),
        other => other.clone(),
    }
}

fn marked(value: &Value) -> bool {
    value.get("cache_control") == Some(&json!({"type": "ephemeral"}))
}

fn planner_requests(s: &Setup) -> Vec<RecordedRequest> {
    let planner = s.model.requests_for("planner");
    assert_eq!(planner.len(), 4, "two rounds, an answer, and a second turn");
    planner
}

// Verifies: MODEL-9
#[test]
fn each_openai_planner_request_begins_with_every_byte_of_the_one_before() {
    let s = two_turns("openai");
    let planner = planner_requests(&s);
    for pair in planner.windows(2) {
        let (before, after) = (&pair[0].raw_body, &pair[1].raw_body);
        // The earlier body but its closing brackets: the model, the tools, the system prompt and
        // every message, byte for byte, then the new messages.
        let open = before
            .strip_suffix("]}")
            .unwrap_or_else(|| panic!("the body ends with its messages: {before}"));
        assert!(
            after.starts_with(open),
            "a request does not begin with the one before:\n{before}\n----\n{after}"
        );
        assert!(after.len() > open.len());
    }
    // The tools come before the history, and the system prompt is its first message.
    let body = &planner[3].raw_body;
    let tools = body.find("\"tools\"").expect("tools");
    let messages = body.find("\"messages\"").expect("messages");
    assert!(tools < messages, "{body}");
    assert_eq!(planner[3].body["messages"][0]["role"], "system");
    s.client.shutdown();
}

// Verifies: MODEL-7, MODEL-8
#[test]
fn anthropic_planner_requests_carry_breakpoints_and_keep_their_history_unchanged() {
    let s = two_turns("anthropic");
    let planner = planner_requests(&s);
    for request in &planner {
        let body = &request.body;
        let all = request.raw_body.matches("\"cache_control\"").count();
        assert!(all <= 4, "{all} breakpoints: {}", request.raw_body);
        let tools = body["tools"].as_array().expect("tools");
        assert!(marked(tools.last().expect("a tool")), "the last tool");
        assert_eq!(
            tools.iter().filter(|t| marked(t)).count(),
            1,
            "only the last tool"
        );
        assert!(marked(&body["system"][0]), "the system prompt");
        let messages = body["messages"].as_array().expect("messages");
        let last = messages.last().expect("a message")["content"]
            .as_array()
            .expect("blocks")
            .last()
            .cloned()
            .expect("a block");
        assert!(marked(&last), "the newest message: {}", request.raw_body);
        let history = if messages.len() >= 3 {
            let ended = &messages[messages.len() - 3]["content"];
            assert!(
                marked(ended.as_array().expect("blocks").last().expect("a block")),
                "where the request before ended: {}",
                request.raw_body
            );
            1
        } else {
            0
        };
        assert_eq!(all, 3 + history, "{}", request.raw_body);
    }
    for pair in planner.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        // Byte for byte up to the history: the model, the tools and the system prompt.
        let at = before.raw_body.find("\"messages\"").expect("messages");
        assert_eq!(after.raw_body[..at], before.raw_body[..at]);
        // Every earlier message unchanged but for the breakpoints that moved forward.
        let (old, new) = (
            without_breakpoints(&before.body["messages"]),
            without_breakpoints(&after.body["messages"]),
        );
        let (old, new) = (old.as_array().expect("old"), new.as_array().expect("new"));
        assert!(new.len() > old.len());
        assert_eq!(old[..], new[..old.len()]);
    }
    s.client.shutdown();
}

// Verifies: MODEL-11
#[test]
fn a_compaction_is_counted_on_the_meter_where_the_prefix_breaks() {
    let model = FakeModel::start(
        (0..40)
            .map(|n| {
                Reply::text(format!("Reply {n}: {}", "r".repeat(600))).with_usage(100, 10, None)
            })
            .collect(),
    );
    let s = Setup::start_with(
        &[("a.txt", "a\n")],
        model,
        |o, _| {
            o.home_file(
                ".bravebot/settings.json",
                r#"{"model": {"contextTokens": 16384}}"#,
            )
        },
        json!({}),
    );
    let mut first_compaction = None;
    for n in 0..40 {
        s.prompt_text(&format!("Question {n}: {}", "q".repeat(1500)), &[]);
        let compactions = s.status()["usage"]["compactions"].as_u64();
        if compactions.is_some() {
            assert_eq!(compactions, Some(1), "one compaction at the first");
            first_compaction = Some(n);
            break;
        }
    }
    let n = first_compaction.expect("the conversation was compacted within 40 turns");
    let planner = s.model.requests_for("planner");
    assert_eq!(planner.len(), n + 1);
    // Every request before the compaction extended the one before it; the compacted one does not.
    let extends = |i: usize| {
        let open = planner[i - 1]
            .raw_body
            .strip_suffix("]}")
            .expect("messages last");
        planner[i].raw_body.starts_with(open)
    };
    assert!((1..n).all(extends), "no request broke the prefix before");
    assert!(!extends(n), "the compacted request begins differently");
    // The usage update of the call after it says so too; the ones before did not.
    let usage: Vec<Value> = s
        .client
        .updates(&s.session)
        .into_iter()
        .filter(|u| u["kind"] == "usage")
        .collect();
    assert_eq!(usage.len(), n + 1);
    assert_eq!(usage[n]["meter"]["compactions"], 1);
    assert!(
        usage[..n]
            .iter()
            .all(|u| u["meter"].get("compactions").is_none())
    );
    s.client.shutdown();
}
