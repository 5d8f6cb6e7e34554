//! read_git's answers compared with git's own on a generated repository (merges, lightweight and
//! annotated tags, exact renames, binary files, a submodule, a path that is not UTF-8 and ten
//! thousand commits), on a clone of this project's own history, and for `status` on small
//! repositories put in each state it reports.
//! Every difference is a failure, except those `specs/read_git.md` documents, which are tested
//! here as what they are.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::OnceLock;

use bravebot_core::git::{self, diff, grep, log, status, tags};
use bravebot_tests::git_fixture::{generate, git, submodule_moves};

/// Commits in the generated repository. fast-import writes them in a second or two.
const COMMITS: usize = 10_000;

fn repo() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        generate(dir.path(), COMMITS);
        dir
    })
    .path()
}

/// The first file git lists under `dir` at `rev`.
fn first_file(repo: &Path, rev: &str, dir: &str) -> String {
    let listing = text(git(repo, &["ls-tree", "-r", "--name-only", rev, dir]));
    listing.lines().next().unwrap().to_string()
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}

fn lines_of(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn sections(sections: &[diff::Section]) -> String {
    sections.iter().map(|s| lines_of(&s.lines)).collect()
}

fn log_query(
    revision: Option<&str>,
    path: Option<&str>,
    count: usize,
    skip: usize,
) -> log::LogQuery {
    log::LogQuery {
        revision: revision.map(str::to_string),
        path: path.map(|p| p.as_bytes().to_vec()),
        count,
        skip,
        ..log::LogQuery::default()
    }
}

fn git_log(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "log",
        "--format=%h %ad %an %s",
        "--date=short",
        "--abbrev=10",
    ];
    args.extend_from_slice(extra);
    text(git(dir, &args))
}

// Verifies: GIT-1, GIT-6
#[test]
fn log_lists_what_git_log_lists() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    type Case<'a> = (Option<&'a str>, Option<&'a str>, usize, usize, Vec<&'a str>);
    let cases: &[Case<'_>] = &[
        (None, None, 20, 0, vec!["-n", "20"]),
        (None, None, 200, 37, vec!["-n", "200", "--skip", "37"]),
        (Some("HEAD~3"), None, 20, 0, vec!["-n", "20", "HEAD~3"]),
        (
            Some("HEAD~600..HEAD~400"),
            None,
            200,
            0,
            vec!["-n", "200", "HEAD~600..HEAD~400"],
        ),
        (Some("v1.9.0"), None, 30, 0, vec!["-n", "30", "v1.9.0"]),
        // Ranges whose left side is not an ancestor of the right, across merges.
        (
            Some("HEAD..side"),
            None,
            50,
            0,
            vec!["-n", "50", "HEAD..side"],
        ),
        (
            Some("side..HEAD~1"),
            None,
            50,
            0,
            vec!["-n", "50", "side..HEAD~1"],
        ),
        (
            Some("HEAD~4^2..HEAD~300"),
            None,
            200,
            0,
            vec!["-n", "200", "HEAD~4^2..HEAD~300"],
        ),
        (
            Some("v2.9.0..v1.9.0"),
            None,
            20,
            0,
            vec!["-n", "20", "v2.9.0..v1.9.0"],
        ),
        (Some("side"), None, 30, 0, vec!["-n", "30", "side"]),
        (Some("HEAD~4^2"), None, 10, 0, vec!["-n", "10", "HEAD~4^2"]),
        (
            None,
            Some("src/dir3"),
            50,
            0,
            vec!["-n", "50", "--", "src/dir3"],
        ),
        (
            None,
            Some("src/dir1/file7.rs"),
            40,
            0,
            vec!["-n", "40", "--", "src/dir1/file7.rs"],
        ),
        (
            None,
            Some("blob.bin"),
            40,
            0,
            vec!["-n", "40", "--", "blob.bin"],
        ),
    ];
    for (revision, path, count, skip, args) in cases {
        // HEAD~4 is a merge, so HEAD~4^2 is the side branch it brought in.
        let page = log::log(&r, &log_query(*revision, *path, *count, *skip)).unwrap();
        assert_eq!(
            lines_of(&page.lines),
            git_log(dir, args),
            "log {revision:?} {path:?}"
        );
    }
}

