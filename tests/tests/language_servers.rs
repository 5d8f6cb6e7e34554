//! The language-server manager of `bravebot_core::language` against the fake server, with short
//! limits: settling with a bound, deadlines, the end of a server's output, and stopping.

use std::path::Path;
use std::time::{Duration, Instant};

use bravebot_core::language::{Language, LanguageServers, Limits, RpcError, Unavailable};
use serde_json::json;
use tempfile::TempDir;

fn limits() -> Limits {
    Limits {
        initialize: Duration::from_secs(10),
        request: Duration::from_millis(400),
        settle: Duration::from_millis(400),
        quiet: Duration::from_millis(50),
        busy: Duration::from_millis(200),
        shutdown: Duration::from_millis(300),
    }
}

/// The fake server on a `PATH` directory as `pyright-langserver`, behaving as `mode` says.
fn fake(mode: &str) -> TempDir {
    let dir = tempfile::tempdir().expect("bin");
    let script = format!(
        "#!/bin/sh\nFAKE_LSP_MODE='{mode}' exec '{}' \"$@\"\n",
        env!("CARGO_BIN_EXE_fake_language_server")
    );
    let path = dir.path().join("pyright-langserver");
    std::fs::write(&path, script).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn servers(bin: &Path, workspace: &Path) -> LanguageServers {
    LanguageServers::new(
        workspace.to_path_buf(),
        None,
        Some(bin.as_os_str().to_owned()),
        limits(),
    )
}

fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

async fn until_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while !gone(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        // Another process's end raises no event here: look again shortly.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

// Verifies: LSP-7
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_still_indexing_at_the_bound_answers_partial() {
    let bin = fake("progress-forever");
    let workspace = tempfile::tempdir().expect("workspace");
    let servers = servers(bin.path(), workspace.path());
    let launch = servers.launch(Language::Python).expect("on PATH");
    let server = servers.start(&launch).await.expect("it starts");
    let file = workspace.path().join("a.py");
    server.show_document(&file, "python", "a = 1\n").await;
    // The progress begins right after `initialized`: wait for the status to say so.
    let deadline = Instant::now() + Duration::from_secs(10);
    while servers.status()[0].state != "indexing" {
        assert!(Instant::now() < deadline, "the progress never began");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    assert_eq!(server.settle(&limits()).await, Some(limits().settle));
    assert!(started.elapsed() >= limits().settle);
    // Later questions wait the shorter bound.
    assert_eq!(server.settle(&limits()).await, Some(limits().busy));
    // A server with nothing open settles after a moment's quiet.
    let quiet = fake("");
    let calm = self::servers(quiet.path(), workspace.path());
    let launch = calm.launch(Language::Python).expect("on PATH");
    let server = calm.start(&launch).await.expect("it starts");
    assert_eq!(server.settle(&limits()).await, None);
}

// Verifies: LSP-6, LSP-8
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_its_deadline_is_withdrawn_and_the_end_of_output_fails_every_waiter() {
    let workspace = tempfile::tempdir().expect("workspace");
    let hang = fake("hang");
    let servers = servers(hang.path(), workspace.path());
    let server = servers
        .start(&servers.launch(Language::Python).expect("on PATH"))
        .await
        .expect("it starts");
    let asked = server
        .request("workspace/symbol", json!({"query": "x"}), &limits())
        .await;
    assert_eq!(asked, Err(RpcError::TimedOut(limits().request)));

    let crash = fake("crash-on-request");
    let servers = self::servers(crash.path(), workspace.path());
    let server = servers
        .start(&servers.launch(Language::Python).expect("on PATH"))
        .await
        .expect("it starts");
    let limits = limits();
    let (a, b) = tokio::join!(
        server.request("workspace/symbol", json!({"query": "a"}), &limits),
        server.request("workspace/symbol", json!({"query": "b"}), &limits),
    );
    assert_eq!((a, b), (Err(RpcError::Exited), Err(RpcError::Exited)));
    assert!(server.ended());
    assert_eq!(server.exit_status().await, "exit code 1");
    // Asked after the end, a request fails at once.
    let late = server
        .request("workspace/symbol", json!({"query": "c"}), &limits)
        .await;
    assert_eq!(late, Err(RpcError::Exited));
}

// Verifies: LSP-8
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_shutdown_is_killed_and_dropping_the_set_kills_the_rest() {
    let workspace = tempfile::tempdir().expect("workspace");
    let stubborn = fake("ignore-shutdown");
    let servers = servers(stubborn.path(), workspace.path());
    let server = servers
        .start(&servers.launch(Language::Python).expect("on PATH"))
        .await
        .expect("it starts");
    let pid = server.pid();
    drop(server);
    servers.stop_all();
    assert!(
        until_gone(pid, Duration::from_secs(5)).await,
        "killed after shutdown went unanswered"
    );
    assert!(servers.status().is_empty());
    assert!(matches!(
        servers
            .start(&servers.launch(Language::Python).expect("on PATH"))
            .await,
        Err(Unavailable::Stopped)
    ));

    let dropped = self::servers(stubborn.path(), workspace.path());
    let pid = dropped
        .start(&dropped.launch(Language::Python).expect("on PATH"))
        .await
        .expect("it starts")
        .pid();
    drop(dropped);
    assert!(
        until_gone(pid, Duration::from_secs(5)).await,
        "a dropped set leaves no server"
    );
}
