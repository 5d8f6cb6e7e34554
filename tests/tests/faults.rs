//! Faults, end to end over the real binary with the fake model: a model endpoint that dies
//! mid-reply, answers 500 and 503 or answers with a web page, a write that meets a full disk or a
//! read-only directory, a FIFO, a device and a socket where a file is expected, and the editor
//! going away while questions are pending. In every case the person's files are as they were or
//! as approved.

use std::path::{Path, PathBuf};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspOptions, REQUEST_PERMISSION};
use bravebot_tests::setup::Setup;
use serde_json::{Value, json};

const ORIGINAL: &str = "the original notes, as the person wrote them\n";

/// A server over a workspace holding `notes.md` and whatever `prepare` made in it.
fn start(model: FakeModel, prepare: impl FnOnce(&Path)) -> Setup {
    start_with(model, |w| prepare(w), |options, ()| options).0
}

/// Starts the server once `prepare` made the workspace; `options` may use what it made.
fn start_with<T>(
    model: FakeModel,
    prepare: impl FnOnce(&Path) -> T,
    options: impl FnOnce(LspOptions, &T) -> LspOptions,
) -> (Setup, T) {
    let workspace = tempfile::tempdir().expect("create a workspace");
    std::fs::write(workspace.path().join("notes.md"), ORIGINAL).expect("write notes.md");
    let made = prepare(workspace.path());
    let setup = Setup::in_workspace(workspace, model, |o, _| options(o, &made), json!({}));
    (setup, made)
}

/// Sends `text` with `notes.md` named and waits for the turn to end.
fn prompt(s: &Setup, text: &str) -> Value {
    s.prompt_text(text, &["notes.md"])
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the directory")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------
// The model endpoint

// Verifies: MODEL-4
#[test]
fn a_model_stream_that_closes_mid_reply_ends_the_turn_with_an_error_and_applies_nothing() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_cut",
            "write_file",
            json!({"path": "notes.md", "contents": "HALF-A-WRITE\n", "why": "asked"}),
        )
        .with_text("I will rewrite the notes.")
        .cut_off(),
        Reply::text("the next turn is whole"),
    ]);
    let s = start(model, |_| {});
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    let result = prompt(&s, "rewrite the notes");
    assert_eq!(result["stopReason"], "error", "{result}");
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("model") && message.contains("[DONE]"),
        "the error does not say the model's reply broke off: {message}"
    );
    assert_eq!(
        s.disk("notes.md"),
        ORIGINAL,
        "half a reply changed the file"
    );
    assert!(
        s.client.questions().is_empty(),
        "half a reply was put as a question"
    );
    let updates = s.client.updates(&s.session);
    assert!(
        !updates.iter().any(|u| u["kind"] == "toolCall"),
        "a tool call of half a reply ran: {updates:#?}"
    );
    // The session is not wedged: the next turn runs.
    let next = prompt(&s, "again");
    assert_eq!(next["stopReason"], "endTurn", "{next}");
    s.client.shutdown();
}

// Verifies: MODEL-6
#[test]
fn a_model_endpoint_answering_with_a_web_page_ends_the_turn_saying_so_and_what_to_check() {
    let model = FakeModel::start(vec![
        Reply::web_page(),
        Reply::text("the next turn is whole"),
    ]);
    let s = start(model, |_| {});
    let result = prompt(&s, "hello");
    assert_eq!(result["stopReason"], "error", "{result}");
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("web page") && message.contains("text/html"),
        "the error does not say a web page came back: {message}"
    );
    assert!(
        message.contains("base URL"),
        "the error does not say what to check: {message}"
    );
    assert!(
        !message.contains("[DONE]") && !message.contains("Sign in"),
        "the error reads the page or calls it a broken stream: {message}"
    );
    assert_eq!(
        s.model.requests_for("planner").len(),
        1,
        "a web page was asked for again"
    );
    let next = prompt(&s, "again");
    assert_eq!(next["stopReason"], "endTurn", "{next}");
    s.client.shutdown();
}