// Verifies: GIT-1, GIT-11
#[test]
fn show_prints_what_git_show_prints() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    let mut checked = 0;
    for n in (1..COMMITS)
        .step_by(151)
        .chain([97 * 3, 97 * 4, 151 * 2, 211 * 4, 245, 495, 0])
        .chain(submodule_moves(COMMITS).take(4))
    {
        let rev = format!("HEAD~{}", COMMITS - 1 - n);
        let Ok(shown) = diff::show(&r, &rev, b"", &mut git::Budget::default()) else {
            continue;
        };
        let ours = sections(&shown.sections);
        if shown.merge.is_some() {
            // A merge is shown without a diff (a documented difference): its header is git's.
            let theirs = text(git(dir, &["show", "--no-patch", &rev]));
            assert_eq!(ours, theirs, "show {rev} (a merge)");
        } else {
            let theirs = text(git(dir, &["show", &rev]));
            assert_eq!(ours, theirs, "show {rev}");
        }
        checked += 1;
    }
    assert!(checked > 60);
    let file = first_file(dir, "HEAD~10", "src");
    let at = format!("HEAD~10:{file}");
    for rev in ["v1.9.0", "v2.9.0", "v0.3", "HEAD:src", at.as_str(), "HEAD:"] {
        let ours = sections(
            &diff::show(&r, rev, b"", &mut git::Budget::default())
                .unwrap()
                .sections,
        );
        assert_eq!(ours, text(git(dir, &["show", rev])), "show {rev}");
    }
}

// Verifies: GIT-1
#[test]
fn diff_prints_what_git_diff_prints() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    for (a, b, path) in [
        ("HEAD~1", "HEAD", ""),
        ("HEAD~30", "HEAD", ""),
        ("HEAD~400", "HEAD~100", "src/dir2"),
        ("v1.9.0", "v2.9.0", "src/moved"),
        ("HEAD~2000", "HEAD", "blob.bin"),
        ("HEAD~3000", "HEAD", "vendor"),
    ] {
        let ours = sections(
            &diff::diff(
                &r,
                &format!("{a}..{b}"),
                path.as_bytes(),
                &mut git::Budget::default(),
            )
            .unwrap(),
        );
        let mut args = vec!["diff", a, b];
        if !path.is_empty() {
            args.extend(["--", path]);
        }
        assert_eq!(ours, text(git(dir, &args)), "diff {a}..{b} {path}");
        if path == "vendor" {
            assert!(ours.contains("+Subproject commit "), "{ours}");
        }
        let pair = sections(
            &diff::diff(
                &r,
                &format!("{a} {b}"),
                path.as_bytes(),
                &mut git::Budget::default(),
            )
            .unwrap(),
        );
        assert_eq!(pair, ours, "A B reads as A..B");
    }
}

// Verifies: GIT-7
#[test]
fn tags_list_what_git_tag_lists() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    let ours = tags::tags(&r, None, 200, 0, &mut git::Budget::default()).unwrap();
    assert_eq!(
        lines_of(&ours.names),
        text(git(dir, &["tag", "--sort=-v:refname"]))
    );
    assert_eq!(ours.cut, None);
    for rev in ["HEAD~5000", "v3.9.0", "side"] {
        let merged = tags::tags(&r, Some(rev), 200, 0, &mut git::Budget::default()).unwrap();
        let theirs = text(git(dir, &["tag", "--sort=-v:refname", "--merged", rev]));
        assert_eq!(lines_of(&merged.names), theirs, "tags --merged {rev}");
    }
    let page = tags::tags(&r, None, 3, 2, &mut git::Budget::default()).unwrap();
    assert_eq!(page.names, ours.names[2..5].to_vec());
    assert_eq!(page.next_skip, Some(5));
}

// Verifies: GIT-8
#[test]
fn search_prints_what_git_grep_prints() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    for (rev, pattern, path) in [
        ("HEAD", "changed (alpha|echo) [0-9]+ at", ""),
        ("HEAD~500", "^fn file_", "src"),
        ("v1.9.0", "alpha", ""),
        ("HEAD", "tail without", "src/moved"),
    ] {
        let regex = grep::Regex::new(pattern).unwrap();
        let found = grep::grep(
            &r,
            &grep::GrepQuery {
                revision: rev,
                pattern: &regex,
                path: path.as_bytes(),
                count: 100_000,
                skip: 0,
            },
            &mut git::Budget::default(),
        )
        .unwrap();
        let ours: String = found.files.iter().map(|f| lines_of(&f.lines)).collect();
        let mut args = vec!["grep", "-n", "-E", pattern, rev];
        if !path.is_empty() {
            args.extend(["--", path]);
        }
        assert_eq!(ours, text(git(dir, &args)), "grep {pattern} {rev} {path}");
    }
}

