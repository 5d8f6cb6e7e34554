//! Checkpoints through the real binary: what a turn changed (an open unsaved buffer, a new file, a
//! file a run deleted, a file a run changed) comes back on a restore, exactly; the restore is
//! undone by restoring its own checkpoint; a file nobody's turn changed is never touched; the
//! person's later typing is theirs to give up; bytes that were untrusted come back untrusted.

use std::os::unix::fs::PermissionsExt;

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, file_uri};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

const BUFFER: &str = "fn a() {}\n// unsaved line\n";

fn mode(s: &Setup, rel: &str) -> u32 {
    std::fs::metadata(s.path(rel))
        .expect("there")
        .permissions()
        .mode()
        & 0o777
}

fn list(s: &Setup) -> Vec<Value> {
    s.client
        .request("bravebot/checkpoint/list", json!({"sessionId": s.session}))
        .expect("a list")["checkpoints"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn restore(s: &Setup, id: &str) -> Value {
    s.client
        .request(
            "bravebot/checkpoint/restore",
            json!({"sessionId": s.session, "checkpointId": id}),
        )
        .unwrap_or_else(|e| s.client.fail(&format!("the restore was refused: {e}")))
}

fn strings(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

/// A workspace with an open unsaved buffer, a file a run deletes and one a run changes, and a
/// turn that edits the buffer, writes a new file and runs both lines; every question allowed.
fn one_turn() -> Setup {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "edit",
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "// unsaved line", "new_text": "// edited line", "why": "tidy"}),
        ),
        Reply::tool_call_with_id(
            "write",
            "write_file",
            json!({"path": "notes/new.md", "contents": "# new\n", "why": "note"}),
        ),
        Reply::tool_call_with_id(
            "rm",
            "run",
            json!({"command": "rm old.txt", "why": "remove it"}),
        ),
        Reply::tool_call_with_id(
            "sed",
            "run",
            json!({"command": "sed -i s/three/THREE/ third.txt", "why": "shout"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::start(
        &[
            ("src/lib.rs", "fn a() {}\n"),
            ("old.txt", "old\n"),
            ("third.txt", "three\n"),
        ],
        model,
    );
    std::fs::set_permissions(s.path("old.txt"), std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    std::fs::set_permissions(s.path("third.txt"), std::fs::Permissions::from_mode(0o640))
        .expect("chmod");
    s.client.mirror_buffers();
    s.client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file_uri(&s.path("src/lib.rs")), "languageId": "rust", "version": 1, "text": BUFFER}}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt(&["src/lib.rs", "old.txt", "third.txt"]);
    s
}

// Verifies: CKPT-1, CKPT-3, CKPT-4
#[test]
fn a_restore_brings_back_everything_the_turn_changed_and_its_undo_brings_the_turn_back() {
    let s = one_turn();
    let uri = file_uri(&s.path("src/lib.rs"));
    // The turn's result, and a file the person made by hand afterwards.
    assert_eq!(
        s.client.buffer_text(&uri).as_deref(),
        Some("fn a() {}\n// edited line\n")
    );
    assert_eq!(s.disk("notes/new.md"), "# new\n");
    assert!(!s.path("old.txt").exists());
    assert_eq!(s.disk("third.txt"), "THREE\n");
    std::fs::write(s.path("mine.txt"), "by hand\n").expect("written");

    let turn_files = vec!["notes/new.md", "old.txt", "src/lib.rs", "third.txt"];
    let update = s
        .client
        .updates(&s.session)
        .into_iter()
        .find(|u| u["kind"] == "checkpoint")
        .expect("a checkpoint update");
    assert_eq!(strings(&update["files"]), turn_files);
    let listed = list(&s);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["kind"], "turn");
    assert_eq!(listed[0]["title"], "go");
    assert_eq!(strings(&listed[0]["files"]), turn_files);
    assert_eq!(strings(&listed[0]["removes"]), ["notes/new.md"]);
    let id = listed[0]["checkpointId"]
        .as_str()
        .expect("an id")
        .to_string();

    let done = restore(&s, &id);
    assert_eq!(strings(&done["restored"]), turn_files, "{done}");
    assert_eq!(strings(&done["removed"]), ["notes/new.md"], "{done}");
    assert_eq!(done["skipped"], json!([]));
    assert_eq!(s.client.buffer_text(&uri).as_deref(), Some(BUFFER));
    assert_eq!(
        s.disk("src/lib.rs"),
        "fn a() {}\n",
        "the buffer went back, not the disk"
    );
    assert!(!s.path("notes/new.md").exists());
    assert_eq!(
        (s.disk("old.txt"), mode(&s, "old.txt")),
        ("old\n".into(), 0o600)
    );
    assert_eq!(
        (s.disk("third.txt"), mode(&s, "third.txt")),
        ("three\n".into(), 0o640)
    );
    assert_eq!(s.disk("mine.txt"), "by hand\n");

    // The restore is a checkpoint of its own, listed first, whose restore undoes it.
    let undo = done["undoCheckpointId"]
        .as_str()
        .expect("an undo id")
        .to_string();
    let listed = list(&s);
    assert_eq!(listed[0]["checkpointId"], undo);
    assert_eq!(listed[0]["kind"], "restore");
    let again = restore(&s, &undo);
    assert_eq!(strings(&again["restored"]), turn_files, "{again}");
    assert_eq!(strings(&again["removed"]), ["old.txt"], "{again}");
    assert_eq!(
        s.client.buffer_text(&uri).as_deref(),
        Some("fn a() {}\n// edited line\n")
    );
    assert_eq!(s.disk("notes/new.md"), "# new\n");
    assert!(!s.path("old.txt").exists());
    assert_eq!(
        (s.disk("third.txt"), mode(&s, "third.txt")),
        ("THREE\n".into(), 0o640)
    );
    assert_eq!(s.disk("mine.txt"), "by hand\n");
    let audit = s.audit_details();
    assert!(
        audit
            .iter()
            .any(|d| d.starts_with(&format!("restored checkpoint {id} as checkpoint {undo}"))),
        "{audit:?}"
    );
    assert!(
        !audit
            .iter()
            .any(|d| d.contains("THREE") || d.contains("old\n")),
        "the audit names paths, never content"
    );
    s.client.shutdown();
}

// Verifies: CKPT-5
#[test]
fn a_file_the_person_changed_after_the_turn_is_asked_about_and_a_refusal_keeps_their_text() {
    let s = one_turn();
    let uri = file_uri(&s.path("src/lib.rs"));
    let theirs = "fn a() {}\n// edited line\n// the person's own line\n";
    s.client.type_into(&uri, theirs);
    std::fs::write(s.path("third.txt"), "THREE and mine\n").expect("written");
    let asked_before = s.client.questions().len();
    s.client.answer_permissions_with(|q| {
        if q.question_kind() == Some("restore") {
            Answer::select("keep")
        } else {
            Answer::choose(q, "allow_once")
        }
    });
    let id = list(&s)[0]["checkpointId"]
        .as_str()
        .expect("an id")
        .to_string();
    let done = restore(&s, &id);
    let questions: Vec<_> = s
        .client
        .questions()
        .into_iter()
        .skip(asked_before)
        .collect();
    assert_eq!(
        questions.len(),
        2,
        "one question per file the person changed"
    );
    let q = questions
        .iter()
        .find(|q| q.params["subject"]["path"] == "src/lib.rs")
        .expect("asked about the buffer");
    assert_eq!(q.question_kind(), Some("restore"));
    assert_eq!(q.params["subject"]["original"], theirs);
    assert_eq!(q.params["subject"]["proposed"], BUFFER);
    assert_eq!(q.params["subject"]["agent"], "fn a() {}\n// edited line\n");
    // Refused: the person's text stays; the rest of the turn goes back.
    assert_eq!(s.client.buffer_text(&uri).as_deref(), Some(theirs));
    assert_eq!(s.disk("third.txt"), "THREE and mine\n");
    let skipped: Vec<String> = done["skipped"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["path"].as_str().map(str::to_string))
        .collect();
    assert_eq!(skipped.len(), 2, "{done}");
    assert!(
        done["skipped"][0]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("kept your changes")
    );
    assert_eq!(s.disk("old.txt"), "old\n");
    assert!(!s.path("notes/new.md").exists());
    s.client.shutdown();
}

// Verifies: CKPT-6
#[test]
fn bytes_restored_from_before_a_vouch_are_untrusted_again_on_the_next_read() {
    // Turn 1 writes the output of a line approved once into data.txt (marked untrusted); turn 2
    // writes the planner's own words there; the person vouches for the file; a restore to before
    // turn 2 brings back turn 1's bytes, which the vouch never covered.
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "echo",
            "run",
            json!({"command": "echo from-a-program > data.txt", "why": "make it"}),
        ),
        Reply::text("made"),
        Reply::tool_call_with_id(
            "write",
            "write_file",
            json!({"path": "data.txt", "contents": "clean\n", "why": "replace it"}),
        ),
        Reply::text("written"),
        Reply::tool_call_with_id(
            "read",
            "read_file",
            json!({"path": "data.txt", "why": "look"}),
        ),
        Reply::text("read"),
    ]);
    let s = Setup::start(&[("README.md", "hi\n")], model);
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt_text("make data", &[]);
    s.prompt_text("write data", &[]);
    assert_eq!(s.disk("data.txt"), "clean\n");
    s.client
        .request(
            "bravebot/session/trust",
            json!({"sessionId": s.session, "path": "data.txt", "scope": "file"}),
        )
        .expect("trusted");
    let listed = list(&s);
    let before_write = listed
        .iter()
        .find(|c| c["title"] == "write data")
        .expect("the second turn's checkpoint")["checkpointId"]
        .as_str()
        .expect("an id")
        .to_string();
    let done = restore(&s, &before_write);
    assert_eq!(strings(&done["restored"]), ["data.txt"], "{done}");
    assert_eq!(s.disk("data.txt"), "from-a-program\n");
    s.prompt_text("read data", &[]);
    let result = s.model.tool_result("read");
    assert!(result.contains("ref:"), "quarantined again: {result}");
    assert!(!result.contains("from-a-program"), "{result}");
    s.client.shutdown();
}