// Verifies: MODEL-4
#[test]
fn a_500_ends_the_turn_unretried_and_a_503_is_retried_once() {
    let model = FakeModel::start(vec![
        Reply::error(500, "the model server fell over"),
        Reply::text("answered after the 500"),
        Reply::error(503, "busy, try again"),
        Reply::text("answered after the retry"),
    ]);
    let s = start(model, |_| {});
    let first = prompt(&s, "hello");
    assert_eq!(first["stopReason"], "error", "{first}");
    let message = first["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("500"),
        "the error does not name the status: {message}"
    );
    assert_eq!(
        s.model.requests_for("planner").len(),
        1,
        "a 500 was retried"
    );
    let second = prompt(&s, "hello again");
    assert_eq!(second["stopReason"], "endTurn", "{second}");
    let third = prompt(&s, "and again");
    assert_eq!(
        third["stopReason"], "endTurn",
        "a 503 was not retried: {third}"
    );
    assert_eq!(
        s.model.requests_for("planner").len(),
        4,
        "the 503 took other than one retry"
    );
    let said: String = s
        .client
        .updates(&s.session)
        .iter()
        .filter(|u| u["kind"] == "agentText")
        .filter_map(|u| u["delta"].as_str())
        .collect();
    assert!(said.ends_with("answered after the retry"), "{said}");
    s.client.shutdown();
}

// ---------------------------------------------------------------------------------------------
// Writes that fail

/// A directory of the workspace whose filesystem is small or read-only, made the strongest way
/// this process can: as root a tmpfs mounted there (a real `ENOSPC`, a real `EROFS`), otherwise
/// permissions (`EACCES`) or a file-size limit on the server (`EFBIG`, with `SIGXFSZ` ignored).
/// The mount is undone on drop.
struct Constrained {
    dir: PathBuf,
    mounted: bool,
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn sh(line: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", line])
        .status()
        .is_ok_and(|s| s.success())
}

impl Constrained {
    /// `workspace/<name>` holding `notes.md` (the original); full once a few KiB are written, or
    /// read-only.
    fn make(workspace: &Path, name: &str, read_only: bool) -> Constrained {
        let dir = workspace.join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let d = dir.display();
        // BRAVEBOT_TEST_NO_MOUNT tries the file-size limit instead of a small disk, as root too;
        // a read-only directory needs the mount as root, whom permissions do not stop.
        let mounted = is_root()
            && (read_only || std::env::var_os("BRAVEBOT_TEST_NO_MOUNT").is_none())
            && sh(&format!(
                "mount -t tmpfs -o size=16k,mode=0755 bravebot-test '{d}'"
            ));
        assert!(
            mounted || !read_only || !is_root(),
            "as root, a read-only directory needs a tmpfs mounted at {d}, and mounting failed"
        );
        std::fs::write(dir.join("notes.md"), ORIGINAL).expect("write the original");
        if read_only {
            let made = if mounted {
                sh(&format!("mount -o remount,ro '{d}'"))
            } else {
                sh(&format!("chmod 0555 '{d}'"))
            };
            assert!(made, "could not make {d} read-only");
        } else if mounted {
            // Fill it up to its last few KiB, so a write of more than that fails partway.
            sh(&format!(
                "dd if=/dev/zero of='{d}/.filler' bs=1024 count=12 2>/dev/null"
            ));
        }
        Constrained { dir, mounted }
    }

    /// Options that limit the server's file size when the directory itself is not small.
    fn limit(&self, options: LspOptions, wrapper_dir: &Path) -> LspOptions {
        if self.mounted {
            return options;
        }
        let wrapper = wrapper_dir.join("bravebot-limited");
        let binary = bravebot_tests::lsp_client::bravebot_binary();
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\ntrap '' XFSZ\nulimit -f 16\nexec '{}' \"$@\"\n",
                binary.display()
            ),
        )
        .expect("write the wrapper");
        sh(&format!("chmod +x '{}'", wrapper.display()));
        options.binary(wrapper)
    }
}

impl Drop for Constrained {
    fn drop(&mut self) {
        let d = self.dir.display();
        if self.mounted {
            sh(&format!("umount -l '{d}'"));
        } else {
            sh(&format!("chmod 0755 '{d}'"));
        }
    }
}