// Verifies: GIT-11
#[test]
fn a_file_moved_and_edited_is_a_deletion_and_an_addition_as_git_prints_without_renames() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    let body: String = (0..30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(d.join("old.txt"), &body).unwrap();
    let commit = |m: &str| {
        git(d, &["add", "-A"]);
        git(
            d,
            &[
                "-c",
                "user.name=A",
                "-c",
                "user.email=a@example.com",
                "commit",
                "-q",
                "-m",
                m,
            ],
        );
    };
    commit("one");
    std::fs::remove_file(d.join("old.txt")).unwrap();
    std::fs::write(d.join("new.txt"), format!("{body}one more\n")).unwrap();
    commit("two");
    let r = git::open(d).unwrap();
    let ours = sections(
        &diff::show(&r, "HEAD", b"", &mut git::Budget::default())
            .unwrap()
            .sections,
    );
    assert_eq!(ours, text(git(d, &["show", "--no-renames", "HEAD"])));
    assert_ne!(
        ours,
        text(git(d, &["show", "HEAD"])),
        "git pairs them as a rename"
    );
}

fn commit(d: &Path, message: &str) {
    git(
        d,
        &[
            "-c",
            "user.name=A",
            "-c",
            "user.email=a@example.com",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

fn write(d: &Path, rel: &str, bytes: &[u8]) {
    let path = d.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Git's `status --short --no-renames` lines, less those of the paths read_git leaves out.
fn git_status(d: &Path, left_out: &[Vec<u8>]) -> String {
    let theirs = text(git(d, &["status", "--short", "--no-renames"]));
    theirs
        .lines()
        .filter(|l| {
            let path = &l.as_bytes()[3..];
            !left_out.iter().any(|p| p.as_slice() == path)
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

// Verifies: GIT-11, GIT-12
#[test]
fn status_prints_what_git_status_prints() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    for name in ["a.txt", "b.txt", "c.txt", "d.txt", "dir/e.txt", "same.txt"] {
        write(d, name, format!("{name}\none\ntwo\n").as_bytes());
    }
    write(d, "crlf.txt", b"one\ntwo\n");
    write(d, "plain-text.txt", b"one\ntwo\n");
    write(d, "filtered.dat", b"raw\n");
    write(d, "exec.sh", b"#!/bin/sh\n");
    write(d, ".gitignore", b"*.log\nbuild/\n");
    write(
        d,
        ".gitattributes",
        b"crlf.txt text\nplain-text.txt text\nfiltered.dat filter=lfs\n",
    );
    std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
    git(d, &["add", "-A"]);
    // A submodule: a gitlink in the index, its directory empty as an uninitialised one is.
    let sub = "1234567890123456789012345678901234567890";
    git(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sub},sub"),
        ],
    );
    std::fs::create_dir(d.join("sub")).unwrap();
    commit(d, "one");

    // Staged, unstaged, both, deleted either way, added, a mode and a type change.
    write(d, "a.txt", b"a staged change\n");
    git(d, &["add", "a.txt"]);
    write(d, "b.txt", b"an unstaged change\n");
    write(d, "c.txt", b"staged\n");
    git(d, &["add", "c.txt"]);
    write(d, "c.txt", b"and changed again\n");
    std::fs::remove_file(d.join("d.txt")).unwrap();
    git(d, &["rm", "-q", "dir/e.txt"]);
    write(d, "new.txt", b"new\n");
    git(d, &["add", "new.txt"]);
    let exec = d.join("exec.sh");
    let mut perms = std::fs::metadata(&exec).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&exec, perms).unwrap();
    std::fs::remove_file(d.join("link")).unwrap();
    write(d, "link", b"a file now\n");
    // The same bytes written again: its times change, its content does not.
    write(d, "same.txt", b"same.txt\none\ntwo\n");
    // Files a conversion would change: a text file with a carriage return, a filtered one.
    write(d, "crlf.txt", b"one\r\ntwo\r\n");
    write(d, "filtered.dat", b"changed\n");
    // A text file without a carriage return converts to itself and is compared.
    write(d, "plain-text.txt", b"one\ntwo\nthree\n");
    // Untracked, an untracked directory, a name that is not UTF-8, ignored ones.
    write(d, "u.txt", b"u\n");
    write(d, "ud/x.txt", b"x\n");
    write(d, "ud/deeper/y.txt", b"y\n");
    std::fs::write(
        d.join(std::ffi::OsStr::from_bytes(b"caf\xc3\xa9 \xff.txt")),
        b"n\n",
    )
    .unwrap();
    write(d, "x.log", b"ignored\n");
    write(d, "build/out.o", b"ignored\n");
    write(d, "dir/inner.log", b"ignored\n");

    let r = git::open(d).unwrap();
    let ours = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    let mut left_out: Vec<(Vec<u8>, status::NotCompared)> = ours.not_compared.clone();
    left_out.sort();
    assert_eq!(
        left_out,
        vec![
            (b"crlf.txt".to_vec(), status::NotCompared::Converted),
            (b"filtered.dat".to_vec(), status::NotCompared::Converted),
            (b"sub".to_vec(), status::NotCompared::Submodule),
        ]
    );
    let paths: Vec<Vec<u8>> = left_out.iter().map(|(p, _)| p.clone()).collect();
    let theirs = git_status(d, &paths);
    assert_eq!(lines_of(&ours.lines), theirs);
    for expected in [
        "M  a.txt",
        " M b.txt",
        "MM c.txt",
        " D d.txt",
        "D  dir/e.txt",
        "A  new.txt",
        " M exec.sh",
        " T link",
        " M plain-text.txt",
        "?? u.txt",
        "?? ud/",
        "?? \"caf\\303\\251 \\377.txt\"",
    ] {
        assert!(
            ours.lines.iter().any(|l| l == expected),
            "{expected}: {ours:?}"
        );
    }
    assert!(
        !ours
            .lines
            .iter()
            .any(|l| l.contains(".log") || l.contains("build"))
    );

    // Under a path, as git's pathspec limits it: inside an untracked directory too.
    let under = status::status(&r, b"dir", &mut git::Budget::default()).unwrap();
    assert_eq!(under.lines, vec!["D  dir/e.txt".to_string()]);
    for path in [
        "dir",
        "ud",
        "ud/deeper",
        "ud/x.txt",
        "a.txt",
        "nothing-here",
    ] {
        let ours = status::status(&r, path.as_bytes(), &mut git::Budget::default()).unwrap();
        let theirs = text(git(d, &["status", "--short", "--no-renames", "--", path]));
        assert_eq!(lines_of(&ours.lines), theirs, "status -- {path}");
    }

    // core.autocrlf: a file holding a carriage return is not compared, another one is.
    write(d, "b.txt", b"an unstaged change\r\n");
    git(d, &["config", "core.autocrlf", "true"]);
    let r = git::open(d).unwrap();
    let crlf = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    assert!(
        crlf.not_compared
            .iter()
            .any(|(p, w)| p == b"b.txt" && *w == status::NotCompared::Converted),
        "{crlf:?}"
    );
    assert!(crlf.lines.iter().any(|l| l == " M plain-text.txt"));
    let paths: Vec<Vec<u8>> = crlf.not_compared.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(lines_of(&crlf.lines), git_status(d, &paths));
}

// Verifies: GIT-12
#[test]
fn the_generated_repository_is_clean_but_for_its_submodule() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    let ours = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    assert_eq!(
        ours.not_compared,
        vec![(b"vendor/sub".to_vec(), status::NotCompared::Submodule)]
    );
    assert_eq!(lines_of(&ours.lines), git_status(dir, &[]));
    assert!(ours.lines.is_empty());
}

// Verifies: GIT-12
#[test]
fn a_clean_tree_has_no_status_and_an_index_written_this_second_is_hashed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "a.txt", b"one\n");
    // No commit and no index yet: everything is untracked.
    let r = git::open(d).unwrap();
    let fresh = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    assert_eq!(lines_of(&fresh.lines), git_status(d, &[]));
    assert_eq!(fresh.lines, vec!["?? a.txt".to_string()]);
    git(d, &["add", "-A"]);
    // Staged on an unborn branch: added.
    let staged = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    assert_eq!(lines_of(&staged.lines), git_status(d, &[]));
    commit(d, "one");
    let r = git::open(d).unwrap();
    assert!(
        status::status(&r, b"", &mut git::Budget::default())
            .unwrap()
            .lines
            .is_empty()
    );
    // Same size, same second as the index was written: only hashing tells it changed.
    write(d, "a.txt", b"two\n");
    let ours = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    assert_eq!(lines_of(&ours.lines), git_status(d, &[]));
    assert_eq!(ours.lines, vec![" M a.txt".to_string()]);
}

