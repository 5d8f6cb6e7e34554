//! Who may read untrusted bytes, kept by reading the source (GATE-3).
//!
//! The compiler keeps the value of a `Labelled` inside the kernel (`value()` and `into_value()`
//! are `pub(super)`); this test keeps the rest of the rule: which kernel files open a labelled
//! value, and which files outside the policy layer call each of its gates. Every public function
//! of `kernel/policy.rs` must be in [`GATES`], either as one that looks at label or metadata only,
//! or with the files allowed to call it. A new gate, a new caller of a gate that reads bytes, or a
//! new kernel file that opens a value fails here until GATE-3's list says so. It reads text, not
//! the compiler's view: calls (and uses as a function value) are found as `policy::name` outside test modules, and a gate
//! imported by its bare name is refused outright so that no call hides from the search.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

/// The kernel files allowed to open a `Labelled`'s value (`.value()`, `.into_value()`).
const KERNEL_READERS: &[&str] = &[
    "core/src/kernel/labelled.rs",
    "core/src/kernel/policy.rs",
    // An edit proposal's diff and line edits are computed from both texts, for the screen and
    // the buffer write they are declassified into (EDIT clauses).
    "core/src/kernel/proposal.rs",
];

/// Every public function of the policy layer: `None` when it decides on labels or metadata
/// alone; otherwise the files, outside the policy layer, allowed to call it.
const GATES: &[(&str, Option<&[&str]>)] = &[
    // On labels alone, or carrying a value along with its label and deciding nothing on it.
    ("open", None),
    ("present", None),
    ("withhold", None),
    ("concat", None),
    ("text_to_bytes", None),
    ("text_for_display", None),
    ("check_reasons", None),
    // Releases after a person's yes or a clean check.
    (
        "release",
        Some(&[
            "core/src/tools/vet_content.rs",
            "core/src/tools/mcp.rs",
            "core/src/tools/read_output.rs",
        ]),
    ),
    (
        "release_part",
        Some(&["core/src/tools/read_git.rs", "core/src/tools/release.rs"]),
    ),
    (
        "vouched_by_command",
        Some(&["core/src/tools/read_output.rs"]),
    ),
    ("page", Some(&["core/src/tools/read_output.rs"])),
    // Measures for a reference, a fingerprint for verdict memory, a text test (COST-15).
    (
        "measure",
        Some(&[
            "core/src/kernel/slot.rs",
            "core/src/tools/vet_content.rs",
            "core/src/tools/mcp.rs",
            "core/src/tools/read_git.rs",
            "core/src/tools/content_trust.rs",
            "core/src/tools/release.rs",
            "core/src/check.rs",
        ]),
    ),
    (
        "fingerprint",
        Some(&[
            "core/src/kernel/verdicts.rs",
            "core/src/tools/content_trust.rs",
            "core/src/tools/run.rs",
            "core/src/session.rs",
            // The session's own approved edit of bytes a check passed keeps their verdict
            // (CHECK-13).
            "core/src/tools/land.rs",
        ]),
    ),
    ("is_text", Some(&["core/src/tools/content_trust.rs"])),
    // Opens the file a withheld entry names; keeps a file's last newline on a write.
    (
        "path_for_read",
        Some(&[
            "core/src/tools/vet_content.rs",
            "core/src/tools/write_file.rs",
            "core/src/tools/read_file.rs",
        ]),
    ),
    (
        "keep_trailing_newline",
        Some(&["core/src/tools/write_file.rs"]),
    ),
    // Declassifiers into a file write, a buffer, the person's screen.
    (
        "to_file_write",
        Some(&[
            "core/src/tools/vet_content.rs",
            "core/src/tools/run.rs",
            "core/src/tools/land.rs",
        ]),
    ),
    (
        "to_buffer_write",
        Some(&[
            "core/src/tools/spawn_processor.rs",
            "core/src/tools/land.rs",
        ]),
    ),
    (
        "to_buffer_edits",
        Some(&[
            "core/src/restore.rs",
            "core/src/tools/land.rs",
            "tests/src/bin/bench_edit.rs",
        ]),
    ),
    (
        "to_screen",
        Some(&[
            "core/src/screen.rs",
            "server/src/lsp.rs",
            "server/src/screen.rs",
            "server/src/demo/mod.rs",
            "server/src/acp.rs",
            "server/src/transcript.rs",
            "tests/src/bin/bench_edit.rs",
        ]),
    ),
    ("preview_for_screen", Some(&[])),
    // Into a check's or a processor's request body, and a check's verdict.
    ("to_check_request", Some(&["core/src/check.rs"])),
    ("file_to_check_request", Some(&["core/src/check.rs"])),
    ("read_verdict", Some(&["core/src/check.rs"])),
    (
        "split_processor_reply",
        Some(&["core/src/tools/spawn_processor.rs"]),
    ),
    (
        "to_processor_request",
        Some(&["core/src/tools/spawn_processor.rs"]),
    ),
    (
        "picture_bytes",
        Some(&[
            "core/src/tools/spawn_processor.rs",
            "core/src/tools/vet_content.rs",
        ]),
    ),
    (
        "encoded_picture_to_processor",
        Some(&["core/src/tools/spawn_processor.rs"]),
    ),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// Every .rs file under `dir`, as a path relative to the workspace root.
fn rust_files(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![root.join(dir)];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under the root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// A file's text before its test module: what the tests do is not what ships.
fn shipped(root: &Path, rel: &str) -> String {
    let text = std::fs::read_to_string(root.join(rel)).expect("a readable source file");
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The names `kernel/policy.rs` makes public as functions.
fn policy_functions(root: &Path) -> BTreeSet<String> {
    let def = Regex::new(r"(?m)^pub (?:async )?fn ([a-z_0-9]+)").expect("a pattern");
    def.captures_iter(&shipped(root, "core/src/kernel/policy.rs"))
        .map(|c| c[1].to_string())
        .collect()
}

fn sources(root: &Path) -> Vec<String> {
    let mut files = rust_files(root, "core/src");
    files.extend(rust_files(root, "server/src"));
    files.extend(rust_files(root, "tests/src"));
    files
}

// Verifies: GATE-3
#[test]
fn every_gate_of_the_policy_layer_is_listed_with_who_may_call_it() {
    let root = workspace_root();
    let listed: BTreeSet<String> = GATES.iter().map(|(n, _)| n.to_string()).collect();
    let defined = policy_functions(&root);
    assert!(
        defined.len() > 20,
        "the policy layer's functions were not found: {defined:?}"
    );
    let unlisted: Vec<_> = defined.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "kernel/policy.rs has public functions GATE-3 does not list: {unlisted:?}; add each to GATES \
         (and to GATE-3) with the files allowed to call it"
    );
    let gone: Vec<_> = listed.difference(&defined).collect();
    assert!(
        gone.is_empty(),
        "GATES lists functions kernel/policy.rs no longer has: {gone:?}"
    );
}

// Verifies: GATE-3
#[test]
fn only_the_listed_files_call_a_gate_that_reads_untrusted_bytes() {
    let root = workspace_root();
    // Each gate's patterns, made once: a use of it by path, and an import of its bare name (which
    // would hide its calls from the search).
    let patterns: Vec<(&str, &[&str], Regex, Regex)> = GATES
        .iter()
        .filter_map(|(name, allowed)| {
            let allowed = (*allowed)?;
            let call = Regex::new(&format!(r"\bpolicy::{name}\b")).expect("a pattern");
            let import = Regex::new(&format!(
                r"(?s)use [^;]*policy::(\{{[^}}]*\b{name}\b[^}}]*\}}|{name}\b)[^;]*;"
            ))
            .expect("a pattern");
            Some((*name, allowed, call, import))
        })
        .collect();
    let mut wrong = Vec::new();
    let mut calls = 0;
    for file in sources(&root) {
        if file == "core/src/kernel/policy.rs" {
            continue;
        }
        let text = shipped(&root, &file);
        if !text.contains("policy") {
            continue;
        }
        for (name, allowed, call, import) in &patterns {
            let found = call.find_iter(&text).count();
            calls += found;
            if found > 0 && !allowed.contains(&file.as_str()) {
                wrong.push(format!("{file} calls policy::{name}"));
            }
            if import.is_match(&text) {
                wrong.push(format!("{file} imports policy::{name} by its bare name"));
            }
        }
    }
    assert!(
        calls > 30,
        "too few gate calls were found ({calls}): is the search still right?"
    );
    assert!(
        wrong.is_empty(),
        "a file outside GATE-3's list reads untrusted bytes through a gate: {wrong:#?}; if it must, \
         add it to GATES and to GATE-3's list"
    );
}

// Verifies: GATE-3
#[test]
fn only_the_listed_kernel_files_open_a_labelled_value() {
    let root = workspace_root();
    let labelled = shipped(&root, "core/src/kernel/labelled.rs");
    // The value field is private, and its accessors are the kernel's alone.
    assert!(
        Regex::new(r"(?m)^\s+value: T,")
            .expect("a pattern")
            .is_match(&labelled),
        "Labelled's value field is no longer a private `value: T`"
    );
    let public = Regex::new(r"(?m)^\s+pub(\([a-z]+\))? fn ([a-z_]+)").expect("a pattern");
    for c in public.captures_iter(&labelled) {
        let (scope, name) = (c.get(1).map(|m| m.as_str()), &c[2]);
        match name {
            "new" | "label" | "taint" => assert_eq!(scope, None, "{name}"),
            _ => assert_eq!(
                scope,
                Some("(super)"),
                "Labelled::{name} is wider than the kernel: it must be pub(super)"
            ),
        }
    }
    let opens = Regex::new(r"\.(value|into_value)\(\)").expect("a pattern");
    let mut readers = BTreeSet::new();
    for file in rust_files(&root, "core/src/kernel") {
        if opens.is_match(&shipped(&root, &file)) {
            readers.insert(file);
        }
    }
    let allowed: BTreeSet<String> = KERNEL_READERS.iter().map(|s| s.to_string()).collect();
    let extra: Vec<_> = readers.difference(&allowed).collect();
    assert!(
        extra.is_empty(),
        "kernel files outside GATE-3's list open a labelled value: {extra:?}"
    );
    assert!(
        readers.contains("core/src/kernel/policy.rs"),
        "the search no longer finds the policy layer's own reads"
    );
}
