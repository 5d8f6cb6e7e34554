//! Skills over real stdio: a workspace's `.bravebot/skills/` and the person's `~/.bravebot/skills/`
//! are listed to the planner by name and description, a skill is loaded by its exact name, and a
//! name holding `../`, a near miss, or a skill whose file leads out of the workspace is refused.

use bravebot_tests::fake_model::{FakeModel, RecordedRequest, Reply};
use bravebot_tests::lsp_client::{Answer, LspClient, LspOptions};
use serde_json::json;

const BODY: &str = "SKILL-BODY-write-the-subject-in-the-imperative";
const OUTSIDE: &str = "CANARY-skill-outside-8812";

fn system(request: &RecordedRequest) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn skill(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

// Verifies: SKILL-1, SKILL-2, SKILL-3, SKILL-4, SKILL-5
#[test]
fn a_skill_is_listed_loaded_by_name_and_a_path_or_near_miss_is_refused() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "load",
            "load_skill",
            json!({"name": "commit-style", "why": "commit"}),
        ),
        Reply::tool_call_with_id(
            "dots",
            "load_skill",
            json!({"name": "../commit-style", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "near",
            "load_skill",
            json!({"name": "commit-styl", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "case",
            "load_skill",
            json!({"name": "Commit-Style", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "home",
            "load_skill",
            json!({"name": "home-notes", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "escape",
            "load_skill",
            json!({"name": "escape", "why": "x"}),
        ),
        Reply::text("done"),
    ]);
    let workspace = tempfile::tempdir().expect("workspace");
    let skills = workspace.path().join(".bravebot/skills");
    std::fs::create_dir_all(skills.join("commit-style")).expect("mkdir");
    std::fs::write(
        skills.join("commit-style/SKILL.md"),
        skill(
            "commit-style",
            "How commit messages are written here. Use before writing one.",
            BODY,
        ),
    )
    .expect("write");
    // A skill whose file leads out of the workspace is not listed, and its words go nowhere.
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(
        outside.path().join("SKILL.md"),
        skill("escape", &format!("Read this {OUTSIDE}"), OUTSIDE),
    )
    .expect("write");
    std::fs::create_dir_all(skills.join("escape")).expect("mkdir");
    std::os::unix::fs::symlink(
        outside.path().join("SKILL.md"),
        skills.join("escape/SKILL.md"),
    )
    .expect("link");
    let options = LspOptions::new(workspace.path())
        .model_url(&model.url())
        .home_file(
            ".bravebot/skills/home-notes/SKILL.md",
            skill(
                "home-notes",
                "The person's own notes on style.",
                "HOME-SKILL-BODY",
            ),
        );
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let session = client.new_session();
    client.answer_permissions_with(|q| Answer::choose(q, "reject_once"));
    client
        .request(
            "bravebot/session/prompt",
            json!({"sessionId": session, "text": "commit this", "files": []}),
        )
        .unwrap_or_else(|e| client.fail(&format!("prompt refused: {e}")));
    let first = model.requests_for("planner").remove(0);
    let listed = system(&first);
    assert!(
        listed.contains(
            "- commit-style: How commit messages are written here. Use before writing one."
        ),
        "{listed}"
    );
    assert!(
        listed.contains("- home-notes: The person's own notes on style."),
        "{listed}"
    );
    assert!(!listed.contains(BODY), "a body waits for load_skill");
    assert!(!listed.contains("escape"), "{listed}");
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"load_skill"), "{tools:?}");
    let loaded = model.tool_result("load");
    assert!(loaded.contains(BODY), "{loaded}");
    for id in ["dots", "near", "case", "escape"] {
        let refused = model.tool_result(id);
        assert!(
            refused.starts_with("refused: no skill is listed as"),
            "{id}: {refused}"
        );
        assert!(
            refused.contains("The skills are: commit-style, home-notes"),
            "{refused}"
        );
    }
    assert!(model.tool_result("home").contains("HOME-SKILL-BODY"));
    model.assert_no_planner_request_contains(OUTSIDE);
    client.shutdown();
}

// Verifies: SKILL-5
#[test]
fn with_no_skill_anywhere_load_skill_is_not_offered() {
    let model = FakeModel::start(vec![Reply::text("done")]);
    let workspace = tempfile::tempdir().expect("workspace");
    let client = LspClient::start(LspOptions::new(workspace.path()).model_url(&model.url()));
    client.initialize(json!({}));
    let session = client.new_session();
    client
        .request(
            "bravebot/session/prompt",
            json!({"sessionId": session, "text": "hi", "files": []}),
        )
        .unwrap_or_else(|e| client.fail(&format!("prompt refused: {e}")));
    let first = model.requests_for("planner").remove(0);
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(!tools.contains(&"load_skill"), "{tools:?}");
    assert!(tools.contains(&"spawn_agent"), "{tools:?}");
    client.shutdown();
}
