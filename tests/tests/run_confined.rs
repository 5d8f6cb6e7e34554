//! Confined runs through the real binary, on this kernel (RUN-17, RUN-18): with
//! `run.confined: unasked` a line that is not read-only runs without a question, held by Landlock
//! and seccomp to the workspace with no network; without it the same lines ask; where the kernel
//! cannot hold a line, or the line names a path outside, the person is asked and told why.
//!
//! These tests fail, rather than skip, where Landlock is missing, as `tests/sandbox.rs` does.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::Answer;
use bravebot_tests::setup::Setup;
use serde_json::json;
use tempfile::TempDir;

const CONFINED: &str = r#"{"run": {"confined": "unasked"}}"#;

fn line(id: &str, command: &str) -> Reply {
    Reply::tool_call_with_id(id, "run", json!({"command": command, "why": "try it"}))
}

/// A workspace with a `.git`, a link to a secret under the server's `HOME`, and a link to a
/// directory outside; a listener on 127.0.0.1 the lines try to reach.
struct World {
    s: Setup,
    home: TempDir,
    outside: TempDir,
    listener: TcpListener,
}

/// The lines the acceptance names: a write inside, a write into the build directory the project
/// declares, a connection out, a read of the home, a write under `.git`, a write outside.
fn lines(port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("write", "touch src/made.txt".to_string()),
        ("build", "mkdir -p target; touch target/built".to_string()),
        (
            "connect",
            format!("bash -c 'echo leaked > /dev/tcp/127.0.0.1/{port}'"),
        ),
        ("home", "cat secret-link".to_string()),
        ("git", "touch .git/hooks/post-checkout".to_string()),
        ("outside", "touch out-link/planted".to_string()),
    ]
}

fn world(settings: Option<&str>, extra_env: &[(&str, &str)], answer: &'static str) -> World {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("its address").port();
    let mut script: Vec<Reply> = lines(port)
        .into_iter()
        .map(|(id, command)| line(id, &command))
        .collect();
    script.push(Reply::text("done"));
    let model = FakeModel::start(script);
    let home = tempfile::tempdir().expect("a home");
    std::fs::write(home.path().join("secret.txt"), "home-secret\n").expect("secret");
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("mine.txt"), "the person's\n").expect("mine");
    let workspace = tempfile::tempdir().expect("workspace");
    std::fs::create_dir_all(workspace.path().join(".git/hooks")).expect(".git");
    std::fs::create_dir_all(workspace.path().join("src")).expect("src");
    std::fs::write(
        workspace.path().join("Cargo.toml"),
        "[package]\nname = \"w\"\n",
    )
    .expect("Cargo.toml");
    std::os::unix::fs::symlink(
        home.path().join("secret.txt"),
        workspace.path().join("secret-link"),
    )
    .expect("link");
    std::os::unix::fs::symlink(outside.path(), workspace.path().join("out-link")).expect("link");
    let home_path = home.path().to_path_buf();
    let settings = settings.map(str::to_string);
    let extra: Vec<(String, String)> = extra_env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let s = Setup::in_workspace(
        workspace,
        model,
        move |mut options, _| {
            options = options.home_dir(&home_path);
            if let Some(settings) = settings {
                options = options.home_file(".bravebot/settings.json", settings);
            }
            for (k, v) in extra {
                options = options.env(&k, &v);
            }
            options
        },
        json!({}),
    );
    s.client
        .answer_permissions_with(move |q| Answer::choose(q, answer));
    s.prompt(&[]);
    World {
        s,
        home,
        outside,
        listener,
    }
}

fn exists(p: PathBuf) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

fn received(listener: &TcpListener) -> Option<String> {
    std::thread::sleep(Duration::from_millis(200));
    let (mut stream, _) = listener.accept().ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    let mut got = String::new();
    let _ = stream.read_to_string(&mut got);
    Some(got)
}

