//! End-to-end tests of what bravebot reads from disk, over real stdio against the fake model:
//! files trusted by default (`AGENTS.md`, `.bravebot/skills/`) and files named by reference are read
//! only as regular files inside the workspace once their links are resolved, within a bound, and
//! nothing on disk can hold the server.
//!
//! Each test plants a canary in a file outside the workspace and points a link at it, or puts a
//! FIFO or a device where a file is expected, then checks the planner's requests and that the
//! server answered in time.

use std::path::Path;
use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::Answer;
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};
use tempfile::TempDir;

/// Planted outside the workspace; it must never reach a planner request.
const CANARY: &str = "CANARY-outside-5d21-never-in-a-planner-request";

/// How long any wait may take. A read that blocked on a FIFO would hold a turn far longer.
const PROMPTLY: Duration = Duration::from_secs(15);

/// A running server in a fresh workspace, with a directory beside it holding the canary.
struct Confined {
    // Field order is drop order: the server goes before the outside directory.
    setup: Setup,
    outside: TempDir,
}

impl std::ops::Deref for Confined {
    type Target = Setup;

    fn deref(&self) -> &Setup {
        &self.setup
    }
}

/// A workspace and an outside directory whose `credentials` holds the canary.
fn directories() -> (TempDir, TempDir) {
    let workspace = tempfile::tempdir().expect("create a workspace");
    let outside = tempfile::tempdir().expect("create an outside directory");
    std::fs::write(outside.path().join("credentials"), format!("{CANARY}\n"))
        .expect("write the canary");
    (workspace, outside)
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write a workspace file");
}

fn link(target: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().expect("a link has a parent")).expect("mkdir");
    std::os::unix::fs::symlink(target, at).expect("make a link");
}

fn fifo(at: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(at)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", at.display());
}

impl Confined {
    fn start(workspace: TempDir, outside: TempDir, model: FakeModel) -> Confined {
        let setup = Setup::in_workspace(workspace, model, |o, _| o.timeout(PROMPTLY), json!({}));
        Confined { setup, outside }
    }

    /// Sends a prompt and waits for the turn to end, failing if it took longer than [`PROMPTLY`].
    fn turn(&self, text: &str) -> Value {
        let started = Instant::now();
        let result = self.prompt_text(text, &[]);
        assert!(
            started.elapsed() < PROMPTLY,
            "the turn took {:?}",
            started.elapsed()
        );
        result
    }

