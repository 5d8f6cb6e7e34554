//! read_git's answers compared with git's own on a generated repository: merges, lightweight and
//! annotated tags, exact renames, binary files, a path that is not UTF-8 and thousands of commits.
//! Every difference is a failure, except those `specs/read_git.md` documents, which are tested
//! here as what they are.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::OnceLock;

use bravebot_core::git::{self, diff, grep, log, tags};
use bravebot_tests::git_fixture::{generate, git};

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
    {
        let rev = format!("HEAD~{}", COMMITS - 1 - n);
        let Ok(shown) = diff::show(&r, &rev, b"") else {
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
        let ours = sections(&diff::show(&r, rev, b"").unwrap().sections);
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
    ] {
        let ours = sections(&diff::diff(&r, &format!("{a}..{b}"), path.as_bytes()).unwrap());
        let mut args = vec!["diff", a, b];
        if !path.is_empty() {
            args.extend(["--", path]);
        }
        assert_eq!(ours, text(git(dir, &args)), "diff {a}..{b} {path}");
        let pair = sections(&diff::diff(&r, &format!("{a} {b}"), path.as_bytes()).unwrap());
        assert_eq!(pair, ours, "A B reads as A..B");
    }
}

// Verifies: GIT-7
#[test]
fn tags_list_what_git_tag_lists() {
    let dir = repo();
    let r = git::open(dir).unwrap();
    let ours = tags::tags(&r, None, 200, 0).unwrap();
    assert_eq!(
        lines_of(&ours.names),
        text(git(dir, &["tag", "--sort=-v:refname"]))
    );
    assert_eq!(ours.cut, None);
    for rev in ["HEAD~5000", "v3.9.0", "side"] {
        let merged = tags::tags(&r, Some(rev), 200, 0).unwrap();
        let theirs = text(git(dir, &["tag", "--sort=-v:refname", "--merged", rev]));
        assert_eq!(lines_of(&merged.names), theirs, "tags --merged {rev}");
    }
    let page = tags::tags(&r, None, 3, 2).unwrap();
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
                deadline: git::Deadline::default(),
            },
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
    let ours = sections(&diff::show(&r, "HEAD", b"").unwrap().sections);
    assert_eq!(ours, text(git(d, &["show", "--no-renames", "HEAD"])));
    assert_ne!(
        ours,
        text(git(d, &["show", "HEAD"])),
        "git pairs them as a rename"
    );
}