fn summary(w: &World, id: &str) -> String {
    w.s.tool_update(id)["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn untouched_outside(w: &World) {
    assert_eq!(
        std::fs::read_to_string(w.outside.path().join("mine.txt")).expect("mine"),
        "the person's\n"
    );
    assert!(!exists(w.outside.path().join("planted")));
    assert_eq!(
        std::fs::read_to_string(w.home.path().join("secret.txt")).expect("secret"),
        "home-secret\n"
    );
}

fn notice(q: &bravebot_tests::lsp_client::ServerRequest) -> String {
    q.params["subject"]["notice"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

// Verifies: RUN-17, RUN-18, SANDBOX-8
#[test]
fn a_confined_line_runs_unasked_and_the_kernel_holds_it_to_the_workspace_with_no_network() {
    let w = world(Some(CONFINED), &[], "reject_once");
    assert_eq!(
        w.s.client.questions().len(),
        0,
        "every line ran without a question"
    );
    let ws = w.s.root();
    // A write inside lands, and so does one into the build directory the project declares,
    // made for it first.
    for (id, made) in [("write", "src/made.txt"), ("build", "target/built")] {
        assert!(exists(ws.join(made)), "{}", summary(&w, id));
        assert!(
            summary(&w, id).contains("touch: exit 0"),
            "{}",
            summary(&w, id)
        );
    }
    // Each reach past the confinement fails, and nothing arrives or lands.
    for id in ["connect", "home", "git", "outside"] {
        let said = summary(&w, id);
        assert!(!said.contains(": exit 0"), "{id} succeeded: {said}");
        assert!(
            said.contains("confined: it could write only inside the workspace"),
            "{said}"
        );
    }
    assert_eq!(
        received(&w.listener),
        None,
        "the listener heard from a confined line"
    );
    assert!(!exists(ws.join(".git/hooks/post-checkout")));
    untouched_outside(&w);
    // What the home's secret held never reached the planner either way.
    w.s.model.assert_no_planner_request_contains("home-secret");
    let audit = w.s.audit_details();
    assert!(
        audit
            .iter()
            .any(|d| d == "run: confined by the kernel (run.confined)"),
        "{audit:?}"
    );
    // The session's status says so.
    let status = w.s.status()["confinement"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        status.contains(
            "runs: lines the kernel can hold run confined without a question (run.confined: unasked)"
        ),
        "{status}"
    );
    w.s.client.shutdown();
}

// Verifies: RUN-17, RUN-18
#[test]
fn without_the_setting_the_same_lines_ask_say_they_are_not_confined_and_reach_everything() {
    // Allowed once each, unconfined: every probe reaches what the confined run could not, so a
    // confined failure above is the kernel's and not the probe's.
    let w = world(None, &[], "allow_once");
    let questions = w.s.client.questions();
    assert_eq!(questions.len(), 6, "each line was asked about");
    for q in &questions {
        assert!(
            notice(q).contains("Programs are not confined"),
            "{}",
            notice(q)
        );
    }
    // A line the kernel could hold offers to run such lines confined from now on.
    let ids: Vec<&str> = questions[0].params["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["optionId"].as_str())
        .collect();
    assert!(ids.contains(&"confined"), "{ids:?}");
    for id in ["write", "build", "connect", "home", "git", "outside"] {
        let said = summary(&w, id);
        assert!(said.contains(": exit 0"), "{id}: {said}");
        assert!(
            said.ends_with("; not confined: it ran with your access"),
            "{said}"
        );
    }
    assert_eq!(received(&w.listener).as_deref(), Some("leaked\n"));
    assert!(exists(w.s.path(".git/hooks/post-checkout")));
    assert!(exists(w.outside.path().join("planted")));
    w.s.client.shutdown();
}

// Verifies: RUN-17
#[test]
fn on_a_kernel_without_landlock_every_such_line_is_asked_saying_confinement_is_unavailable() {
    let w = world(
        Some(CONFINED),
        &[("BRAVEBOT_LANDLOCK_ABI_AT_MOST", "0")],
        "reject_once",
    );
    let questions = w.s.client.questions();
    assert_eq!(questions.len(), 6, "each line was asked about");
    for q in &questions {
        let said = notice(q);
        assert!(
            said.contains("It cannot run confined: confinement is unavailable here"),
            "{said}"
        );
        let offers_confined = q.params["options"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|o| o["optionId"] == "confined");
        assert!(
            !offers_confined,
            "offered to confine on a kernel that cannot"
        );
    }
    assert!(!exists(w.s.path("src/made.txt")));
    untouched_outside(&w);
    let status = w.s.status()["confinement"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        status.contains("runs: run.confined is unasked, but this kernel cannot confine a line"),
        "{status}"
    );
    w.s.client.shutdown();
}

// Verifies: RUN-17, RUN-18
#[test]
fn choosing_confined_runs_this_line_and_the_next_ones_confined_without_a_question() {
    let model = FakeModel::start(vec![
        line("first", "touch src/one.txt"),
        line("second", "touch src/two.txt"),
        line("named", "cat /etc/hostname /root/.ssh/id_rsa"),
        Reply::text("done"),
    ]);
    let s = Setup::start(&[("src/lib.rs", "")], model);
    s.client.answer_permissions_with(|q| {
        let confined = q.params["options"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|o| o["optionId"] == "confined");
        if confined {
            Answer::select("confined")
        } else {
            Answer::choose(q, "reject_once")
        }
    });
    s.prompt(&[]);
    let questions = s.client.questions();
    // The first line asked and offered it; the second ran unasked; the third names a path outside
    // what a confined run may reach, so it is put to the person with the reason.
    assert_eq!(questions.len(), 2, "{questions:?}");
    assert!(s.path("src/one.txt").exists() && s.path("src/two.txt").exists());
    let summary_of = |id: &str| {
        s.tool_update(id)["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    for id in ["first", "second"] {
        assert!(
            summary_of(id).contains("; confined: "),
            "{}",
            summary_of(id)
        );
    }
    let said = notice(&questions[1]);
    assert!(
        said.contains("It cannot run confined: it names /root/.ssh/id_rsa, outside what a confined run may reach"),
        "{said}"
    );
    assert!(summary_of("named").is_empty() || !summary_of("named").contains("confined: it"));
    s.client.shutdown();
}

// Verifies: RUN-17, RUN-19
#[test]
fn cargo_test_runs_confined_in_a_fresh_repository_without_a_question() {
    let model = FakeModel::start(vec![
        line("test", "cargo test --offline -q"),
        Reply::text("done"),
    ]);
    let home = tempfile::tempdir().expect("a home");
    let workspace = tempfile::tempdir().expect("workspace");
    std::fs::create_dir_all(workspace.path().join(".git")).expect(".git");
    std::fs::create_dir_all(workspace.path().join("src")).expect("src");
    std::fs::write(
        workspace.path().join("Cargo.toml"),
        "[package]\nname = \"confined\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("Cargo.toml");
    std::fs::write(
        workspace.path().join("src/lib.rs"),
        "#[test]\nfn adds() { assert_eq!(1 + 1, 2); }\n",
    )
    .expect("lib.rs");
    // The person's toolchain, where it is: the server's HOME is the test's own.
    let real_home = std::env::var("HOME").expect("HOME");
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or(format!("{real_home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or(format!("{real_home}/.rustup"));
    let home_path = home.path().to_path_buf();
    let s = Setup::in_workspace(
        workspace,
        model,
        move |options, _| {
            options
                .home_dir(&home_path)
                .home_file(".bravebot/settings.json", CONFINED)
                .env("CARGO_HOME", &cargo_home)
                .env("RUSTUP_HOME", &rustup_home)
        },
        json!({}),
    );
    s.prompt(&[]);
    let said = s.tool_update("test")["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(s.client.questions().len(), 0, "{said}");
    assert!(said.contains("cargo: exit 0"), "{said}");
    assert!(said.contains("; confined: "), "{said}");
    assert!(s.path("target/debug").is_dir());
    // What the build wrote is marked untrusted after it (RUN-19).
    let audit = s.audit_details();
    assert!(
        audit.iter().any(
            |d| d.starts_with("run: ") && d.contains("a confined run changed marked untrusted")
        ),
        "{audit:?}"
    );
    s.client.shutdown();
}

// Verifies: RUN-19
#[test]
fn what_a_confined_run_wrote_is_untrusted_even_where_it_set_the_time_back() {
    let model = FakeModel::start(vec![
        line(
            "rewrite",
            // The shell makes the marker, so the line the planner wrote does not hold it.
            "sh -c 'echo CANARY-confined-$((6*7)) > src/data.txt; touch -d 2000-01-01 src/data.txt'",
        ),
        Reply::tool_call_with_id(
            "read",
            "read_file",
            json!({"path": "src/data.txt", "why": "look"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::start_with(
        &[("src/data.txt", "vouched\n"), ("src/lib.rs", "")],
        model,
        |options, _| options.home_file(".bravebot/settings.json", CONFINED),
        json!({}),
    );
    // The person vouches for the file; the confined run writes it afterwards, unasked.
    s.prompt_text("go", &["src/data.txt"]);
    assert_eq!(s.client.questions().len(), 0);
    assert_eq!(
        std::fs::read_to_string(s.path("src/data.txt")).expect("data"),
        "CANARY-confined-42\n"
    );
    let audit = s.audit_details();
    let read = s.model.tool_result("read");
    assert!(read.contains("ref:"), "{read}\n{audit:#?}");
    s.model
        .assert_no_planner_request_contains("CANARY-confined-42");
    assert!(
        audit
            .iter()
            .any(|d| d == "run: 1 file(s) a confined run changed marked untrusted"),
        "{audit:?}"
    );
    s.client.shutdown();
}

// Verifies: RUN-17, RUN-19
#[test]
fn a_background_line_is_asked_since_what_it_writes_could_not_be_marked_after_it() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "job",
            "run",
            json!({"command": "touch src/later.txt", "background": true, "why": "in the background"}),
        ),
        Reply::text("done"),
    ]);
    let s = Setup::start_with(
        &[("src/lib.rs", "")],
        model,
        |options, _| options.home_file(".bravebot/settings.json", CONFINED),
        json!({}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "reject_once"));
    s.prompt(&[]);
    let questions = s.client.questions();
    assert_eq!(questions.len(), 1, "the background line was asked");
    let said = notice(&questions[0]);
    assert!(
        said.contains("It cannot run confined: it runs in the background"),
        "{said}"
    );
    assert!(!s.path("src/later.txt").exists());
    s.client.shutdown();
}
