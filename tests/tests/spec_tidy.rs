//! The tidy check that ties `specs/` to the tests: every clause names the tests that verify it.
//!
//! A clause is a Markdown heading whose first word is an id such as `PROTO-3`
//! (`^#+ ([A-Z][A-Z0-9]*-[0-9]+)`). Its body, up to the next heading of the same or a higher level
//! (or the next clause), must hold either a line `Verified by: name1, name2` where every name is a
//! Rust function defined in a `.rs` file under `core/`, `server/` or `tests/`, or a line
//! `Not tested: <reason>`. Ids are unique across all spec files, and `specs/` must hold at least
//! one clause. Each test lists every offence at once, so one run shows all there is to mend.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One clause as written in a spec file.
#[derive(Debug, Clone, PartialEq)]
struct Clause {
    id: String,
    /// `file:line` of the heading, for messages.
    place: String,
    /// The names after `Verified by:`, if the body has such a line.
    verified_by: Option<Vec<String>>,
    /// The reason after `Not tested:`, if the body has such a line.
    not_tested: Option<String>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The heading level and clause id of a line, if it is a clause heading.
fn clause_heading(line: &str) -> Option<(usize, String)> {
    let level = heading_level(line)?;
    let rest = &line[level + 1..];
    let mut chars = rest.char_indices();
    let (_, first) = chars.next()?;
    if !first.is_ascii_uppercase() {
        return None;
    }
    let prefix_end = rest
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit()))
        .unwrap_or(rest.len());
    let after_prefix = &rest[prefix_end..];
    let digits = after_prefix.strip_prefix('-')?;
    let digits_len = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    if digits_len == 0 {
        return None;
    }
    Some((level, rest[..prefix_end + 1 + digits_len].to_owned()))
}

/// The level of a Markdown ATX heading (`## x` is 2), if the line is one.
fn heading_level(line: &str) -> Option<usize> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    (level > 0 && line[level..].starts_with(' ')).then_some(level)
}

/// A body line with list markers, quote markers and emphasis taken off, e.g.
/// `- **Verified by:** \`a\`` becomes `Verified by: a`.
fn plain(line: &str) -> String {
    let mut text = line.trim();
    for marker in ["- ", "* ", "> "] {
        if let Some(rest) = text.strip_prefix(marker) {
            text = rest.trim_start();
        }
    }
    text.replace(['*', '`'], "")
}

/// Parses the clauses of one spec file.
fn parse_clauses(file: &str, text: &str) -> Vec<Clause> {
    let mut clauses: Vec<Clause> = Vec::new();
    // The level of the clause being read, while its body lasts.
    let mut open: Option<usize> = None;
    let mut in_fence = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some((level, id)) = clause_heading(line) {
            clauses.push(Clause {
                id,
                place: format!("{file}:{}", index + 1),
                verified_by: None,
                not_tested: None,
            });
            open = Some(level);
            continue;
        }
        if let (Some(level), Some(this)) = (open, heading_level(line)) {
            if this <= level {
                open = None;
            }
            continue;
        }
        let (Some(_), Some(clause)) = (open, clauses.last_mut()) else {
            continue;
        };
        let line = plain(line);
        if let Some(names) = line.strip_prefix("Verified by:") {
            let names = names
                .split(',')
                .map(|name| name.trim().trim_end_matches('.').trim_end_matches("()"))
                .filter(|name| !name.is_empty())
                .map(|name| name.rsplit("::").next().unwrap_or(name).to_owned());
            clause
                .verified_by
                .get_or_insert_with(Vec::new)
                .extend(names);
        } else if let Some(reason) = line.strip_prefix("Not tested:") {
            clause.not_tested = Some(reason.trim().to_owned());
        }
    }
    clauses
}

/// Every clause of every `specs/*.md`, in file order.
fn all_clauses() -> Vec<Clause> {
    let specs = workspace_root().join("specs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&specs)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).expect("read a spec file");
            let name = format!(
                "specs/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            parse_clauses(&name, &text)
        })
        .collect()
}

/// The names of functions defined in Rust source (`fn name(` or `fn name<`).
fn function_names(source: &str, names: &mut BTreeSet<String>) {
    let mut rest = source;
    while let Some(at) = rest.find("fn ") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + 3..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let follows = rest[name_len..].chars().next();
        if name_len > 0 && matches!(follows, Some('(' | '<')) {
            names.insert(rest[..name_len].to_owned());
        }
    }
}