// Verifies: GIT-12
#[test]
fn a_conflicted_merge_lists_its_unmerged_paths_as_git_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "both.txt", b"base\n");
    write(d, "gone.txt", b"base\n");
    git(d, &["add", "-A"]);
    commit(d, "base");
    git(d, &["checkout", "-q", "-b", "other"]);
    write(d, "both.txt", b"other\n");
    write(d, "added.txt", b"other\n");
    git(d, &["rm", "-q", "gone.txt"]);
    git(d, &["add", "-A"]);
    commit(d, "other");
    git(d, &["checkout", "-q", "main"]);
    write(d, "both.txt", b"main\n");
    write(d, "added.txt", b"main\n");
    write(d, "gone.txt", b"changed on main\n");
    git(d, &["add", "-A"]);
    commit(d, "main");
    let merged = bravebot_tests::git_fixture::git_command(
        d,
        &[
            "-c",
            "user.name=A",
            "-c",
            "user.email=a@example.com",
            "merge",
            "-q",
            "other",
        ],
    )
    .output()
    .unwrap();
    assert!(
        text(merged.stdout).contains("CONFLICT"),
        "the merge conflicts: {}",
        text(merged.stderr)
    );
    let r = git::open(d).unwrap();
    let ours = status::status(&r, b"", &mut git::Budget::default()).unwrap();
    assert_eq!(lines_of(&ours.lines), git_status(d, &[]));
    for expected in ["UU both.txt", "AA added.txt", "UD gone.txt"] {
        assert!(
            ours.lines.iter().any(|l| l == expected),
            "{expected}: {ours:?}"
        );
    }
}

