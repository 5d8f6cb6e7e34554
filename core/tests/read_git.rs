//! `read_git` through turns against the scripted fake model: what it declines, what reaches the
//! planner, what is quarantined or held back, and that a hostile configuration runs nothing.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use bravebot_core::kernel::trust::{RuleOrigin, Scope, TrustRule};
use bravebot_core::screen::{Answer, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::git_fixture::{git, git_stdin};
use serde_json::{Value, json};

mod common;

use common::{Fixture, TestScreen, fixture_in_git};

fn call(id: &str, args: Value) -> Reply {
    Reply::tool_call_with_id(id, "read_git", args)
}

/// A session whose planner makes `calls` (ids c0, c1, ...) and then stops.
async fn session_with(calls: Vec<Value>, setup: impl FnOnce(&Fixture)) -> Fixture {
    let mut replies: Vec<Reply> = calls
        .into_iter()
        .enumerate()
        .map(|(i, a)| call(&format!("c{i}"), a))
        .collect();
    replies.push(Reply::text("done"));
    let model = FakeModel::start_with(|s| s.planner(replies));
    let f = fixture_in_git(
        model,
        TestScreen::new(false, |_| Answer::Refused),
        Settings::default(),
    );
    setup(&f);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    f
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.name=Ada",
            "-c",
            "user.email=ada@example.com",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

fn small_repo(f: &Fixture) {
    let dir = f.path("");
    git(&dir, &["init", "-q", "-b", "main"]);
    f.write("src/lib.rs", "fn one() {}\n");
    commit_all(&dir, "first commit");
    f.write("src/lib.rs", "fn one() {}\nfn two() {}\n");
    f.write("vendor/dep.rs", "pub fn dep() {}\n");
    commit_all(&dir, "second commit");
}

fn trust_workspace(f: &Fixture) {
    f.session.trust_path(&f.path(".git"), Scope::Directory);
}

/// A rule trusting the whole working tree. No gesture of the protocol makes one (a directory the
/// person adds is a place to work, not trusted: seed 002), so it is written into the map here.
fn trust_whole_tree(f: &Fixture) {
    f.session.trust.lock().restore(TrustRule {
        path: f.path(""),
        scope: Scope::Directory,
        origin: RuleOrigin::Person,
    });
}

// Verifies: GIT-12, GIT-13
#[tokio::test]
async fn a_status_answers_only_where_the_whole_tree_is_trusted() {
    let status = || json!({"query": "status", "why": "what changed"});
    let changed = |f: &Fixture| {
        small_repo(f);
        f.write("src/lib.rs", "fn changed() {}\n");
        f.write("notes.txt", "new\n");
    };
    // Only the .git is trusted: history answers, status does not.
    let f = session_with(vec![status()], |f| {
        changed(f);
        trust_workspace(f);
    })
    .await;
    let r = f.result("c0");
    assert!(
        r.contains("whole working tree") && r.contains("use run"),
        "{r}"
    );
    assert!(!r.contains("src/lib.rs"), "{r}");
    // The whole tree trusted, with one file under it marked untrusted: still declined.
    let f = session_with(vec![status()], |f| {
        changed(f);
        trust_workspace(f);
        trust_whole_tree(f);
        f.session
            .trust
            .lock()
            .mark_written_untrusted(f.path("vendor/dep.rs"), None);
    })
    .await;
    assert!(f.result("c0").contains("use run"), "{}", f.result("c0"));
    // Trusted in full: git's lines, nobody asked.
    let f = session_with(
        vec![
            status(),
            json!({"query": "status", "path": "vendor", "why": "x"}),
        ],
        |f| {
            changed(f);
            trust_workspace(f);
            trust_whole_tree(f);
        },
    )
    .await;
    let r = f.result("c0");
    assert!(
        r.contains(" M src/lib.rs") && r.contains("?? notes.txt"),
        "{r}"
    );
    assert!(
        f.result("c1").contains("nothing to list"),
        "{}",
        f.result("c1")
    );
    assert!(f.screen.asked().is_empty(), "nobody was asked");
    // A split index is declined with the pointer to run.
    let f = session_with(vec![status()], |f| {
        changed(f);
        git(&f.path(""), &["update-index", "--split-index"]);
        trust_workspace(f);
        trust_whole_tree(f);
    })
    .await;
    let r = f.result("c0");
    assert!(r.contains("split") && r.contains("use run"), "{r}");
}

// Verifies: GIT-2
#[tokio::test]
async fn a_repository_nobody_vouched_for_is_declined_with_a_pointer_to_run() {
    let f = session_with(vec![json!({"query": "log", "why": "history"})], small_repo).await;
    let result = f.result("c0");
    assert!(result.contains("use run"), "{result}");
    assert!(!result.contains("second commit"), "{result}");
}

// Verifies: GIT-1, GIT-2
#[tokio::test]
async fn a_trusted_repository_answers_the_planner_with_nobody_asked() {
    let f = session_with(
        vec![
            json!({"query": "log", "why": "history"}),
            json!({"query": "show", "revision": "HEAD", "path": "src", "why": "last change"}),
            json!({"query": "diff", "revision": "HEAD~1..HEAD", "why": "diff"}),
            json!({"query": "search", "pattern": "fn t", "why": "find"}),
        ],
        |f| {
            small_repo(f);
            trust_workspace(f);
        },
    )
    .await;
    let log = f.result("c0");
    assert!(
        log.contains(" Ada second commit") && log.contains(" Ada first commit"),
        "{log}"
    );
    let show = f.result("c1");
    assert!(
        show.contains("+fn two() {}") && !show.contains("vendor/dep.rs"),
        "{show}"
    );
    assert!(f.result("c2").contains("+++ b/vendor/dep.rs"));
    assert!(
        f.result("c3").contains("HEAD:src/lib.rs:2:fn two() {}"),
        "{}",
        f.result("c3")
    );
    assert!(f.screen.asked().is_empty(), "nobody was asked");
}

// Verifies: GIT-3
#[tokio::test]
async fn an_answer_showing_a_distrusted_file_is_quarantined() {
    let f = session_with(
        vec![
            json!({"query": "show", "revision": "HEAD", "why": "last change"}),
            json!({"query": "search", "pattern": "zzz-nothing", "why": "find"}),
            json!({"query": "log", "why": "history"}),
        ],
        |f| {
            small_repo(f);
            trust_workspace(f);
            f.session
                .trust
                .lock()
                .mark_written_untrusted(f.path("vendor/dep.rs"), None);
        },
    )
    .await;
    let show = f.result("c0");
    assert!(
        show.contains("ref:") && !show.contains("pub fn dep"),
        "{show}"
    );
    let search = f.result("c1");
    assert!(search.contains("ref:"), "a search that read it: {search}");
    assert!(
        f.result("c2").contains("second commit"),
        "a log shows no file"
    );
}

// Verifies: GIT-2
#[tokio::test]
async fn a_rule_distrusting_anything_under_git_keeps_it_closed() {
    let f = session_with(vec![json!({"query": "tags", "why": "tags"})], |f| {
        small_repo(f);
        trust_workspace(f);
        f.session
            .trust
            .lock()
            .mark_written_untrusted(f.path(".git/refs/heads/main"), None);
    })
    .await;
    assert!(f.result("c0").contains("use run"), "{}", f.result("c0"));
}

// Verifies: GIT-5
#[tokio::test]
async fn a_file_holding_a_credential_is_held_back_when_nobody_agrees() {
    let key = "AKIAIOSFODNN7EXAMPLE";
    let f = session_with(
        vec![json!({"query": "show", "revision": "HEAD", "why": "last change"})],
        |f| {
            let dir = f.path("");
            git(&dir, &["init", "-q", "-b", "main"]);
            f.write("README.md", "hello\n");
            commit_all(&dir, "start");
            f.write("README.md", "hello again\n");
            f.write("deploy.env", &format!("AWS_KEY={key}\n"));
            commit_all(&dir, "add deploy settings");
            trust_workspace(f);
        },
    )
    .await;
    let show = f.result("c0");
    assert!(!show.contains(key), "{show}");
    assert!(
        show.contains("held back: the lines of deploy.env"),
        "{show}"
    );
    assert!(
        show.contains("+hello again"),
        "another file's lines are shown: {show}"
    );
}

// Verifies: GIT-4
#[tokio::test]
async fn a_configuration_naming_programs_runs_none_of_them() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("ran");
    let queries = vec![
        json!({"query": "log", "why": "x"}),
        json!({"query": "show", "why": "x"}),
        json!({"query": "diff", "revision": "HEAD~1 HEAD", "why": "x"}),
        json!({"query": "tags", "why": "x"}),
        json!({"query": "search", "pattern": "fn", "why": "x"}),
        json!({"query": "show", "revision": "HEAD:src/lib.rs", "why": "x"}),
        json!({"query": "status", "why": "x"}),
    ];
    let n = queries.len();
    let m = marker.clone();
    let f = session_with(queries, move |f| {
        small_repo(f);
        let program = f.path("hook.sh");
        std::fs::write(&program, format!("#!/bin/sh\ntouch {}\n", m.display())).unwrap();
        let mut perms = std::fs::metadata(&program).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&program, perms).unwrap();
        let config = f.path(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        let p = program.display();
        text.push_str(&format!(
            "[core]\n\tfsmonitor = {p}\n\tpager = {p}\n[diff]\n\texternal = {p}\n[alias]\n\tlog = !{p}\n\tshow = !{p}\n\tstatus = !{p}\n[diff \"x\"]\n\ttextconv = {p}\n[filter \"x\"]\n\tclean = {p}\n\tsmudge = {p}\n\tprocess = {p}\n\trequired = true\n"
        ));
        std::fs::write(&config, text).unwrap();
        f.write(".gitattributes", "* diff=x filter=x\n");
        f.write("src/lib.rs", "fn changed() {}\n");
        trust_workspace(f);
        // status reads the working tree, so it answers only where all of it is trusted.
        trust_whole_tree(f);
    })
    .await;
    for i in 0..n {
        let r = f.result(&format!("c{i}"));
        assert!(
            !r.starts_with("error: the repository could not be read"),
            "{r}"
        );
    }
    assert!(f.result("c0").contains("second commit"));
    let status = f.result(&format!("c{}", n - 1));
    assert!(
        status.contains("not compared") && status.contains("src/lib.rs"),
        "{status}"
    );
    assert!(!marker.exists(), "a program the configuration names ran");
}

// Verifies: GIT-4
#[tokio::test]
async fn layouts_that_send_a_read_elsewhere_are_declined() {
    type Setup = fn(&Path);
    let layouts: Vec<(&str, Setup)> = vec![
        ("alternates", |d| {
            std::fs::write(d.join(".git/objects/info/alternates"), "/elsewhere\n").unwrap();
        }),
        ("include", |d| append(d, "[include]\n\tpath = /elsewhere\n")),
        ("includeIf", |d| {
            append(d, "[includeIf \"gitdir:/\"]\n\tpath = /elsewhere\n")
        }),
        ("core.worktree", |d| {
            append(d, "[core]\n\tworktree = /elsewhere\n")
        }),
        ("replace", |d| {
            let head = String::from_utf8(git(d, &["rev-parse", "HEAD"])).unwrap();
            let parent = String::from_utf8(git(d, &["rev-parse", "HEAD~1"])).unwrap();
            git(d, &["replace", head.trim(), parent.trim()]);
        }),
        ("grafts", |d| {
            std::fs::write(d.join(".git/info/grafts"), "\n").unwrap()
        }),
        ("a .git file", |d| {
            std::fs::rename(d.join(".git"), d.join("real-git")).unwrap();
            std::fs::write(
                d.join(".git"),
                format!("gitdir: {}\n", d.join("real-git").display()),
            )
            .unwrap();
        }),
    ];
    for (name, setup) in layouts {
        let f = session_with(vec![json!({"query": "log", "why": "x"})], |f| {
            small_repo(f);
            setup(&f.path(""));
            trust_workspace(f);
        })
        .await;
        let r = f.result("c0");
        assert!(
            r.contains("declined") && r.contains("use run"),
            "{name}: {r}"
        );
    }
    let bare = tempfile::tempdir().unwrap();
    git(bare.path(), &["init", "-q", "--bare"]);
    assert_eq!(
        bravebot_core::git::open(bare.path()).err(),
        Some(bravebot_core::git::Declined::Bare)
    );
}

fn append(dir: &Path, text: &str) {
    let config = dir.join(".git/config");
    let mut old = std::fs::read_to_string(&config).unwrap();
    old.push_str(text);
    std::fs::write(config, old).unwrap();
}

// Verifies: GIT-6
#[tokio::test]
async fn questions_off_the_list_and_misshapen_arguments_are_refused_by_name() {
    let f = session_with(
        vec![
            json!({"query": "reflog", "why": "x"}),
            json!({"query": "blame", "why": "x"}),
            json!({"query": "log", "revision": "A...B", "why": "x"}),
            json!({"query": "show", "revision": "HEAD~1..HEAD", "why": "x"}),
            json!({"query": "log", "pattern": "x", "why": "x"}),
            json!({"query": "log", "since": "2023-02-30", "why": "x"}),
            json!({"query": "diff", "why": "x"}),
            json!({"query": "log", "path": "../elsewhere", "why": "x"}),
            json!({"query": "status", "revision": "HEAD", "why": "x"}),
            json!({"query": "log", "revision": ":/second", "why": "x"}),
            json!({"query": "show", "revision": "HEAD^{/first}", "why": "x"}),
        ],
        |f| {
            small_repo(f);
            trust_workspace(f);
        },
    )
    .await;
    for id in ["c9", "c10"] {
        let r = f.result(id);
        assert!(r.contains("does not read the revision form"), "{id}: {r}");
    }
    assert!(f.result("c0").contains("use run"));
    assert!(f.result("c1").contains("use run"));
    assert!(f.result("c2").contains("does not read the revision form"));
    assert!(f.result("c3").contains("for log and diff"));
    assert!(f.result("c4").contains("for search alone"));
    assert!(f.result("c5").contains("YYYY-MM-DD"));
    assert!(f.result("c6").contains("diff needs a `revision`"));
    assert!(f.result("c7").contains("not a plain path"));
    assert!(
        f.result("c8").contains("takes no `revision`"),
        "{}",
        f.result("c8")
    );
}

// Verifies: GIT-10
#[tokio::test]
async fn an_answer_cut_by_its_count_says_so_and_names_the_next_page() {
    let f = session_with(
        vec![
            json!({"query": "log", "count": 1, "why": "x"}),
            json!({"query": "log", "count": 1, "skip": 1, "why": "x"}),
            json!({"query": "log", "since": "2999-01-01", "why": "x"}),
        ],
        |f| {
            small_repo(f);
            trust_workspace(f);
        },
    )
    .await;
    let first = f.result("c0");
    assert!(
        first.contains("second commit") && first.contains("skip 1"),
        "{first}"
    );
    let second = f.result("c1");
    assert!(
        second.contains("first commit") && !second.contains("cut"),
        "{second}"
    );
    assert!(f.result("c2").contains("no commits match"));
}

fn allow_once(question: &bravebot_core::screen::Question) -> Answer {
    let option = question
        .options
        .iter()
        .find(|o| o.kind == bravebot_core::screen::OptionKind::AllowOnce)
        .expect("an allow-once option");
    Answer::Selected {
        option_id: option.id.clone(),
        text: None,
        accepted_hunks: None,
        edited_text: None,
    }
}

// Verifies: GIT-9
#[tokio::test]
async fn a_sealed_git_run_names_read_git_and_another_programs_does_not() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            Reply::tool_call_with_id(
                "g",
                "run",
                json!({"command": "git log -n 1", "why": "history"}),
            ),
            Reply::tool_call_with_id("o", "run", json!({"command": "ls -a", "why": "list"})),
            Reply::text("done"),
        ])
    });
    let f = fixture_in_git(
        model,
        TestScreen::new(true, allow_once),
        Settings::default(),
    );
    small_repo(&f);
    assert_eq!(f.prompt("go", &[]).await, StopReason::EndTurn);
    let git_run = f.result("g");
    assert!(
        git_run.contains("quarantined") && git_run.contains("read_git"),
        "{git_run}"
    );
    let other = f.result("o");
    assert!(
        other.contains("quarantined") && !other.contains("read_git"),
        "{other}"
    );
}