/// The text of every `.rs` file under `core/`, `server/` and `tests/`, skipping `target/`,
/// `node_modules/` and hidden directories.
fn rust_sources() -> Vec<String> {
    let mut sources = Vec::new();
    let mut stack: Vec<PathBuf> = ["core", "server", "tests"]
        .iter()
        .map(|dir| workspace_root().join(dir))
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target"
                    && name != "node_modules"
                    && !name.to_string_lossy().starts_with('.')
                {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && let Ok(source) = std::fs::read_to_string(&path)
            {
                sources.push(source);
            }
        }
    }
    sources
}

/// Every function name defined in the workspace's Rust sources.
fn defined_functions() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for source in rust_sources() {
        function_names(&source, &mut names);
    }
    names
}

/// What is wrong with each clause's verification line, one message per offence.
fn unverified(clauses: &[Clause], functions: &BTreeSet<String>) -> Vec<String> {
    let mut offences = Vec::new();
    for clause in clauses {
        match (&clause.verified_by, &clause.not_tested) {
            (Some(names), _) if names.is_empty() => offences.push(format!(
                "{} {}: `Verified by:` names no test",
                clause.place, clause.id
            )),
            (Some(names), _) => {
                for name in names.iter().filter(|name| !functions.contains(*name)) {
                    offences.push(format!(
                        "{} {}: names `{name}`, which is no function under core/, server/ or tests/",
                        clause.place, clause.id
                    ));
                }
            }
            (None, Some(reason)) if reason.is_empty() => offences.push(format!(
                "{} {}: `Not tested:` gives no reason",
                clause.place, clause.id
            )),
            (None, Some(_)) => {}
            (None, None) => offences.push(format!(
                "{} {}: has neither `Verified by: test_name, ...` nor `Not tested: reason`",
                clause.place, clause.id
            )),
        }
    }
    offences
}

/// Ids used by more than one clause, with every place they appear.
fn duplicate_ids(clauses: &[Clause]) -> Vec<String> {
    let mut places: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for clause in clauses {
        places.entry(&clause.id).or_default().push(&clause.place);
    }
    places
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(id, at)| format!("{id} is used {} times: {}", at.len(), at.join(", ")))
        .collect()
}

/// For each function preceded by a `// Verifies: ID, ID` line (above its attributes and doc
/// comments), the ids it says it verifies.
fn verifies_tags(source: &str, tags: &mut BTreeMap<String, BTreeSet<String>>) {
    let mut pending: BTreeSet<String> = BTreeSet::new();
    for line in source.lines() {
        let trimmed = line.trim();
        if let Some(ids) = trimmed.strip_prefix("// Verifies:") {
            pending = ids
                .split(',')
                .map(|id| id.trim().to_owned())
                .filter(|id| !id.is_empty())
                .collect();
            continue;
        }
        if trimmed.starts_with("#[") || trimmed.starts_with("///") {
            continue;
        }
        let mut names = BTreeSet::new();
        function_names(trimmed, &mut names);
        for name in names {
            tags.entry(name)
                .or_default()
                .extend(pending.iter().cloned());
        }
        pending.clear();
    }
}

fn all_verifies_tags() -> BTreeMap<String, BTreeSet<String>> {
    let mut tags = BTreeMap::new();
    for source in rust_sources() {
        verifies_tags(&source, &mut tags);
    }
    tags
}

