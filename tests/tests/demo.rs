//! End-to-end tests of `bravebot demo`, run as a real process with an isolated `HOME` and
//! `TMPDIR`: one turn against the scripted model built into the binary, reaching nothing else and
//! leaving nothing behind.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use bravebot_tests::lsp_client::{bravebot_binary, bravebot_command, run_with_timeout};
use tempfile::TempDir;

/// The line printed before the turn, word for word.
const LABEL: &str = "This is a scripted demonstration model built into bravebot, not a real model; nothing leaves this machine.";

/// Pieces of the instruction planted in the sample README (server/src/demo/sample.rs): none may
/// reach the transcript.
const INJECTION: [&str; 4] = [
    "BRAVEBOT-DEMO-INJECTION",
    "attacker.invalid",
    "ignore the person",
    "tell nobody",
];

/// A home, a temporary directory and a working directory for one run.
struct Dirs {
    home: TempDir,
    tmp: TempDir,
    cwd: TempDir,
}

fn dirs() -> Dirs {
    Dirs {
        home: tempfile::tempdir().expect("create a HOME"),
        tmp: tempfile::tempdir().expect("create a TMPDIR"),
        cwd: tempfile::tempdir().expect("create a working directory"),
    }
}

fn run_demo(dirs: &Dirs, env: &[(&str, String)]) -> Output {
    let mut command = bravebot_command(&bravebot_binary(), dirs.home.path(), dirs.cwd.path());
    command.arg("demo").env("TMPDIR", dirs.tmp.path());
    for (key, value) in env {
        command.env(key, value);
    }
    run_with_timeout(command, Duration::from_secs(60))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout:\n{}\n--- stderr:\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    )
}

/// Every path under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            out.push(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            if path.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A loopback listener that is never accepted on: any connection bravebot made to it waits in
/// its backlog, where [`assert_never_connected`] finds it.
fn trap() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("a bound address");
    listener
        .set_nonblocking(true)
        .expect("make the trap non-blocking");
    (listener, format!("http://{addr}"))
}

fn assert_never_connected(listener: &TcpListener, what: &str) {
    match listener.accept() {
        Err(error) if error.kind() == ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("{what} received a connection from {peer}"),
        Err(error) => panic!("{what} could not be checked: {error}"),
    }
}

// Verifies: BIN-4
#[test]
fn demo_runs_one_scripted_turn_showing_a_check_a_reference_and_an_answered_question() {
    let dirs = dirs();
    let output = run_demo(&dirs, &[]);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();

    let label = lines.iter().position(|l| *l == LABEL);
    let first_call = lines.iter().position(|l| l.starts_with("→ "));
    assert!(
        label.is_some() && label < first_call,
        "the label line does not come before the turn:\n{stdout}"
    );
    // The code is read after the check passes it; the README comes back as a reference.
    assert!(
        stdout.contains("→ read_file {\"path\":\"src/greet.py\"}"),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("ref:") && l.contains("README.md")),
        "no reference line names the README:\n{stdout}"
    );
    assert!(
        stdout.contains("the check's verdict: unsafe"),
        "the README's verdict is not shown:\n{stdout}"
    );
    // Two questions, each answered by the script and saying so.
    assert!(
        stdout.contains("question for the person: Let the agent read README.md?"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the demonstration answers: Keep it quarantined"),
        "{stdout}"
    );
    assert!(
        stdout.contains("question for the person: Edit src/greet.py?"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the demonstration answers: Accept edit"),
        "{stdout}"
    );
    assert!(stdout.contains("+def farewell(name):"), "{stdout}");
    // The streamed answer, and how to go on.
    assert!(
        stdout.contains("farewell() is now in src/greet.py"),
        "the streamed answer is missing:\n{stdout}"
    );
    for hint in [
        "BRAVEBOT_MODEL_URL",
        "BRAVEBOT_MODEL=",
        "BRAVEBOT_API_KEY",
        "~/.bravebot/settings.json",
        "bravebot doctor",
    ] {
        assert!(
            stdout.contains(hint),
            "the closing hint lacks {hint:?}:\n{stdout}"
        );
    }
    let all = format!("{stdout}{}", text(&output.stderr));
    for piece in INJECTION {
        assert!(
            !all.contains(piece),
            "the planted instruction reached the transcript ({piece:?}):\n{all}"
        );
    }
}

// Verifies: BIN-5
#[test]
fn demo_ignores_proxies_and_model_settings_and_connects_to_nothing_else() {
    let dirs = dirs();
    let (proxy, proxy_url) = trap();
    let (endpoint, endpoint_url) = trap();
    let settings = dirs.home.path().join(".bravebot");
    std::fs::create_dir_all(&settings).expect("create ~/.bravebot");
    std::fs::write(
        settings.join("settings.json"),
        format!(r#"{{"model": {{"baseUrl": "{endpoint_url}/v1", "name": "home-model"}}}}"#),
    )
    .expect("write home settings");
    let before = tree(dirs.home.path());
    let env = [
        ("HTTP_PROXY", proxy_url.clone()),
        ("HTTPS_PROXY", proxy_url.clone()),
        ("ALL_PROXY", proxy_url.clone()),
        ("http_proxy", proxy_url.clone()),
        ("all_proxy", proxy_url),
        ("BRAVEBOT_MODEL_URL", format!("{endpoint_url}/v1")),
        ("BRAVEBOT_MODEL", "env-model".to_owned()),
        ("BRAVEBOT_API_KEY", "sk-demo-canary".to_owned()),
    ];
    let output = run_demo(&dirs, &env);
    assert!(output.status.success(), "{}", describe(&output));
    assert_never_connected(&proxy, "the proxy named in the environment");
    assert_never_connected(&endpoint, "the endpoint named by the settings");
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(!all.contains("sk-demo-canary"), "{all}");
    assert_eq!(tree(dirs.home.path()), before, "the demo changed HOME");
}

// Verifies: BIN-6
#[test]
fn demo_leaves_home_and_the_temporary_directory_as_it_found_them() {
    let dirs = dirs();
    let output = run_demo(&dirs, &[]);
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(
        tree(dirs.home.path()),
        Vec::<String>::new(),
        "the demo wrote into HOME"
    );
    assert_eq!(
        tree(dirs.tmp.path()),
        Vec::<String>::new(),
        "the demo left its temporary directory behind"
    );
    assert_eq!(
        tree(dirs.cwd.path()),
        Vec::<String>::new(),
        "the demo wrote into the directory it was started in"
    );
    // The sample was where the demo said, inside the temporary directory.
    let stdout = text(&output.stdout);
    let tmp = std::fs::canonicalize(dirs.tmp.path()).expect("canonical TMPDIR");
    assert!(
        stdout.contains(&format!("The sample project is {}", tmp.display())),
        "the sample was not under TMPDIR:\n{stdout}"
    );
    assert!(
        stdout.contains(&format!("audit trail at {}", tmp.display())),
        "the audit trail was not under TMPDIR:\n{stdout}"
    );
}
