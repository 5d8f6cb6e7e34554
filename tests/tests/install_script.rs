//! `scripts/install.sh`'s search for the person's editors (`scripts/find-editors.sh`), run in
//! bash on made-up trees: a Neovim or VS Code on `PATH`, in the places their installers put them,
//! only in this checkout (as `scripts/test.sh` leaves them), and nowhere.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// A home, a `PATH` directory, a root standing for `/` and a checkout, all empty to begin with.
struct Tree {
    home: TempDir,
    path: TempDir,
    root: TempDir,
    checkout: TempDir,
}

fn tree() -> Tree {
    let dir = || tempfile::tempdir().expect("a directory");
    Tree {
        home: dir(),
        path: dir(),
        root: dir(),
        checkout: dir(),
    }
}

/// An executable file at `dir/relative`, its directories made.
fn program(dir: &Path, relative: &str) -> PathBuf {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("make its directory");
    std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("write it");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// What the three searches found, one line each: `name=status|command|where[|pack]`.
fn found(t: &Tree) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/find-editors.sh");
    let output = Command::new("/bin/bash")
        .arg("-c")
        .arg(
            r#". "$1"
find_neovim; echo "nvim=$?|$NVIM_BIN|$NVIM_WHERE|$NVIM_PACK"
find_vscode; echo "vscode=$?|${VSCODE_CMD[*]}|$VSCODE_WHERE"
find_npm; echo "npm=$?|${NPM_CMD[*]}|$NPM_WHERE""#,
        )
        .arg("find-editors")
        .arg(&script)
        .env_clear()
        .env("HOME", t.home.path())
        .env("PATH", t.path.path())
        .env("BRAVEBOT_FIND_ROOT", t.root.path())
        .env("CHECKOUT", t.checkout.path())
        .output()
        .expect("run bash");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

// Verifies: INSTALL-1
#[test]
fn editors_off_path_in_their_installers_places_are_found_and_said_to_be_off_path() {
    let t = tree();
    let nvim = program(t.root.path(), "opt/nvim-linux-x86_64/bin/nvim");
    let code = program(t.root.path(), "usr/share/code/bin/code");
    // The checkout's copies are there too, and lose to the person's own.
    program(t.checkout.path(), ".venv/bin/nvim");
    let lines = found(&t);
    let pack = t
        .home
        .path()
        .join(".local/share/nvim/site/pack/bravebot/start");
    assert_eq!(
        lines[0],
        format!(
            "nvim=0|{}|at {} (not on PATH)|{}",
            nvim.display(),
            nvim.display(),
            pack.display()
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "vscode=0|{}|{} (not on PATH)",
            code.display(),
            code.display()
        )
    );
}

// Verifies: INSTALL-1
#[test]
fn editors_on_path_come_first() {
    let t = tree();
    let nvim = program(t.path.path(), "nvim");
    let codium = program(t.path.path(), "codium");
    program(t.root.path(), "usr/bin/nvim");
    program(t.root.path(), "usr/bin/code");
    let npm = program(t.path.path(), "npm");
    let lines = found(&t);
    assert!(
        lines[0].starts_with(&format!("nvim=0|{}|on PATH|", nvim.display())),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        format!("vscode=0|{}|codium on PATH", codium.display())
    );
    assert_eq!(lines[2], format!("npm=0|{}|on PATH", npm.display()));
}

// Verifies: INSTALL-1
#[test]
fn a_flatpak_neovim_gets_the_plugin_in_its_own_data_directory() {
    let t = tree();
    program(
        t.home.path(),
        ".local/share/flatpak/exports/bin/io.neovim.nvim",
    );
    program(
        t.root.path(),
        "var/lib/flatpak/exports/bin/com.visualstudio.code",
    );
    let lines = found(&t);
    let pack = t
        .home
        .path()
        .join(".var/app/io.neovim.nvim/data/nvim/site/pack/bravebot/start");
    assert!(
        lines[0].starts_with("nvim=0|") && lines[0].ends_with(&format!("|{}", pack.display())),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("flatpak/exports/bin/com.visualstudio.code"),
        "{lines:?}"
    );
}

// Verifies: INSTALL-1
#[test]
fn only_the_checkouts_own_copies_are_used_and_said_to_be_the_checkouts() {
    let t = tree();
    let nvim = program(t.checkout.path(), ".venv/bin/nvim");
    let node = program(t.checkout.path(), ".tools/node24/bin/node");
    let npm = program(t.checkout.path(), ".tools/node24/bin/npm");
    let entry = t
        .checkout
        .path()
        .join(".tools/code-server/node_modules/code-server/out/node/entry.js");
    std::fs::create_dir_all(entry.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&entry, "").expect("write entry.js");
    let lines = found(&t);
    assert!(
        lines[0].starts_with(&format!(
            "nvim=0|{}|only as this checkout's own copy, which scripts/test.sh installed for its tests (start it as {} ",
            nvim.display(),
            nvim.display()
        )),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "vscode=0|{} {}|only this checkout's own code-server",
            node.display(),
            entry.display()
        )),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with(&format!("npm=0|{}|this checkout's own Node", npm.display())),
        "{lines:?}"
    );
}

// Verifies: INSTALL-1
#[test]
fn nothing_found_is_said_as_nothing() {
    let t = tree();
    let lines = found(&t);
    assert!(lines[0].starts_with("nvim=1||"), "{lines:?}");
    assert_eq!(lines[1], "vscode=1||");
    assert_eq!(lines[2], "npm=1||");
}