fn assert_write_failed_cleanly(s: &Setup, dir: &Path, call_id: &str, leftovers: &[&str]) {
    let result = s.model.tool_result(call_id);
    assert!(
        result.contains("was not changed") && result.contains("writing failed"),
        "the planner was not told the write failed: {result}"
    );
    let update = s.tool_update(call_id);
    assert_eq!(update["status"], "failed", "{update}");
    assert!(
        update["summary"]
            .as_str()
            .is_some_and(|t| t.contains("writing failed")),
        "the person was not told: {update}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.md")).unwrap_or_default(),
        ORIGINAL,
        "the original did not survive"
    );
    let mut expected: Vec<String> = leftovers.iter().map(|n| (*n).to_owned()).collect();
    expected.push("notes.md".to_owned());
    expected.sort();
    assert_eq!(names_in(dir), expected, "a temporary file was left");
}

// Verifies: WRITE-10
#[test]
fn a_write_that_runs_out_of_space_leaves_the_original_and_no_temporary_file() {
    let big = "a line of the new notes that is long enough to fill a disk\n".repeat(1000);
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_full",
            "write_file",
            json!({"path": "full/notes.md", "contents": big, "why": "asked"}),
        ),
        Reply::text("done"),
    ]);
    let wrappers = tempfile::tempdir().expect("a directory for the wrapper");
    let (s, constrained) = start_with(
        model,
        |w| Constrained::make(w, "full", false),
        |options, made| made.limit(options, wrappers.path()),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    let result = prompt(&s, "rewrite full/notes.md");
    assert_eq!(result["stopReason"], "endTurn", "{result}");
    assert!(
        s.client.questions().len() == 1,
        "the write was not put to the person"
    );
    let filler: &[&str] = if constrained.mounted {
        &[".filler"]
    } else {
        &[]
    };
    assert_write_failed_cleanly(&s, &constrained.dir, "call_full", filler);
    s.client.shutdown();
}

// Verifies: WRITE-10
#[test]
fn a_write_into_a_read_only_directory_leaves_the_original_and_no_temporary_file() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_ro",
            "write_file",
            json!({"path": "locked/notes.md", "contents": "NEW NOTES\n", "why": "asked"}),
        ),
        Reply::tool_call_with_id(
            "call_ro_edit",
            "edit_file",
            json!({"path": "locked/notes.md", "old_text": "original", "new_text": "edited", "why": "asked"}),
        ),
        Reply::text("done"),
    ]);
    let (s, constrained) = start_with(
        model,
        |w| Constrained::make(w, "locked", true),
        |options, _| options,
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    let result = s.client.request(
        "bravebot/session/prompt",
        json!({"sessionId": s.session, "text": "rewrite it", "files": ["locked/notes.md"]}),
    );
    assert_eq!(result.expect("the prompt")["stopReason"], "endTurn");
    assert_eq!(
        s.client.questions().len(),
        2,
        "both changes were put to the person"
    );
    assert_write_failed_cleanly(&s, &constrained.dir, "call_ro", &[]);
    assert_write_failed_cleanly(&s, &constrained.dir, "call_ro_edit", &[]);
    s.client.shutdown();
}

// ---------------------------------------------------------------------------------------------
// Paths that are not files

