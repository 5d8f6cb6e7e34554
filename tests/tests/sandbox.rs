//! Confinement on this kernel: a child started under a policy through `bravebot_core::sandbox`
//! and asked to reach past its grants. These tests fail, rather than skip, where Landlock is
//! missing: `prepare` refuses there and the test says so.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

use bravebot_core::sandbox::{self, Policy};

/// Runs `script` under `bash` confined by `policy` on top of the system's read grants, and gives
/// back whether it succeeded and what it printed on standard error.
fn confined(policy: Policy, script: &str) -> (bool, String) {
    let mut whole = sandbox::system_policy();
    for (path, access) in policy.grants() {
        whole = match access {
            sandbox::Access::Read => whole.read(path),
            sandbox::Access::Write => whole.write(path),
        };
    }
    let whole = whole.network(policy.allows_network());
    let ready = sandbox::prepare(&whole)
        .unwrap_or_else(|refusal| panic!("this kernel must confine a process: {refusal}"));
    let mut command = Command::new("/bin/bash");
    command
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    ready.apply(&mut command);
    let mut child = command.spawn().expect("start a confined bash");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let status = child.wait().expect("wait for it");
    (status.success(), err)
}

/// The same script, unconfined: each test checks its probe succeeds without the sandbox, so a
/// confined failure is the sandbox's and not the script's.
fn unconfined(script: &str) -> bool {
    Command::new("/bin/bash")
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    let granted = tempfile::tempdir().expect("granted dir");
    let outside = tempfile::tempdir().expect("outside dir");
    std::fs::write(outside.path().join("secret"), "outside-secret\n").expect("write");
    (granted, outside)
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

// Verifies: SANDBOX-1
#[test]
fn this_kernel_confines() {
    let level = sandbox::level();
    assert!(level.available(), "{}", level.describe());
    assert!(level.network_denial(), "{}", level.describe());
}

// Verifies: SANDBOX-2
#[test]
fn a_confined_child_cannot_read_outside_its_grants() {
    let (granted, outside) = dirs();
    std::fs::write(granted.path().join("mine"), "mine\n").expect("write");
    let secret = p(&outside.path().join("secret"));
    let mine = p(&granted.path().join("mine"));
    let script = format!("cat '{secret}'");
    assert!(unconfined(&script));
    let (ok, _) = confined(Policy::deny_all().read(granted.path()), &script);
    assert!(!ok, "read {secret} outside the grants");
    let (ok, err) = confined(
        Policy::deny_all().read(granted.path()),
        &format!("cat '{mine}'"),
    );
    assert!(ok, "could not read inside its grant: {err}");
    let (ok, _) = confined(
        Policy::deny_all().read(granted.path()),
        &format!("ls '{}'", p(outside.path())),
    );
    assert!(!ok, "listed a directory outside the grants");
}

// Verifies: SANDBOX-2
#[test]
fn a_confined_child_cannot_write_or_truncate_outside_its_grants() {
    let (granted, outside) = dirs();
    let secret = p(&outside.path().join("secret"));
    let created = p(&outside.path().join("new"));
    for script in [
        format!("echo x >> '{secret}'"),
        format!("truncate -s 0 '{secret}'"),
        format!("echo x > '{created}'"),
        format!("rm '{secret}'"),
    ] {
        let (ok, _) = confined(Policy::deny_all().write(granted.path()), &script);
        assert!(!ok, "`{script}` succeeded outside the grants");
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).expect("still there"),
        "outside-secret\n"
    );
    assert!(!outside.path().join("new").exists());
    // A read grant is not a write grant either.
    let (ok, _) = confined(
        Policy::deny_all().read(outside.path()),
        &format!("truncate -s 0 '{secret}'"),
    );
    assert!(!ok, "truncated a file granted for reading");
    let inside = p(&granted.path().join("f"));
    let (ok, err) = confined(
        Policy::deny_all().write(granted.path()),
        &format!("echo x > '{inside}' && truncate -s 0 '{inside}'"),
    );
    assert!(ok, "could not write inside its grant: {err}");
}