/// A repository holding `.env` (with a marker no answer may carry) beside `src/`, whose `.git` is
/// trusted and whose `.env` the person denied.
fn repo_with_denied_env(f: &Fixture) {
    let dir = f.path("");
    git(&dir, &["init", "-q", "-b", "main"]);
    f.write("src/lib.rs", "fn one() {}\n");
    f.write(".env", "DENIED_MARKER=first\n");
    commit_all(&dir, "first commit");
    f.write(
        "src/lib.rs",
        "fn one() {}\nfn two() {} // DENIED_MARKER not\n",
    );
    f.write(".env", "DENIED_MARKER=second\n");
    commit_all(&dir, "second commit");
    trust_workspace(f);
    f.session.deny_path(Path::new(".env"), Scope::File);
}

// Verifies: GIT-14
#[tokio::test]
async fn a_denied_file_is_refused_by_name_and_left_out_of_every_answer() {
    let f = session_with(
        vec![
            json!({"query": "show", "revision": "HEAD:.env", "why": "as it was"}),
            json!({"query": "show", "revision": "HEAD~1:./.env", "why": "as it was"}),
            json!({"query": "log", "path": ".env", "why": "its history"}),
            json!({"query": "show", "revision": "HEAD", "why": "last change"}),
            json!({"query": "diff", "revision": "HEAD~1 HEAD", "why": "diff"}),
            json!({"query": "show", "revision": "HEAD:", "why": "the tree"}),
            json!({"query": "search", "pattern": "DENIED_MARKER", "why": "find"}),
            json!({"query": "log", "why": "history"}),
            json!({"query": "status", "why": "what changed"}),
        ],
        |f| {
            repo_with_denied_env(f);
            trust_whole_tree(f);
        },
    )
    .await;
    for id in ["c0", "c1", "c2"] {
        let r = f.result(id);
        assert!(r.contains("deny rule on .env"), "{id}: {r}");
    }
    let show = f.result("c3");
    assert!(
        show.contains("+fn two() {}")
            && show.contains("left out, by the person's deny rules: .env"),
        "{show}"
    );
    assert!(!show.contains("ref:"), "left out, not quarantined: {show}");
    let diff = f.result("c4");
    assert!(
        diff.contains("+++ b/src/lib.rs")
            && diff.contains("left out, by the person's deny rules: .env"),
        "{diff}"
    );
    let tree = f.result("c5");
    assert!(
        tree.contains("src/") && tree.contains("left out") && !tree.lines().any(|l| l == ".env"),
        "{tree}"
    );
    let search = f.result("c6");
    assert!(
        search.contains("HEAD:src/lib.rs:2:")
            && search.contains("left out, by the person's deny rules: .env"),
        "{search}"
    );
    assert!(
        !search.contains("ref:"),
        "the denied file was not read: {search}"
    );
    assert!(
        f.result("c7").contains("second commit"),
        "a log shows no file"
    );
    let status = f.result("c8");
    assert!(
        status.contains("deny rule") && status.contains("use run"),
        "{status}"
    );
    for r in f.tool_results() {
        assert!(!r.contains("DENIED_MARKER="), "{r}");
    }
    assert!(f.screen.asked().is_empty(), "nobody was asked");
}

