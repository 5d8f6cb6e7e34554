//! The tidy check that every question is built by the one question builder (REL-7).
//!
//! It walks the sources of `core/src` and `server/src`, leaving out test code (an item after
//! `#[cfg(test)]`, and the files `tests.rs` and `test_server.rs`) and comments, and fails on any of
//! these outside the builder's file, `core/src/screen.rs`:
//! - a `Question { .. }` or `QuestionOption { .. }` literal;
//! - a variant path `OptionKind::AllowOnce` (or `AllowAlways`, `RejectOnce`, `RejectAlways`) used as
//!   a value. A variant path followed by `=>` or `|` (after any closing parentheses) is a match
//!   pattern, which only reads a kind: the ACP front's translation of kinds to its own is one.

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("a source folder")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's lines with comments and test items blanked, numbered from 1.
fn production_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line == "#[cfg(test)]" {
            // Skip the item: one line ending in `;`, or a block up to its closing brace.
            i += 1;
            let mut depth = 0i64;
            let mut opened = false;
            while i < lines.len() {
                let l = code_of(lines[i]);
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
                opened |= l.contains('{');
                i += 1;
                if (!opened && l.trim_end().ends_with(';')) || (opened && depth <= 0) {
                    break;
                }
            }
            continue;
        }
        out.push((i + 1, code_of(lines[i])));
        i += 1;
    }
    out
}

/// A line without its `//` comment.
fn code_of(line: &str) -> String {
    match line.find("//") {
        Some(at) => line[..at].to_string(),
        None => line.to_string(),
    }
}

/// Whether `word` occurs in `line` at `at` as a whole identifier.
fn whole_word(line: &str, at: usize, word: &str) -> bool {
    let before = line[..at].chars().next_back();
    let after = line[at + word.len()..].chars().next();
    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The offences on one line of production code.
fn offences(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in ["Question", "QuestionOption"] {
        for (at, _) in line.match_indices(word) {
            if !whole_word(line, at, word) {
                continue;
            }
            let rest = line[at + word.len()..].trim_start();
            // What comes before the type's path, so `-> crate::screen::Question {` declares.
            let before = line[..at]
                .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                .trim_end();
            let declares = ["->", "struct", "impl", "for", "enum"]
                .iter()
                .any(|k| before.ends_with(k));
            if rest.starts_with('{') && !declares {
                found.push(format!("a `{word} {{ .. }}` literal"));
            }
        }
    }
    for kind in ["AllowOnce", "AllowAlways", "RejectOnce", "RejectAlways"] {
        let path = format!("OptionKind::{kind}");
        for (at, _) in line.match_indices(&path) {
            let named = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            if !named || !whole_word(line, at + "OptionKind::".len(), kind) {
                continue;
            }
            let rest = line[at + path.len()..].trim_start_matches([')', ' ']);
            if !(rest.starts_with("=>") || rest.starts_with('|')) {
                found.push(format!("`{path}` used as a value"));
            }
        }
    }
    found
}

fn offences_in_sources() -> Vec<String> {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("core/src"), &mut files);
    rust_files(&root.join("server/src"), &mut files);
    assert!(files.len() > 50, "the sources were found");
    let builder = root.join("core/src/screen.rs");
    let mut found = Vec::new();
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if file == builder || name == "tests.rs" || name == "test_server.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (n, line) in production_lines(&text) {
            for offence in offences(&line) {
                let shown = file.strip_prefix(&root).unwrap_or(&file).display();
                found.push(format!("{shown}:{n}: {offence}"));
            }
        }
    }
    found
}

// Verifies: REL-7
#[test]
fn every_question_and_option_is_built_by_the_one_builder() {
    let found = offences_in_sources();
    assert!(
        found.is_empty(),
        "build questions with `Question::approve(..)` and its option methods (core/src/screen.rs):\n{}",
        found.join("\n")
    );
}

// Verifies: REL-7
#[test]
fn the_check_tells_a_built_option_from_a_kind_read_by_a_match() {
    for bad in [
        "let q = Question {",
        "    options: vec![QuestionOption {",
        "        kind: OptionKind::AllowOnce,",
        "    option(\"x\", \"y\", OptionKind::RejectAlways),",
        "    chosen == Some(OptionKind::AllowAlways)",
    ] {
        assert!(!offences(bad).is_empty(), "{bad}");
    }
    for fine in [
        "pub struct Question {",
        "impl Question {",
        "fn question() -> Question {",
        "fn option() -> crate::screen::QuestionOption {",
        "pub struct DocumentQuestion {",
        "    OptionKind::AllowOnce => acp::PermissionOptionKind::AllowOnce,",
        "    Some(OptionKind::RejectAlways) => \"refused\",",
        "    OptionKind::AllowOnce | OptionKind::AllowAlways => true,",
        "let q = Question::approve(kind, title)",
    ] {
        assert!(offences(fine).is_empty(), "{fine}");
    }
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn q() -> Q { Question {\n    }}\n}\nlet q = Question {\n";
    let lines: Vec<usize> = production_lines(text)
        .into_iter()
        .filter(|(_, l)| !offences(l).is_empty())
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        lines,
        [7],
        "test modules are left out, what follows them is read"
    );
}