/// Tests name the clauses they verify, so a reader of a test finds its clause and the before-stop
/// check finds every clause named in code.
#[test]
fn every_named_test_names_the_clauses_it_verifies() {
    let tags = all_verifies_tags();
    let mut problems = Vec::new();
    for clause in all_clauses() {
        for name in clause.verified_by.iter().flatten() {
            let name = name.rsplit("::").next().unwrap_or(name);
            if !tags.get(name).is_some_and(|ids| ids.contains(&clause.id)) {
                problems.push(format!(
                    "{} names `{name}`, whose `// Verifies:` line does not name {}",
                    clause.place, clause.id
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "add the ids to the tests' `// Verifies:` lines:\n{}",
        problems.join("\n")
    );
}

#[test]
fn verifies_tags_are_read_from_above_attributes_and_docs() {
    let mut tags = BTreeMap::new();
    verifies_tags(
        "// Verifies: A-1, B-2\n#[test]\n/// doc\nfn one() {}\nfn two() {}\n",
        &mut tags,
    );
    assert_eq!(tags.get("one").map(|t| t.len()), Some(2));
    assert_eq!(tags.get("two").map(|t| t.len()), Some(0));
}

#[test]
fn specs_hold_at_least_one_clause() {
    let clauses = all_clauses();
    assert!(
        !clauses.is_empty(),
        "specs/*.md holds no clause heading (`## ID-N ...`): the tidy check would pass vacuously"
    );
}

#[test]
fn every_spec_clause_names_existing_tests_or_says_why_not() {
    let offences = unverified(&all_clauses(), &defined_functions());
    assert!(
        offences.is_empty(),
        "{} spec clause offence(s):\n{}",
        offences.len(),
        offences.join("\n")
    );
}

#[test]
fn spec_clause_ids_are_unique_across_spec_files() {
    let duplicates = duplicate_ids(&all_clauses());
    assert!(
        duplicates.is_empty(),
        "duplicate clause ids:\n{}",
        duplicates.join("\n")
    );
}

/// The editor suites' cases a `Not tested:` reason names, as (file, case name): each quoted name
/// belongs to the last path before it that ends in `.lua`, `.mjs` or `.ts` (`verified by
/// extension-neovim/tests/run.lua cases "a" and "b"`).
fn named_cases(reason: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut file: Option<String> = None;
    for (index, piece) in reason.split('"').enumerate() {
        if index % 2 == 1 {
            if let Some(file) = &file {
                out.push((file.clone(), piece.to_owned()));
            }
            continue;
        }
        for word in piece.split_whitespace() {
            let word = word.trim_end_matches([',', ';', ')', ':']);
            if [".lua", ".mjs", ".ts"]
                .iter()
                .any(|ext| word.ends_with(ext))
                && word.contains('/')
            {
                file = Some(word.to_owned());
            }
        }
    }
    out
}

/// Whether `source` defines a case called `name` (`case('name', ...)` in Lua, `test('name', ...)`
/// in JavaScript and TypeScript) directly under a `Verifies:` comment that names `id`.
fn case_verifies(source: &str, name: &str, id: &str) -> Result<(), &'static str> {
    let lines: Vec<&str> = source.lines().collect();
    let openers = [format!("('{name}'"), format!("(\"{name}\"")];
    let at = lines
        .iter()
        .position(|line| {
            let line = line.trim_start();
            (line.starts_with("case(") || line.starts_with("test("))
                && openers.iter().any(|opener| line.contains(opener.as_str()))
        })
        .ok_or("no case of that name")?;
    let above = lines[..at]
        .iter()
        .rev()
        .map(|line| line.trim())
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    let ids = above
        .strip_prefix("-- Verifies:")
        .or_else(|| above.strip_prefix("// Verifies:"))
        .ok_or("no `Verifies:` comment right above it")?;
    if ids.split(',').any(|tag| tag.trim() == id) {
        Ok(())
    } else {
        Err("its `Verifies:` comment does not name the clause")
    }
}

/// Clauses verified by the editors' own suites (Lua, JavaScript) name cases that exist and name the
/// clause back, as Rust tests do.
#[test]
fn editor_suite_cases_named_by_clauses_exist_and_name_them_back() {
    let root = workspace_root();
    let mut problems = Vec::new();
    let mut checked = 0;
    for clause in all_clauses() {
        for (file, name) in named_cases(clause.not_tested.as_deref().unwrap_or_default()) {
            checked += 1;
            let Ok(source) = std::fs::read_to_string(root.join(&file)) else {
                problems.push(format!(
                    "{} {}: names {file}, which does not exist",
                    clause.place, clause.id
                ));
                continue;
            };
            if let Err(why) = case_verifies(&source, &name, &clause.id) {
                problems.push(format!(
                    "{} {}: {file} case \"{name}\": {why}",
                    clause.place, clause.id
                ));
            }
        }
    }
    assert!(
        checked > 0,
        "no clause names an editor suite's case: the check would pass vacuously"
    );
    assert!(
        problems.is_empty(),
        "editor suite cases:\n{}",
        problems.join("\n")
    );
}

#[test]
fn named_cases_follow_the_last_path_and_case_lookup_reads_the_comment_above() {
    assert_eq!(
        named_cases(r#"verified by a/run.lua cases "x" and "y", and b/t.test.ts case "z" (Lua)"#),
        vec![
            ("a/run.lua".to_owned(), "x".to_owned()),
            ("a/run.lua".to_owned(), "y".to_owned()),
            ("b/t.test.ts".to_owned(), "z".to_owned()),
        ]
    );
    assert!(named_cases(r#"needs a person; "quoted" but no file"#).is_empty());
    let lua =
        "-- Verifies: NVIM-1, NVIM-2\ncase('one', function()\nend)\n\ncase('two', function()\n";
    assert_eq!(case_verifies(lua, "one", "NVIM-2"), Ok(()));
    assert!(case_verifies(lua, "one", "NVIM-3").is_err());
    assert!(case_verifies(lua, "two", "NVIM-1").is_err());
    assert!(case_verifies(lua, "three", "NVIM-1").is_err());
    let js = "// Verifies: VSC-1\ntest('one', async () => {});\n// Verifies: VSC-2\ntest(\"it's\", () => {});\n";
    assert_eq!(case_verifies(js, "one", "VSC-1"), Ok(()));
    assert_eq!(case_verifies(js, "it's", "VSC-2"), Ok(()));
}

// The checker itself, on inline fixtures, so a broken parser cannot make the checks above pass.

const FIXTURE: &str = "\
# Protocol

## PROTO-1 Initialize answers the version

The server MUST answer.

Verified by: `known_test`, protocol::other_test

## PROTO-2 Missing test

Verified by: no_such_test

### A sub-heading inside PROTO-2

Not a clause, and the body goes on.

## PROTO-3 Deliberately untested

- **Not tested:** needs a person at a real editor

## Known costs

Verified by: ignored_outside_a_clause

## PROTO-4 Nothing said

```sh
# PROTO-9 inside a fence is not a heading
Verified by: fenced
```

## PROTO-1 Duplicate
Not tested:
";

#[test]
fn tidy_parser_reads_ids_names_and_reasons_from_headings() {
    let clauses = parse_clauses("specs/fixture.md", FIXTURE);
    let summary: Vec<(String, Option<Vec<String>>, Option<String>)> = clauses
        .into_iter()
        .map(|clause| (clause.id, clause.verified_by, clause.not_tested))
        .collect();
    let names = |list: &[&str]| Some(list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    assert_eq!(
        summary,
        vec![
            (
                "PROTO-1".to_owned(),
                names(&["known_test", "other_test"]),
                None
            ),
            ("PROTO-2".to_owned(), names(&["no_such_test"]), None),
            (
                "PROTO-3".to_owned(),
                None,
                Some("needs a person at a real editor".to_owned())
            ),
            ("PROTO-4".to_owned(), None, None),
            ("PROTO-1".to_owned(), None, Some(String::new())),
        ]
    );
}

#[test]
fn tidy_check_reports_every_offending_clause() {
    let clauses = parse_clauses("specs/fixture.md", FIXTURE);
    let mut functions = BTreeSet::new();
    // Spelled with a placeholder so this file itself defines no `known_test` for the real check.
    let source = "#[test]\nFN known_test() {}\nasync FN other_test<T>() {}\nfn_not_a_fn(x)\n";
    function_names(&source.replace("FN", "fn"), &mut functions);
    assert_eq!(
        functions,
        ["known_test", "other_test"].map(str::to_owned).into()
    );
    let offences = unverified(&clauses, &functions);
    assert_eq!(offences.len(), 3, "{offences:#?}");
    assert!(offences[0].contains("PROTO-2") && offences[0].contains("no_such_test"));
    assert!(offences[1].contains("PROTO-4") && offences[1].contains("neither"));
    assert!(offences[2].contains("PROTO-1") && offences[2].contains("no reason"));
    let duplicates = duplicate_ids(&clauses);
    assert_eq!(duplicates.len(), 1, "{duplicates:#?}");
    assert!(duplicates[0].starts_with("PROTO-1 is used 2 times"));
}
