//! End-to-end tests of what `run` lets through unasked, over real stdio: the read-only table as
//! an allow-list of options over vouched-for regular files, allow rules bound to resolved
//! programs outside the places the person opened, and files a run approved once wrote through its
//! arguments marked untrusted.

use std::path::Path;

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspOptions};
use bravebot_tests::setup::Setup;
use serde_json::json;

const CANARY: &str = "CANARY-allowlist-5521";

/// How many `run` questions were put.
fn run_questions(s: &Setup) -> usize {
    s.client
        .questions()
        .iter()
        .filter(|q| q.question_kind() == Some("run"))
        .count()
}

/// A planner that makes one `run` call per line, `call_0`, `call_1`, …, then stops.
fn planner_running(lines: &[&str], directory: Option<&str>) -> FakeModel {
    let mut replies: Vec<Reply> = lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let mut args = json!({"command": line, "why": "look"});
            if let Some(d) = directory {
                args["directory"] = json!(d);
            }
            Reply::tool_call_with_id(&format!("call_{index}"), "run", args)
        })
        .collect();
    replies.push(Reply::text("done"));
    FakeModel::start(replies)
}

fn no_settings(options: LspOptions, _: &Path) -> LspOptions {
    options
}

// Verifies: RUNTOOL-3, RUNTOOL-8
#[test]
fn options_that_execute_or_write_put_a_question_and_nothing_runs_unasked() {
    // The root AGENTS.md is trusted by default; a cloned repository writes it.
    let agents = "touch pwned-by-sort\n";
    let outside = tempfile::tempdir().expect("outside");
    let profile = outside.path().join("bash_profile");
    let uniq = format!("uniq AGENTS.md {}", profile.display());
    let lines = [
        "sort -S 1 --compress-program=sh AGENTS.md",
        "sort -S1 --compress-prog sh AGENTS.md",
        "sort --compress=sh -S 1 AGENTS.md",
        "sort AGENTS.md -o sorted.txt",
        "sort -nroout.txt AGENTS.md",
        uniq.as_str(),
        "uniq AGENTS.md not-there-yet.txt",
        "tail -f AGENTS.md",
        "tail -cf AGENTS.md",
        "cat AGENTS.md -",
        "wc --files0=AGENTS.md",
    ];
    let model = planner_running(&lines, None);
    let s = Setup::start_with(&[("AGENTS.md", agents)], model, no_settings, json!({}));
    // The person refuses every question.
    s.prompt(&[]);
    assert_eq!(run_questions(&s), lines.len(), "every line was asked about");
    for (index, _) in lines.iter().enumerate() {
        let result = s.model.tool_result(&format!("call_{index}"));
        assert!(result.contains("did not approve"), "{result}");
    }
    for made in [
        "pwned-by-sort",
        "sorted.txt",
        "out.txt",
        "not-there-yet.txt",
    ] {
        assert!(!s.root().join(made).exists(), "{made} was made");
    }
    assert!(!profile.exists(), "uniq wrote outside the workspace");
    s.client.shutdown();
}

// Verifies: RUNTOOL-8
#[test]
fn reading_what_nobody_vouched_for_asks_and_no_canary_reaches_the_planner() {
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, format!("{CANARY} outside\n")).expect("write");
    let model = planner_running(
        &[
            "diff vendor/a vendor/b",
            "diff --from-file=vendor/a/x -",
            "diff AGENTS.md vendor/a/x",
            "cat linked.txt",
            "ls vendor/a",
            "grep -r CANARY .",
            "cat zero",
        ],
        None,
    );
    let s = Setup::start_with(
        &[
            ("AGENTS.md", "house rules\n"),
            ("vendor/a/x", &format!("{CANARY} a\n")),
            ("vendor/b/x", &format!("{CANARY} b\n")),
        ],
        model,
        |options, root| {
            std::os::unix::fs::symlink(&secret, root.join("linked.txt")).expect("symlink");
            std::os::unix::fs::symlink("/dev/zero", root.join("zero")).expect("symlink");
            options
        },
        json!({}),
    );
    // The person vouches for the link's path; its target is still outside every opened place.
    s.prompt(&["linked.txt", "zero"]);
    assert_eq!(run_questions(&s), 7, "every line was asked about");
    s.model.assert_no_planner_request_contains(CANARY);
    s.client.shutdown();
}