// Verifies: CKPT-8
#[test]
fn only_the_persons_own_settings_turn_checkpoints_off() {
    let writes = || {
        FakeModel::start(vec![
            Reply::tool_call_with_id(
                "write",
                "write_file",
                json!({"path": "new.txt", "contents": "new\n", "why": "make it"}),
            ),
            Reply::text("done"),
        ])
    };
    let off = r#"{"checkpoints": {"enabled": false}}"#;
    // A workspace's settings file cannot turn them off: it may come with a cloned repository.
    let s = Setup::start(&[(".bravebot/settings.json", off)], writes());
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt(&[]);
    assert_eq!(s.disk("new.txt"), "new\n");
    let listed = list(&s);
    assert_eq!(listed.len(), 1);
    assert_eq!(strings(&listed[0]["files"]), ["new.txt"]);
    s.client.shutdown();
    // The person's own settings can.
    let s = Setup::start_with(
        &[],
        writes(),
        |options, _| options.home_file(".bravebot/settings.json", off),
        json!({}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt(&[]);
    assert_eq!(s.disk("new.txt"), "new\n");
    assert_eq!(list(&s), Vec::<Value>::new());
    s.client.shutdown();
}

// Verifies: CKPT-9
#[test]
fn the_command_line_lists_a_recorded_sessions_checkpoints_and_restores_and_undoes_one() {
    use bravebot_tests::lsp_client::{bravebot_binary, bravebot_command, run_with_timeout};
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "write",
            "write_file",
            json!({"path": "a.txt", "contents": "changed\n", "why": "change it"}),
        ),
        Reply::text("done"),
    ]);
    // A HOME of the test's own, which outlives the server.
    let home_dir = tempfile::tempdir().expect("a home");
    let s = Setup::start_with(
        &[("a.txt", "as it was\n")],
        model,
        |options, _| options.home_dir(home_dir.path()),
        json!({}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt_text("change a", &["a.txt"]);
    assert_eq!(s.disk("a.txt"), "changed\n");
    let home = s.client.home().to_path_buf();
    let cwd = s.root();
    let a = s.path("a.txt");
    let disk = || std::fs::read_to_string(&a).expect("a.txt");
    s.client.shutdown();
    let cli = |args: &[&str]| {
        let mut command = bravebot_command(&bravebot_binary(), &home, &cwd);
        command.args(args);
        let out = run_with_timeout(command, std::time::Duration::from_secs(60));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The server ended: its checkpoints were kept beside the record, and are read back.
    let listed = cli(&["checkpoints"]);
    assert_eq!(listed, "c1\tturn\tchange a\ta.txt\n");
    let restored = cli(&["restore", "c1"]);
    assert!(restored.starts_with("restored a.txt\n"), "{restored}");
    assert_eq!(disk(), "as it was\n");
    let undo = restored
        .lines()
        .find_map(|l| l.strip_prefix("undo with: bravebot "))
        .expect("the undo command")
        .to_string();
    let words: Vec<&str> = undo.split(' ').collect();
    cli(&words);
    assert_eq!(disk(), "changed\n");
    let listed = cli(&["checkpoints"]);
    assert!(
        listed.starts_with("c3\trestore\trestore to c2\ta.txt\n"),
        "{listed}"
    );
}

// Verifies: CKPT-4
#[test]
fn a_restore_writes_nothing_through_a_directory_a_link_replaced_since() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "write",
            "write_file",
            json!({"path": "sub/a.txt", "contents": "agent\n", "why": "change it"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::start(&[("sub/a.txt", "before\n")], model);
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    // Not named in the prompt: a file the person named is within reach wherever it is.
    s.prompt(&[]);
    assert_eq!(s.disk("sub/a.txt"), "agent\n");
    // Since the turn, `sub` became a link to a directory outside the workspace.
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("a.txt"), "agent\n").expect("written");
    std::fs::remove_dir_all(s.path("sub")).expect("removed");
    std::os::unix::fs::symlink(outside.path(), s.path("sub")).expect("linked");
    let id = list(&s)[0]["checkpointId"]
        .as_str()
        .expect("an id")
        .to_string();
    let done = restore(&s, &id);
    assert_eq!(done["restored"], json!([]), "{done}");
    assert_eq!(done["skipped"][0]["path"], "sub/a.txt");
    let reason = done["skipped"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("resolves outside"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("a.txt")).expect("there"),
        "agent\n",
        "nothing was written outside"
    );
    s.client.shutdown();
}

// Verifies: CKPT-10
#[test]
fn a_headless_run_keeps_its_checkpoint_and_names_the_command_that_puts_its_changes_back() {
    use bravebot_tests::lsp_client::{bravebot_binary, bravebot_command, run_with_timeout};
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "over",
            "run",
            json!({"command": "cp changed.txt a.txt", "why": "change it"}),
        ),
        Reply::tool_call_with_id(
            "new",
            "run",
            json!({"command": "cp changed.txt new.txt", "why": "add one"}),
        ),
        Reply::text("done"),
    ]);
    let home = tempfile::tempdir().expect("a home");
    let workspace = tempfile::tempdir().expect("a workspace");
    let cwd = std::fs::canonicalize(workspace.path()).expect("canonical");
    std::fs::create_dir_all(home.path().join(".bravebot")).expect("state dir");
    // Nobody is watching a headless run: only the person's own rule lets a line change a file.
    std::fs::write(
        home.path().join(".bravebot/settings.json"),
        r#"{"run": {"allow": ["cp"]}}"#,
    )
    .expect("settings");
    std::fs::write(cwd.join("a.txt"), "as it was\n").expect("a.txt");
    std::fs::write(cwd.join("changed.txt"), "changed\n").expect("changed.txt");
    std::fs::write(cwd.join("mine.txt"), "by hand\n").expect("mine.txt");
    let url = model.url();
    let bravebot = |args: &[&str]| {
        let mut command = bravebot_command(&bravebot_binary(), home.path(), &cwd);
        command
            .args(args)
            .env("BRAVEBOT_MODEL_URL", &url)
            .env("BRAVEBOT_MODEL", "fake-model")
            .env("BRAVEBOT_MODEL_API", "openai");
        let out = run_with_timeout(command, std::time::Duration::from_secs(60));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let read = |rel: &str| std::fs::read_to_string(cwd.join(rel)).ok();
    let printed = bravebot(&["exec", "change a"]);
    assert_eq!(read("a.txt").as_deref(), Some("changed\n"), "{printed}");
    assert_eq!(read("new.txt").as_deref(), Some("changed\n"), "{printed}");
    assert!(
        printed.contains("checkpoint c1: 2 changed (a.txt, new.txt)"),
        "{printed}"
    );
    let undo = printed
        .lines()
        .find_map(|l| l.strip_prefix("undo this turn's changes with: bravebot "))
        .unwrap_or_else(|| panic!("no undo command in:\n{printed}"))
        .to_string();
    // The run was recorded like any session: the newest one here, with its checkpoint.
    assert_eq!(
        bravebot(&["checkpoints"]),
        "c1\tturn\tchange a\ta.txt, new.txt\n"
    );
    let words: Vec<&str> = undo.split(' ').collect();
    assert_eq!(words[..2], ["restore", "c1"], "{undo}");
    let restored = bravebot(&words);
    // What the run made goes; what a.txt held nobody vouched for, so it was kept in memory only
    // (SESS-9) and went with the run: the restore says so and leaves the file as it is.
    assert_eq!(read("new.txt"), None, "{restored}");
    assert!(
        restored.contains("removed new.txt (it did not exist then)\n"),
        "{restored}"
    );
    assert!(
        restored.contains("left a.txt: what it held then is no longer kept"),
        "{restored}"
    );
    assert_eq!(read("a.txt").as_deref(), Some("changed\n"));
    assert_eq!(read("mine.txt").as_deref(), Some("by hand\n"));
    let home_bytes = walk_bytes(&home.path().join(".bravebot"));
    assert!(
        !home_bytes.windows(9).any(|w| w == b"as it was"),
        "an unvouched file's bytes reached ~/.bravebot"
    );
}

/// Every regular file's bytes under `dir`, one after another.
fn walk_bytes(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.extend(bytes);
            }
        }
    }
    out
}