// Verifies: GIT-14
#[tokio::test]
async fn a_deny_rule_over_git_or_anything_in_it_keeps_the_repository_closed() {
    for denied in [".git", ".git/config"] {
        let f = session_with(vec![json!({"query": "log", "why": "history"})], |f| {
            small_repo(f);
            trust_workspace(f);
            let scope = if denied == ".git" {
                Scope::Directory
            } else {
                Scope::File
            };
            f.session.deny_path(Path::new(denied), scope);
        })
        .await;
        let r = f.result("c0");
        assert!(
            r.contains("deny rule") && !r.contains("second commit"),
            "{denied}: {r}"
        );
    }
}

/// The end of an answer, where its notes are, for a failure message.
fn tail(text: &str) -> &str {
    let mut at = text.len().saturating_sub(1500);
    while !text.is_char_boundary(at) {
        at += 1;
    }
    &text[at..]
}

// Verifies: GIT-10, GIT-15, TRUST-21
#[tokio::test]
async fn a_tree_nested_sixty_thousand_deep_is_cut_rather_than_crashing() {
    // Before the walks were iterative, each nested tree took a frame of the blocking thread's
    // 2 MiB stack, and this overflowed it and aborted the whole process.
    let f = session_with(
        vec![
            json!({"query": "show", "revision": "HEAD", "why": "x"}),
            json!({"query": "diff", "revision": "HEAD~1..HEAD", "why": "x"}),
            json!({"query": "search", "pattern": "alpha", "why": "x"}),
            json!({"query": "log", "path": "d/d/d", "why": "x"}),
        ],
        |f| {
            bravebot_tests::git_fixture::deep_tree(&f.path(""), 60_000);
            trust_workspace(f);
        },
    )
    .await;
    for id in ["c0", "c1", "c2"] {
        let r = f.result(id);
        assert!(r.contains("nested deeper than 4096"), "{id}: {}", tail(&r));
        assert!(!r.contains("alpha at the bottom"), "{id}: {}", tail(&r));
    }
    assert!(f.result("c0").contains("nest deeply"));
    assert!(f.result("c2").contains("HEAD:top.txt:1:alpha"));
    assert!(f.result("c3").contains("nest deeply"), "{}", f.result("c3"));
}