// Verifies: SANDBOX-6
#[test]
fn a_confined_child_cannot_write_under_a_granted_directorys_git() {
    let (granted, _outside) = dirs();
    let root = granted.path();
    std::fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
    std::fs::write(root.join(".git/config"), "[core]\n").expect("write");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("README"), "r\n").expect("write");
    for script in [
        format!("echo x >> '{}'", p(&root.join(".git/config"))),
        format!("echo x > '{}'", p(&root.join(".git/hooks/pre-commit"))),
        format!("rm '{}'", p(&root.join(".git/config"))),
        format!(
            "mv '{}' '{}'",
            p(&root.join(".git")),
            p(&root.join("moved"))
        ),
    ] {
        assert!(unconfined(&format!("true || {script}")));
        let (ok, _) = confined(Policy::deny_all().write(root), &script);
        assert!(!ok, "`{script}` wrote under the .git");
    }
    assert!(root.join(".git/config").is_file());
    assert!(!root.join(".git/hooks/pre-commit").exists());
    // Beside the .git, the grant holds.
    let (ok, err) = confined(
        Policy::deny_all().write(root),
        &format!(
            "echo x > '{}' && echo y >> '{}' && cat '{}'",
            p(&root.join("src/new.rs")),
            p(&root.join("README")),
            p(&root.join(".git/config"))
        ),
    );
    assert!(ok, "could not write beside the .git: {err}");
}

// Verifies: SANDBOX-7
#[test]
fn a_confined_child_can_rename_inside_a_write_grant() {
    let (granted, _outside) = dirs();
    let root = granted.path();
    std::fs::create_dir_all(root.join("a")).expect("mkdir");
    std::fs::create_dir_all(root.join("b")).expect("mkdir");
    let script = format!(
        "echo x > '{tmp}' && mv '{tmp}' '{dst}' && mv '{dst}' '{top}' && mv '{b}' '{c}'",
        tmp = p(&root.join("a/tmp")),
        dst = p(&root.join("b/file")),
        top = p(&root.join("file")),
        b = p(&root.join("b")),
        c = p(&root.join("c")),
    );
    let (ok, err) = confined(Policy::deny_all().write(root), &script);
    assert!(ok, "a rename inside the grant failed: {err}");
    assert!(root.join("file").is_file() && root.join("c").is_dir());
}

// Verifies: SANDBOX-3
#[test]
fn a_confined_child_cannot_connect_out_when_the_network_is_denied() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port}");
    assert!(unconfined(&script), "bash could not connect at all");
    let (ok, _) = confined(Policy::deny_all(), &script);
    assert!(!ok, "connected out with the network denied");
    let (ok, err) = confined(Policy::deny_all().network(true), &script);
    assert!(ok, "could not connect with the network allowed: {err}");
}

// Verifies: SANDBOX-5
#[test]
fn a_policy_naming_an_absent_path_starts_with_it_left_out_and_named() {
    let (granted, _outside) = dirs();
    let absent = granted.path().join("not-there");
    let whole = sandbox::system_policy().read(&absent).read(granted.path());
    let ready = sandbox::prepare(&whole).expect("prepares");
    assert!(ready.plan.left_out.contains(&absent), "{:?}", ready.plan);
    assert!(ready.plan.notes().iter().any(|n| n.contains("not-there")));
    // The parent is granted as the policy says (reading), and nothing more: no write.
    let (ok, _) = confined(
        Policy::deny_all().read(&absent).read(granted.path()),
        &format!("mkdir '{}'", p(&absent)),
    );
    assert!(!ok, "the absent path's parent was granted writing");
}

// Verifies: SANDBOX-2
#[test]
fn a_policy_that_would_confine_nothing_is_refused() {
    let refused = sandbox::prepare(&Policy::deny_all().write("/usr/.."));
    assert!(
        matches!(refused, Err(sandbox::Refusal::ConfinesNothing)),
        "{refused:?}"
    );
}

// Verifies: SANDBOX-10
#[test]
fn a_confined_child_can_look_at_a_path_outside_its_grants_but_not_read_it() {
    let (granted, outside) = dirs();
    let secret = p(&outside.path().join("secret"));
    let link = outside.path().join("link");
    std::os::unix::fs::symlink(outside.path().join("secret"), &link).expect("link");
    let link = p(&link);
    // What the design accepts: whether something is there, its kind, size and time, and where a
    // link points are all seen from inside the confinement.
    for script in [
        format!("test -e '{secret}'"),
        format!("test \"$(stat -c '%F %s' '{secret}')\" = 'regular file 15'"),
        format!("stat -c '%Y' '{secret}'"),
        format!("test \"$(readlink '{link}')\" = '{secret}'"),
    ] {
        assert!(unconfined(&script), "`{script}` fails unconfined");
        let (ok, err) = confined(Policy::deny_all().read(granted.path()), &script);
        assert!(
            ok,
            "`{script}` could not look at a path outside the grants: {err}"
        );
    }
    // What it does not: the bytes, through the path or through the link.
    for script in [format!("cat '{secret}'"), format!("cat '{link}'")] {
        assert!(unconfined(&script), "`{script}` fails unconfined");
        let (ok, _) = confined(Policy::deny_all().read(granted.path()), &script);
        assert!(!ok, "`{script}` read outside the grants");
    }
}