// Verifies: GIT-13
#[test]
fn a_split_or_sparse_index_and_outside_ignore_files_are_declined_for_status() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "a.txt", b"one\n");
    write(d, "b/c.txt", b"one\n");
    git(d, &["add", "-A"]);
    commit(d, "one");
    git(d, &["config", "core.excludesFile", "/etc/gitignore"]);
    let r = git::open(d).unwrap();
    assert!(matches!(
        status::status(&r, b"", &mut git::Budget::default()),
        Err(status::StatusError::Declined(
            status::Declined::OutsideFile(_)
        ))
    ));
    git(d, &["config", "--unset", "core.excludesFile"]);
    git(d, &["config", "core.attributesFile", "../attributes"]);
    let r = git::open(d).unwrap();
    assert!(matches!(
        status::status(&r, b"", &mut git::Budget::default()),
        Err(status::StatusError::Declined(
            status::Declined::OutsideFile(_)
        ))
    ));
    git(d, &["config", "--unset", "core.attributesFile"]);
    std::os::unix::fs::symlink("/etc/hostname", d.join(".git/info/attributes")).unwrap();
    let r = git::open(d).unwrap();
    assert!(matches!(
        status::status(&r, b"", &mut git::Budget::default()),
        Err(status::StatusError::Declined(
            status::Declined::LinkedInfoFile(_)
        ))
    ));
    std::fs::remove_file(d.join(".git/info/attributes")).unwrap();
    git(d, &["update-index", "--split-index"]);
    let r = git::open(d).unwrap();
    assert_eq!(
        status::status(&r, b"", &mut git::Budget::default()).err(),
        Some(status::StatusError::Declined(status::Declined::SplitIndex))
    );
    git(d, &["update-index", "--no-split-index"]);
    // A sparse checkout marks the files it leaves out skip-worktree.
    git(d, &["update-index", "--skip-worktree", "b/c.txt"]);
    let r = git::open(d).unwrap();
    assert_eq!(
        status::status(&r, b"", &mut git::Budget::default()).err(),
        Some(status::StatusError::Declined(status::Declined::Sparse))
    );
}