// Verifies: GIT-15
#[tokio::test]
async fn a_git_bomb_is_walked_once_a_tree_and_says_what_it_passed_over() {
    // Eight directories a level, twelve levels, all the same tree: 8^12 paths from a few dozen
    // objects. Walked path by path, it grew memory until the process aborted.
    let f = session_with(
        vec![
            json!({"query": "show", "revision": "HEAD", "why": "x"}),
            json!({"query": "diff", "revision": "HEAD~1..HEAD", "why": "x"}),
            json!({"query": "search", "pattern": "alpha", "why": "x"}),
            json!({"query": "status", "why": "x"}),
        ],
        |f| {
            bravebot_tests::git_fixture::git_bomb(&f.path(""), 8, 12);
            trust_workspace(f);
            trust_whole_tree(f);
        },
    )
    .await;
    let first = format!("bomb/{}f.txt", "dir0/".repeat(12));
    for id in ["c0", "c1"] {
        let r = f.result(id);
        assert!(r.contains(&format!("+++ b/{first}")), "{id}: {}", tail(&r));
        assert!(
            r.contains("bomb/dir1 holds the same tree as bomb/dir0"),
            "{id}: {}",
            tail(&r)
        );
        assert!(!r.contains("bomb/dir1/"), "{id}: {}", tail(&r));
    }
    let r = f.result("c2");
    assert!(
        r.contains(&format!("HEAD:{first}:1:alpha in the bomb")),
        "{}",
        tail(&r)
    );
    assert!(
        r.contains("bomb/dir7 holds the same tree as bomb/dir0"),
        "{}",
        tail(&r)
    );
    let r = f.result("c3");
    assert!(
        r.contains("use run") && r.contains("200000"),
        "{}",
        tail(&r)
    );
}