    /// The system prompt of the first planner request.
    fn system_prompt(&self) -> String {
        let requests = self.model.requests_for("planner");
        let first = requests.first().expect("a planner request was made");
        first.body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The trust rules status reports, as `path scope origin`.
    fn trust_rules(&self) -> Vec<String> {
        let status = self.status();
        status["trustRules"]
            .as_array()
            .map(|rules| {
                rules
                    .iter()
                    .map(|r| format!("{} {} {}", r["path"], r["scope"], r["origin"]))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn answer_turn() -> FakeModel {
    FakeModel::start(vec![Reply::text("ok")])
}

// Verifies: TRUST-6, READ-8
#[test]
fn agents_md_linking_out_of_the_workspace_is_not_read_and_its_canary_reaches_no_planner() {
    let (workspace, outside) = directories();
    link(
        &outside.path().join("credentials"),
        &workspace.path().join("AGENTS.md"),
    );
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_agents",
            "read_file",
            json!({ "path": "AGENTS.md", "why": "read the instructions" }),
        ),
        Reply::text("ok"),
    ]);
    let s = Confined::start(workspace, outside, model);
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    let system = s.system_prompt();
    assert!(
        system.contains("AGENTS.md was not read") && system.contains("outside the workspace"),
        "{system}"
    );
    let result = s.model.tool_result("call_agents");
    assert!(result.starts_with("refused:"), "{result}");
    s.model.assert_no_planner_request_contains(CANARY);
    assert!(
        !s.trust_rules().iter().any(|r| r.contains("AGENTS.md")),
        "a link out is not trusted by default: {:?}",
        s.trust_rules()
    );
}

// Verifies: TRUST-6, READ-8
#[test]
fn agents_md_that_is_dev_zero_a_fifo_or_a_directory_leaves_the_turn_prompt_and_the_server_answering()
 {
    // /dev/zero, before the session starts.
    let (workspace, outside) = directories();
    link(Path::new("/dev/zero"), &workspace.path().join("AGENTS.md"));
    let s = Confined::start(workspace, outside, answer_turn());
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    assert!(s.system_prompt().contains("AGENTS.md was not read"));
    assert!(s.status()["trustRules"].is_array());

    // A FIFO put in place after the session trusted a regular AGENTS.md: the read itself refuses.
    let (workspace, outside) = directories();
    write(workspace.path(), "AGENTS.md", "regular at the start\n");
    let s = Confined::start(workspace, outside, answer_turn());
    let agents = s.workspace.path().join("AGENTS.md");
    std::fs::remove_file(&agents).expect("remove AGENTS.md");
    fifo(&agents);
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    let system = s.system_prompt();
    assert!(
        system.contains("AGENTS.md was not read") && system.contains("a FIFO"),
        "{system}"
    );
    assert!(s.status()["trustRules"].is_array());

    // A directory named AGENTS.md.
    let (workspace, outside) = directories();
    std::fs::create_dir(workspace.path().join("AGENTS.md")).expect("mkdir AGENTS.md");
    let s = Confined::start(workspace, outside, answer_turn());
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    assert!(
        s.system_prompt().contains("AGENTS.md was not read"),
        "{}",
        s.system_prompt()
    );
}

// Verifies: READ-8
#[test]
fn an_agents_md_over_its_bound_is_said_to_be_too_large_and_none_of_it_is_sent() {
    let (workspace, outside) = directories();
    let mut big = String::from("big-agents-head-8812\n");
    while big.len() <= 256 * 1024 {
        big.push_str("Keep every answer short and concrete, and say why.\n");
    }
    write(workspace.path(), "AGENTS.md", &big);
    let s = Confined::start(workspace, outside, answer_turn());
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    let system = s.system_prompt();
    assert!(
        system.contains("AGENTS.md was not read") && system.contains("larger than 256 KiB"),
        "{system}"
    );
    s.model
        .assert_no_planner_request_contains("big-agents-head-8812");
}

// Verifies: TRUST-6, COST-11
#[test]
fn a_regular_agents_md_and_one_linking_within_the_workspace_reach_the_system_prompt() {
    let (workspace, outside) = directories();
    write(
        workspace.path(),
        "AGENTS.md",
        "Answer in haiku. plain-agents-4410\n",
    );
    let s = Confined::start(workspace, outside, answer_turn());
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    assert!(s.system_prompt().contains("plain-agents-4410"));

    let (workspace, outside) = directories();
    write(
        workspace.path(),
        "CLAUDE.md",
        "Answer in prose. linked-agents-5520\n",
    );
    link(Path::new("CLAUDE.md"), &workspace.path().join("AGENTS.md"));
    let s = Confined::start(workspace, outside, answer_turn());
    assert_eq!(s.turn("hi")["stopReason"], "endTurn");
    assert!(s.system_prompt().contains("linked-agents-5520"));
}

// Verifies: TRUST-6, COST-10
#[test]
fn skills_are_trusted_only_where_they_stay_inside_the_workspace() {
    // A skills directory that is a link out is not trusted, and nothing under it is read.
    let (workspace, outside) = directories();
    link(outside.path(), &workspace.path().join(".bravebot/skills"));
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_skill",
            "read_file",
            json!({ "path": ".bravebot/skills/credentials", "why": "read a skill" }),
        ),
        Reply::text("ok"),
    ]);
    let s = Confined::start(workspace, outside, model);
    assert!(
        !s.trust_rules().iter().any(|r| r.contains("skills")),
        "{:?}",
        s.trust_rules()
    );
    assert_eq!(s.turn("go")["stopReason"], "endTurn");
    let result = s.model.tool_result("call_skill");
    assert!(result.starts_with("refused:"), "{result}");
    s.model.assert_no_planner_request_contains(CANARY);

    // A real skills directory is trusted: its files are read with no check. One of them that
    // links out is not read at all.
    let (workspace, outside) = directories();
    write(
        workspace.path(),
        ".bravebot/skills/release.md",
        "Tag, then push. skill-text-6630\n",
    );
    link(
        &outside.path().join("credentials"),
        &workspace.path().join(".bravebot/skills/leak.md"),
    );
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_release",
            "read_file",
            json!({ "path": ".bravebot/skills/release.md", "why": "read a skill" }),
        ),
        Reply::tool_call_with_id(
            "call_leak",
            "read_file",
            json!({ "path": ".bravebot/skills/leak.md", "why": "read a skill" }),
        ),
        Reply::text("ok"),
    ]);
    let s = Confined::start(workspace, outside, model);
    assert!(
        s.trust_rules()
            .iter()
            .any(|r| r.contains("skills") && r.contains("instructions")),
        "{:?}",
        s.trust_rules()
    );
    assert_eq!(s.turn("go")["stopReason"], "endTurn");
    assert!(
        s.model
            .tool_result("call_release")
            .contains("skill-text-6630")
    );
    assert!(
        s.model.requests_for("check").is_empty(),
        "a skill is read as trusted, with no check"
    );
    let leak = s.model.tool_result("call_leak");
    assert!(leak.starts_with("refused:"), "{leak}");
    s.model.assert_no_planner_request_contains(CANARY);
}

