//! A generated git repository for comparing `read_git` with git itself: many commits written in
//! one `git fast-import` stream, with merges, lightweight and annotated tags, exact renames,
//! binary files, a submodule and a path that is not UTF-8; hostile repositories (a tree nested
//! tens of thousands deep, a "git bomb"). Also how the tests run git: with a pager of `cat`, no
//! system or global configuration and a clean environment.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs git in `dir` with nothing from the environment but `PATH`, and returns what it printed.
pub fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git_command(dir, args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The command [`git`] runs, for a caller that feeds it input.
pub fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .args(["-c", "core.pager=cat"])
        .args(args);
    command
}

/// Words the generated files are made of, so lines repeat and diffs have context.
const WORDS: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
];

fn data(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(format!("data {}\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out.push(b'\n');
}

/// A file's text after its `version`th change: numbered lines, a few replaced each version and
/// one appended, so a diff has hunks with context and sometimes several of them.
fn text(file: usize, version: usize) -> Vec<u8> {
    let mut out = String::new();
    out.push_str(&format!("fn file_{file}() {{\n"));
    let lines = 12 + version % 40;
    for i in 0..lines {
        let word = WORDS[(i * 7 + file) % WORDS.len()];
        if i % 9 == version % 9 {
            out.push_str(&format!("    changed {word} {i} at version {version}\n"));
        } else {
            out.push_str(&format!("    {word} {i}\n"));
        }
    }
    out.push_str("}\n");
    if version.is_multiple_of(5) {
        out.push_str(&format!("tail without newline {version}"));
    }
    out.into_bytes()
}

/// The commit a submodule is recorded at after the `n`th commit: forty hex digits made from `n`.
fn gitlink(n: usize) -> String {
    format!("{:040x}", 0x5eed_0000_0000_u64 + n as u64 * 0x1_0001)
}

/// Commits after which the generated repository's submodule moved.
pub fn submodule_moves(commits: usize) -> impl Iterator<Item = usize> {
    (503..commits).step_by(503)
}

/// Writes a repository of `commits` commits into `dir` (which must exist and be empty).
pub fn generate(dir: &Path, commits: usize) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut s: Vec<u8> = Vec::new();
    let files = 40;
    let mut names: Vec<String> = (0..files)
        .map(|f| format!("src/dir{}/file{f}.rs", f % 6))
        .collect();
    let mut versions = vec![0usize; files];
    let base = 1_600_000_000i64;
    let mut mark = 0usize;
    let mut side_mark: Option<usize> = None;
    for n in 0..commits {
        mark += 1;
        let time = base + (n as i64) * 3600;
        let zone = ["+0000", "-0700", "+0530", "+0100"][n % 4];
        let on_side = n % 250 >= 240 && n % 250 < 245;
        let branch = if on_side {
            "refs/heads/side"
        } else {
            "refs/heads/main"
        };
        s.extend_from_slice(format!("commit {branch}\nmark :{mark}\n").as_bytes());
        let who = ["Ada Lovelace", "Grace Hopper", "Linus", "Ken"][n % 4];
        s.extend_from_slice(
            format!("author {who} <{}@example.com> {time} {zone}\n", n % 4).as_bytes(),
        );
        s.extend_from_slice(format!("committer {who} <c@example.com> {time} {zone}\n").as_bytes());
        let message = if n % 3 == 0 {
            format!("change {n}\n\nA longer body for commit {n},\nspanning lines.\n")
        } else {
            format!("change {n}: touch files\n")
        };
        data(&mut s, message.as_bytes());
        if n > 0 {
            if n % 250 == 240 {
                // The side branch starts from main's last commit.
                s.extend_from_slice(format!("from :{}\n", mark - 1).as_bytes());
            } else if n % 250 == 245 {
                s.extend_from_slice(
                    format!("from :{}\n", side_mark.map_or(mark - 1, |_| mark - 6)).as_bytes(),
                );
                if let Some(side) = side_mark {
                    s.extend_from_slice(format!("merge :{side}\n").as_bytes());
                }
            } else {
                s.extend_from_slice(format!("from :{}\n", mark - 1).as_bytes());
            }
        }
        if n == 0 {
            for (f, name) in names.iter().enumerate() {
                s.extend_from_slice(format!("M 100644 inline {name}\n").as_bytes());
                data(&mut s, &text(f, 0));
            }
            s.extend_from_slice(b"M 100644 inline \"caf\\303\\251 \\377.txt\"\n");
            data(&mut s, b"a name that is not UTF-8\nalpha\n");
            s.extend_from_slice(b"M 100644 inline blob.bin\n");
            data(&mut s, b"\x00\x01binary alpha\x02");
            // A submodule: a gitlink and the .gitmodules naming it (its commits are not here,
            // as a submodule's are not).
            s.extend_from_slice(format!("M 160000 {} vendor/sub\n", gitlink(0)).as_bytes());
            s.extend_from_slice(b"M 100644 inline .gitmodules\n");
            data(
                &mut s,
                b"[submodule \"vendor/sub\"]\n\tpath = vendor/sub\n\turl = ../sub.git\n",
            );
        } else {
            let f = (n * 7) % files;
            versions[f] += 1;
            s.extend_from_slice(format!("M 100644 inline {}\n", names[f]).as_bytes());
            data(&mut s, &text(f, versions[f] + n));
            if n % 97 == 0 {
                let g = (n * 3 + 1) % files;
                let new = format!("src/moved/m{n}_{g}.rs");
                s.extend_from_slice(format!("R {} {new}\n", names[g]).as_bytes());
                names[g] = new;
            }
            if n % 151 == 0 {
                s.extend_from_slice(b"M 100644 inline blob.bin\n");
                data(&mut s, format!("\x00binary {n}").as_bytes());
            }
            if n % 503 == 0 {
                s.extend_from_slice(format!("M 160000 {} vendor/sub\n", gitlink(n)).as_bytes());
            }
            if n % 211 == 0 {
                s.extend_from_slice(b"M 100755 inline tool.sh\n");
                data(&mut s, format!("#!/bin/sh\necho {n}\n").as_bytes());
            }
        }
        s.push(b'\n');
        if on_side && n % 250 == 244 {
            side_mark = Some(mark);
        }
        if n % 250 == 245 {
            side_mark = None;
        }
        if n % 1000 == 500 {
            s.extend_from_slice(
                format!("reset refs/tags/v{}.{}\nfrom :{mark}\n\n", n / 1000, n % 7).as_bytes(),
            );
        }
        if n % 1000 == 999 {
            s.extend_from_slice(
                format!(
                    "tag v{}.{}.0\nfrom :{mark}\ntagger Releaser <r@example.com> {time} +0200\n",
                    n / 1000 + 1,
                    n % 10
                )
                .as_bytes(),
            );
            data(
                &mut s,
                format!("Release {}\n\nNotes for it.\n", n / 1000 + 1).as_bytes(),
            );
        }
    }
    import(dir, &s);
    git(dir, &["reset", "-q", "--hard", "main"]);
}

/// Feeds one `git fast-import` stream to the repository in `dir`.
pub fn import(dir: &Path, stream: &[u8]) {
    let mut child = git_command(dir, &["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stream)
        .expect("the stream is written");
    assert!(child.wait().expect("fast-import ends").success());
}

/// A fresh repository in `dir` whose `main` holds two commits: `top.txt` alone, then beside it
/// `depth` directories each inside the last (`d/d/.../d/deep.txt`), written by one
/// `git fast-import` stream (a few seconds for 60,000). Nothing is checked out.
pub fn deep_tree(dir: &Path, depth: usize) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut s: Vec<u8> = Vec::new();
    s.extend_from_slice(b"commit refs/heads/main\nmark :1\n");
    s.extend_from_slice(b"committer Ada <ada@example.com> 1600000000 +0000\n");
    data(&mut s, b"start\n");
    s.extend_from_slice(b"M 100644 inline top.txt\n");
    data(&mut s, b"alpha\n");
    s.extend_from_slice(b"commit refs/heads/main\nmark :2\n");
    s.extend_from_slice(b"committer Ada <ada@example.com> 1600003600 +0000\n");
    data(&mut s, b"nest deeply\n");
    s.extend_from_slice(b"from :1\n");
    let path = vec!["d"; depth].join("/");
    s.extend_from_slice(format!("M 100644 inline {path}/deep.txt\n").as_bytes());
    data(&mut s, b"alpha at the bottom\n");
    import(dir, &s);
}

/// A fresh repository in `dir` whose `main` holds two commits: `top.txt` alone, then beside it a
/// "git bomb", `bomb/`: `levels` levels of trees each holding `width` directories that are all
/// the same tree, over one file. It is a few dozen small objects that name `width^levels` paths.
pub fn git_bomb(dir: &Path, width: usize, levels: usize) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut s: Vec<u8> = Vec::new();
    s.extend_from_slice(b"commit refs/heads/main\nmark :1\n");
    s.extend_from_slice(b"committer Ada <ada@example.com> 1600000000 +0000\n");
    data(&mut s, b"start\n");
    s.extend_from_slice(b"M 100644 inline top.txt\n");
    data(&mut s, b"alpha\n");
    import(dir, &s);
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("git prints hex");
    let blob = text(git_stdin(
        dir,
        &["hash-object", "-w", "--stdin"],
        b"alpha in the bomb\n",
    ));
    let mut tree = text(git_stdin(
        dir,
        &["mktree"],
        format!("100644 blob {}\tf.txt\n", blob.trim()).as_bytes(),
    ));
    for _ in 0..levels {
        let listing: String = (0..width)
            .map(|i| format!("040000 tree {}\tdir{i}\n", tree.trim()))
            .collect();
        tree = text(git_stdin(dir, &["mktree"], listing.as_bytes()));
    }
    let root = text(git_stdin(
        dir,
        &["mktree"],
        format!(
            "040000 tree {}\tbomb\n100644 blob {}\ttop.txt\n",
            tree.trim(),
            text(git(dir, &["rev-parse", "main:top.txt"])).trim()
        )
        .as_bytes(),
    ));
    let commit = text(git_stdin(
        dir,
        &[
            "-c",
            "user.name=Ada",
            "-c",
            "user.email=ada@example.com",
            "commit-tree",
            root.trim(),
            "-p",
            "main",
            "-F",
            "-",
        ],
        b"plant a bomb\n",
    ));
    git(dir, &["update-ref", "refs/heads/main", commit.trim()]);
}

/// Runs git in `dir` with `input` on its standard input, and returns what it printed.
pub fn git_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = git_command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("the input is written");
    let out = child.wait_with_output().expect("git ends");
    assert!(out.status.success(), "git {args:?} failed");
    out.stdout
}