// Verifies: GIT-16
#[tokio::test]
async fn an_oversized_commit_or_tag_is_refused_by_its_size() {
    let f = session_with(
        vec![
            json!({"query": "show", "revision": "HEAD", "why": "x"}),
            json!({"query": "log", "why": "x"}),
            json!({"query": "show", "revision": "big", "why": "x"}),
            json!({"query": "tags", "revision": "HEAD~1", "why": "x"}),
            json!({"query": "show", "revision": "HEAD~1", "why": "x"}),
            json!({"query": "show", "revision": "chain", "why": "x"}),
        ],
        |f| {
            small_repo(f);
            let dir = f.path("");
            let second = String::from_utf8(git(&dir, &["rev-parse", "HEAD"])).unwrap();
            let huge = "an endless message ".repeat(120_000);
            let mut s: Vec<u8> = Vec::new();
            s.extend_from_slice(b"commit refs/heads/main\n");
            s.extend_from_slice(b"committer Ada <ada@example.com> 1900000000 +0000\n");
            s.extend_from_slice(format!("data {}\n{huge}\n", huge.len()).as_bytes());
            s.extend_from_slice(format!("from {}\n", second.trim()).as_bytes());
            s.extend_from_slice(b"M 100644 inline big.txt\ndata 4\nbig\n\n");
            s.extend_from_slice(format!("tag big\nfrom {}\n", second.trim()).as_bytes());
            s.extend_from_slice(b"tagger Ada <ada@example.com> 1900000000 +0000\n");
            s.extend_from_slice(format!("data {}\n{huge}\n", huge.len()).as_bytes());
            bravebot_tests::git_fixture::import(&dir, &s);
            // Sixty-five annotated tags, each naming the one before.
            let mut target = second.trim().to_string();
            let mut kind = "commit";
            for n in 0..65 {
                let tag = format!(
                    "object {target}\ntype {kind}\ntag t{n}\ntagger Ada <ada@example.com> 1900000000 +0000\n\nlink {n}\n"
                );
                let id = git_stdin(&dir, &["mktag"], tag.as_bytes());
                target = String::from_utf8(id).unwrap().trim().to_string();
                kind = "tag";
            }
            git(&dir, &["update-ref", "refs/tags/chain", &target]);
            trust_workspace(f);
        },
    )
    .await;
    for id in ["c0", "c1", "c2"] {
        let r = f.result(id);
        assert!(r.contains("past the 1 MiB"), "{id}: {}", tail(&r));
        assert!(!r.contains("an endless message"), "{id}: {}", tail(&r));
    }
    let r = f.result("c3");
    assert!(r.contains("past the 1 MiB"), "{}", tail(&r));
    assert!(
        f.result("c4").contains("second commit"),
        "{}",
        f.result("c4")
    );
    let r = f.result("c5");
    assert!(r.contains("a chain of more than 64 tags"), "{}", tail(&r));
}

// Verifies: GIT-15
#[tokio::test]
async fn a_status_over_a_working_tree_as_deep_as_paths_go_answers() {
    // gix's walk of the working tree descends once a directory; on a runtime thread's 2 MiB
    // stack a directory nested as deep as a path may name (4,096 bytes) overflowed it.
    let f = session_with(vec![json!({"query": "status", "why": "x"})], |f| {
        small_repo(f);
        let root = f.path("");
        let levels = (4_000 - root.as_os_str().len()) / 2;
        let mut dir = root.clone();
        for _ in 0..levels {
            dir.push("d");
            std::fs::create_dir(&dir).unwrap();
        }
        std::fs::write(dir.join("f"), "x").unwrap();
        trust_workspace(f);
        trust_whole_tree(f);
    })
    .await;
    let r = f.result("c0");
    assert!(r.contains("?? d/"), "{}", tail(&r));
}