// Verifies: TOOL-4, READ-8
#[test]
fn withheld_entries_that_link_out_or_are_fifos_are_refused_through_every_path_ref() {
    let (workspace, outside) = directories();
    let dl = workspace.path().join("dl");
    std::fs::create_dir_all(dl.join("sub")).expect("mkdir dl/sub");
    link(&outside.path().join("credentials"), &dl.join("a-link.txt"));
    fifo(&dl.join("b-pipe"));
    // The run's output is nobody's, so the file it writes is marked untrusted, and with it every
    // listing of dl is withheld behind one reference per entry: sorted, so ref:0 stands for the
    // link and ref:1 for the FIFO (an empty run puts nothing in a slot first).
    let path_refs = |reference: &str| {
        vec![
            (
                "read_file",
                json!({ "path_ref": reference, "why": "read it" }),
            ),
            (
                "vet_content",
                json!({ "ref": reference, "expects": "a text file", "why": "see it" }),
            ),
            (
                "write_file",
                json!({ "path_ref": reference, "contents": "overwritten\n", "why": "replace it" }),
            ),
        ]
    };
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_run",
            "run",
            json!({ "command": "printf x > dl/sub/marked.txt", "why": "mark dl" }),
        ),
        Reply::tool_call_with_id(
            "call_list",
            "list_files",
            json!({ "directory": "dl", "depth": 1, "why": "look" }),
        ),
        Reply::tool_calls(path_refs("ref:0")),
        Reply::tool_calls(path_refs("ref:1")),
        Reply::text("done"),
    ]);
    let s = Confined::start(workspace, outside, model);
    s.client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("run") => Answer::choose(q, "allow_once"),
            _ => Answer::choose(q, "reject_once"),
        });
    assert_eq!(s.turn("work in dl")["stopReason"], "endTurn");
    let listing = s.model.tool_result("call_list");
    assert_eq!(
        file_references(&listing),
        ["ref:0", "ref:1"],
        "two withheld files in: {listing}"
    );
    let results = tool_results(&s.model);
    let refused: Vec<&String> = results
        .iter()
        .filter(|r| {
            r.starts_with("refused:")
                && (r.contains("was not read") || r.contains("cannot be changed"))
        })
        .collect();
    assert_eq!(refused.len(), 6, "every path_ref is refused: {results:#?}");
    assert!(
        refused
            .iter()
            .take(3)
            .all(|r| r.contains("outside the workspace")),
        "{refused:#?}"
    );
    assert!(
        refused.iter().skip(3).all(|r| r.contains("a FIFO")),
        "{refused:#?}"
    );
    assert!(
        !s.client
            .questions()
            .iter()
            .any(|q| q.question_kind() == Some("write")),
        "no write was put to the person"
    );
    s.model.assert_no_planner_request_contains(CANARY);
    assert!(
        s.model.requests_for("check").is_empty(),
        "nothing was checked"
    );
    assert_eq!(
        std::fs::read_to_string(s.outside.path().join("credentials")).unwrap_or_default(),
        format!("{CANARY}\n"),
        "the file outside is untouched"
    );
    let pipe = std::fs::symlink_metadata(dl.join("b-pipe")).expect("the FIFO is still there");
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&pipe.file_type()));
    assert!(s.status()["trustRules"].is_array());
}

/// Every tool message of the last planner request, in order.
fn tool_results(model: &FakeModel) -> Vec<String> {
    let requests = model.requests_for("planner");
    let Some(last) = requests.last() else {
        return Vec::new();
    };
    last.body["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The `ref:N` of each withheld file entry in a listing, in order.
fn file_references(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| l.contains("a file under"))
        .filter_map(|l| {
            let at = l.find("ref:")?;
            Some(
                l[at..]
                    .chars()
                    .take_while(|c| *c == ':' || c.is_ascii_alphanumeric())
                    .collect(),
            )
        })
        .collect()
}