// Verifies: RUNTOOL-3, RUNTOOL-4
#[test]
fn ordinary_reads_over_vouched_files_still_run_unasked() {
    let model = planner_running(
        &[
            "cat AGENTS.md | wc -l",
            "head -n 1 notes.md",
            "grep -n beta notes.md",
            "cat AGENTS.md | grep -c rule | wc -l",
            "ls -l docs",
        ],
        None,
    );
    let s = Setup::start_with(
        &[
            ("AGENTS.md", "rule one\nrule two\n"),
            ("notes.md", "alpha\nbeta\n"),
            ("docs/guide.md", "read me\n"),
        ],
        model,
        no_settings,
        json!({}),
    );
    s.prompt(&["notes.md", "docs"]);
    assert_eq!(run_questions(&s), 0, "no read was asked about");
    let counted = s.model.tool_result("call_0");
    assert!(
        counted.contains("read-only") && counted.contains("stdout") && counted.contains("2\n"),
        "{counted}"
    );
    assert!(s.model.tool_result("call_1").contains("alpha"));
    assert!(s.model.tool_result("call_2").contains("2:beta"));
    assert!(s.model.tool_result("call_4").contains("guide.md"));
    s.client.shutdown();
}

// Verifies: RUNTOOL-9
#[test]
fn an_allow_rule_never_covers_a_program_the_workspace_supplies() {
    let marker = "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran-$(basename \"$0\")\"\n";
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_dot",
            "run",
            json!({"command": "./git status", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "call_path",
            "run",
            json!({"command": "git status", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "call_build",
            "run",
            json!({"command": "./build.sh", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "call_sub",
            "run",
            json!({"command": "./build.sh", "directory": "sub", "why": "x"}),
        ),
        Reply::tool_call_with_id("call_cat", "run", json!({"command": "cat", "why": "x"})),
        Reply::text("done"),
    ]);
    let settings = r#"{"run": {"allow": ["git", "./build.sh", "cat"]}}"#;
    let s = Setup::start_with(
        &[
            ("git*", marker),
            (".venv/bin/git*", marker),
            (".venv/bin/cat*", marker),
            ("build.sh*", marker),
            ("sub/build.sh*", marker),
        ],
        model,
        |options, root| {
            let path = std::env::var("PATH").unwrap_or_default();
            options.home_file(".bravebot/settings.json", settings).env(
                "PATH",
                format!("{}:{path}", root.join(".venv/bin").display()),
            )
        },
        json!({}),
    );
    s.prompt(&[]);
    assert_eq!(run_questions(&s), 5, "every line was asked about");
    for ran in [
        "ran-git",
        ".venv/bin/ran-git",
        ".venv/bin/ran-cat",
        "ran-build.sh",
        "sub/ran-build.sh",
    ] {
        assert!(!s.root().join(ran).exists(), "{ran} ran unasked");
    }
    s.client.shutdown();
}

// Verifies: RUNTOOL-10
#[test]
fn a_file_a_run_approved_once_writes_through_its_arguments_is_marked_untrusted() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_cp",
            "run",
            json!({"command": "cp vendor/page.txt copy.txt", "why": "x"}),
        ),
        Reply::tool_call_with_id(
            "call_read",
            "read_file",
            json!({"path": "copy.txt", "why": "look"}),
        ),
        Reply::tool_call_with_id(
            "call_cat",
            "run",
            json!({"command": "cat copy.txt", "why": "look"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::start_with(
        &[("vendor/page.txt", &format!("{CANARY}\n"))],
        model,
        no_settings,
        json!({}),
    );
    s.client
        .answer_permissions_with(|q| match q.question_kind() {
            Some("run") if q.params["subject"]["command"] == "cp vendor/page.txt copy.txt" => {
                Answer::choose(q, "allow_once")
            }
            _ => Answer::choose(q, "reject_once"),
        });
    // The person vouched for copy.txt before it held anything.
    s.prompt(&["copy.txt"]);
    assert!(
        std::fs::read_to_string(s.root().join("copy.txt"))
            .unwrap_or_default()
            .contains(CANARY)
    );
    let read = s.model.tool_result("call_read");
    assert!(read.contains("ref:"), "{read}");
    assert!(
        s.model.tool_result("call_cat").contains("did not approve"),
        "a read of the copy is asked about"
    );
    s.model.assert_no_planner_request_contains(CANARY);
    s.client.shutdown();
}

// Verifies: RUNTOOL-9
#[test]
fn a_table_program_outside_the_system_directories_is_asked_about() {
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let cat = elsewhere.path().join("cat");
    std::fs::write(&cat, "#!/bin/sh\ntouch \"$0.ran\"\n").expect("write");
    let mut perms = std::fs::metadata(&cat).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&cat, perms).expect("chmod");
    let model = planner_running(&["cat AGENTS.md"], None);
    let s = Setup::start_with(
        &[("AGENTS.md", "rules\n")],
        model,
        |options, _| {
            let path = std::env::var("PATH").unwrap_or_default();
            options.env("PATH", format!("{}:{path}", elsewhere.path().display()))
        },
        json!({}),
    );
    s.prompt(&[]);
    assert_eq!(
        run_questions(&s),
        1,
        "a cat found outside /usr/bin is asked about"
    );
    assert!(!elsewhere.path().join("cat.ran").exists());
    s.client.shutdown();
}