// Verifies: READ-11
#[test]
fn a_fifo_a_device_and_a_socket_are_refused_without_blocking_by_read_search_and_edit() {
    let call = |id: &str, tool: &str, args: Value| Reply::tool_call_with_id(id, tool, args);
    let model = FakeModel::start(vec![
        call(
            "read_pipe",
            "read_file",
            json!({"path": "pipe", "why": "look"}),
        ),
        call(
            "read_sock",
            "read_file",
            json!({"path": "sock", "why": "look"}),
        ),
        call(
            "read_zero",
            "read_file",
            json!({"path": "zero", "why": "look"}),
        ),
        call(
            "search_pipe",
            "search",
            json!({"pattern": "x", "directory": "pipe", "why": "look"}),
        ),
        call(
            "search_all",
            "search",
            json!({"pattern": "needle", "why": "look"}),
        ),
        call(
            "edit_pipe",
            "edit_file",
            json!({"path": "pipe", "old_text": "a", "new_text": "b", "why": "fix"}),
        ),
        call(
            "edit_zero",
            "edit_file",
            json!({"path": "zero", "old_text": "a", "new_text": "b", "why": "fix"}),
        ),
        call(
            "write_sock",
            "write_file",
            json!({"path": "sock", "contents": "x", "why": "fix"}),
        ),
        Reply::text("done"),
    ]);
    let (s, listener) = start_with(
        model,
        |w| {
            assert!(
                sh(&format!("mkfifo '{}'", w.join("pipe").display())),
                "mkfifo"
            );
            std::os::unix::fs::symlink("/dev/zero", w.join("zero")).expect("symlink");
            std::fs::write(w.join("plain.txt"), "a needle in a file\n").expect("write");
            std::os::unix::net::UnixListener::bind(w.join("sock")).expect("bind")
        },
        |options, _| options,
    );
    // /dev added as a place to work, so the link to /dev/zero is within reach and is refused
    // for what it is.
    s.client
        .request(
            "bravebot/session/trust",
            json!({"sessionId": s.session, "path": "/dev", "scope": "directory"}),
        )
        .expect("add /dev");
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    let result = prompt(&s, "look around");
    assert_eq!(result["stopReason"], "endTurn", "{result}");
    for (id, kind) in [
        ("read_pipe", "a FIFO"),
        ("read_sock", "a socket"),
        ("read_zero", "a device"),
        ("edit_pipe", "a FIFO"),
        ("edit_zero", "a device"),
        ("write_sock", "a socket"),
    ] {
        let text = s.model.tool_result(id);
        assert!(
            text.starts_with("refused") && text.contains(kind),
            "{id}: not refused as {kind}: {text}"
        );
    }
    let pipe = s.model.tool_result("search_pipe");
    assert!(!pipe.contains("needle"), "{pipe}");
    let all = s.model.tool_result("search_all");
    assert!(
        all.contains("plain.txt"),
        "the search did not find the regular file: {all}"
    );
    assert!(
        s.client.questions().is_empty(),
        "a question was put about a non-file"
    );
    let pipe_meta = std::fs::symlink_metadata(s.workspace.path().join("pipe")).expect("pipe");
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &pipe_meta.file_type()
    ));
    drop(listener);
    s.client.shutdown();
}

// ---------------------------------------------------------------------------------------------
// The editor going away

// Verifies: PROTO-3
#[test]
fn the_editor_going_away_mid_question_refuses_every_pending_question_and_lands_nothing() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "call_a",
            "write_file",
            json!({"path": "notes.md", "contents": "WRITTEN AFTER THE EDITOR WENT\n", "why": "asked"}),
        ),
        Reply::tool_call_with_id(
            "call_b",
            "edit_file",
            json!({"path": "other.md", "old_text": "other", "new_text": "EDITED", "why": "asked"}),
        ),
        Reply::text("should never be asked for"),
    ]);
    let mut s = start(model, |w| {
        std::fs::write(w.join("other.md"), "the other file\n").expect("write other.md");
    });
    s.client.answer_permissions_with(|_| Answer::Hold);
    let _a = s.client.send_request(
        "bravebot/session/prompt",
        json!({"sessionId": s.session, "text": "write", "files": ["notes.md"]}),
    );
    let first = s.client.next_server_request(REQUEST_PERMISSION);
    assert_eq!(first.question_kind(), Some("write"), "{}", first.params);
    let second_session = s.client.new_session();
    let _b = s.client.send_request(
        "bravebot/session/prompt",
        json!({"sessionId": second_session, "text": "edit", "files": ["other.md"]}),
    );
    let second = s.client.next_server_request(REQUEST_PERMISSION);
    assert_eq!(second.question_kind(), Some("edit"), "{}", second.params);
    s.client.close_stdin();
    let status = s.client.wait_for_exit();
    assert_eq!(
        status.code(),
        Some(1),
        "no shutdown came, so LSP's exit code is 1: {status:?}"
    );
    assert!(
        !s.client.stderr().contains("panicked"),
        "{}",
        s.client.stderr()
    );
    assert_eq!(s.disk("notes.md"), ORIGINAL);
    assert_eq!(
        std::fs::read_to_string(s.workspace.path().join("other.md")).unwrap_or_default(),
        "the other file\n"
    );
    assert_eq!(names_in(s.workspace.path()), ["notes.md", "other.md"]);
    assert_eq!(
        s.model.requests_for("planner").len(),
        2,
        "a turn went on after the editor went away"
    );
}