/// A clone of this project's own repository, made once per test binary (a worktree's `.git` is
/// a file, which read_git declines, so the history is read from a clone of it).
fn own_history() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let top = text(git(manifest, &["rev-parse", "--show-toplevel"]));
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_str().unwrap().to_string();
        git(manifest, &["clone", "-q", top.trim(), &target]);
        dir
    })
    .path()
}

/// `git log` with each commit's whole message as read_git prints it: the line, then the body
/// indented by four spaces with blank lines left blank and trailing white space dropped.
fn git_log_messages(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "log",
        "-z",
        "--format=%h %ad %an %s%n%w(0,4,4)%b",
        "--date=short",
        "--abbrev=10",
    ];
    args.extend_from_slice(extra);
    let raw = text(git(dir, &args));
    let mut out = String::new();
    for block in raw.split('\0').filter(|b| !b.is_empty()) {
        let mut lines: Vec<&str> = block.lines().map(str::trim_end).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

fn messages_query(revision: Option<&str>, count: usize, skip: usize) -> log::LogQuery {
    log::LogQuery {
        messages: true,
        ..log_query(revision, None, count, skip)
    }
}

// Verifies: GIT-1, GIT-10, GIT-11
#[test]
fn log_with_messages_days_and_pages_lists_what_git_log_lists() {
    for (dir, under, size) in [(repo(), "src", 25), (own_history(), "core", 10)] {
        let r = git::open(dir).unwrap();
        // Whole messages.
        let page = log::log(&r, &messages_query(None, 60, 0)).unwrap();
        assert_eq!(
            lines_of(&page.lines),
            git_log_messages(dir, &["-n", "60"]),
            "log with messages in {dir:?}"
        );
        let page = log::log(&r, &messages_query(Some("HEAD~40"), 30, 7)).unwrap();
        assert_eq!(
            lines_of(&page.lines),
            git_log_messages(dir, &["-n", "30", "--skip", "7", "HEAD~40"])
        );
        // Pages: each names the skip of the next, and together they are git's list.
        let mut listed = Vec::new();
        let mut skip = 0;
        for _ in 0..4 {
            let page = log::log(&r, &log_query(None, Some(under), size, skip)).unwrap();
            assert_eq!(page.cut, Some(log::Cut::Count));
            assert_eq!(page.next_skip, Some(skip + size));
            listed.extend(page.lines);
            skip = page.next_skip.unwrap();
        }
        let four = (4 * size).to_string();
        assert_eq!(
            lines_of(&listed),
            git_log(dir, &["-n", &four, "--", under]),
            "four pages in {dir:?}"
        );
    }
    // The last page of a history is not cut.
    let dir = own_history();
    let r = git::open(dir).unwrap();
    let total = text(git(dir, &["rev-list", "--count", "HEAD"]));
    let total: usize = total.trim().parse().unwrap();
    let last = log::log(&r, &log_query(None, None, 200, total - 3)).unwrap();
    assert_eq!((last.commits, last.cut, last.next_skip), (3, None, None));

    // Whole UTC days, both ends included. In the generated history a commit is authored and
    // committed at the same time, so git's committer-time bounds select the same commits.
    let dir = repo();
    let r = git::open(dir).unwrap();
    for (since, until, count, skip) in [
        ("2020-09-20", "2020-09-25", 200, 0),
        ("2020-10-01", "2020-10-01", 30, 0),
        ("2020-09-14", "2020-12-31", 50, 10),
    ] {
        let query = log::LogQuery {
            since: day(since, false),
            until: day(until, true),
            ..log_query(None, None, count, skip)
        };
        let page = log::log(&r, &query).unwrap();
        let since_arg = format!("--since={since} 00:00:00 +0000");
        let until_arg = format!("--until={until} 23:59:59 +0000");
        let count_arg = count.to_string();
        let skip_arg = skip.to_string();
        let theirs = git_log(
            dir,
            &[
                "-n", &count_arg, "--skip", &skip_arg, &since_arg, &until_arg,
            ],
        );
        assert!(!theirs.is_empty());
        assert_eq!(lines_of(&page.lines), theirs, "{since}..{until}");
    }
}

/// The first and last second of a day written YYYY-MM-DD, read by git itself.
fn day(text_day: &str, end: bool) -> Option<i64> {
    let time = if end { "23:59:59" } else { "00:00:00" };
    let out = std::process::Command::new("date")
        .env("TZ", "UTC")
        .args(["-d", &format!("{text_day} {time} UTC"), "+%s"])
        .output()
        .unwrap();
    Some(text(out.stdout).trim().parse().unwrap())
}

// Verifies: GIT-1, GIT-8, GIT-11
#[test]
fn the_projects_own_history_reads_as_git_reads_it() {
    let dir = own_history();
    let r = git::open(dir).unwrap();
    for (revision, path, count) in [
        (None, None, 200),
        (None, Some("core/src/git"), 50),
        (Some("HEAD~5"), Some("specs/read_git.md"), 20),
    ] {
        let page = log::log(&r, &log_query(revision, path, count, 0)).unwrap();
        let count_arg = count.to_string();
        let mut args = vec!["-n", count_arg.as_str()];
        args.extend(revision);
        if let Some(p) = path {
            args.extend(["--", p]);
        }
        assert_eq!(lines_of(&page.lines), git_log(dir, &args), "log {args:?}");
    }
    let ids = text(git(dir, &["rev-list", "-n", "60", "HEAD"]));
    let mut differing = Vec::new();
    for id in ids.lines() {
        let shown = diff::show(&r, id, b"", &mut git::Budget::default()).unwrap();
        let ours = sections(&shown.sections);
        let theirs = if shown.merge.is_some() {
            text(git(dir, &["show", "--no-patch", id]))
        } else {
            text(git(dir, &["show", "-M100%", "--no-indent-heuristic", id]))
        };
        if ours != theirs {
            // The documented difference: a hunk's lines placed differently. Everything else is
            // git's, the counts are git's, and the patch turns the parent into the commit.
            let (ours_outline, theirs_outline) = (outline(&ours), outline(&theirs));
            let headers =
                |o: &[(String, usize)]| o.iter().map(|(h, _)| h.clone()).collect::<Vec<_>>();
            assert_eq!(
                headers(&ours_outline),
                headers(&theirs_outline),
                "show {id}"
            );
            for ((file, mine), (_, git_s)) in ours_outline.iter().zip(&theirs_outline) {
                assert!(
                    mine <= git_s,
                    "{id} {file}: {mine} changed lines where git has {git_s}"
                );
            }
            assert_applies(dir, id, &ours);
            differing.push(id.to_string());
        }
    }
    assert!(
        differing.len() < 30,
        "most commits print as git prints them"
    );
}

/// Each line of a diff outside its hunks, with the number of lines the hunks that follow it
/// remove or add: what stays when a hunk's lines are placed differently.
fn outline(diff: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            in_hunk = false;
        }
        if line.starts_with("@@ ") {
            in_hunk = true;
        } else if in_hunk && (line.starts_with('-') || line.starts_with('+')) {
            if let Some(last) = out.last_mut() {
                last.1 += 1;
            }
        } else if !in_hunk {
            out.push((line.to_string(), 0));
        }
    }
    out
}

/// Applies `shown` (a `show` of commit `id`) to its parent's tree in a scratch index, and checks
/// that what it makes is the commit's tree.
fn assert_applies(dir: &Path, id: &str, shown: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    let patch = scratch.path().join("patch");
    let start = shown.find("\ndiff --git ").map_or(0, |at| at + 1);
    std::fs::write(&patch, &shown[start..]).unwrap();
    let run = |args: &[&str]| {
        let out = bravebot_tests::git_fixture::git_command(dir, args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} for {id}: {}",
            text(out.stderr)
        );
        text(out.stdout)
    };
    run(&["read-tree", &format!("{id}^")]);
    run(&["apply", "--cached", patch.to_str().unwrap()]);
    let made = run(&["write-tree"]);
    let tree = text(git(dir, &["rev-parse", &format!("{id}^{{tree}}")]));
    let apart = text(git(dir, &["diff", made.trim(), tree.trim()]));
    assert_eq!(
        made, tree,
        "the patch shown for {id} makes its tree: {apart}"
    );
}
