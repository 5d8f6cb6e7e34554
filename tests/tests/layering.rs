//! The layers of each crate, kept by reading the source (specs/layering.md).
//!
//! It reads text, as a person does, not the compiler's view: every `crate::`, `super::` and
//! `self::` path outside test modules, `use` groups expanded, and a child module named bare
//! (`mod read_file;` then `read_file::run`) is an arrow from the file that names it to the file
//! that defines the longest module path it names. A path built by a macro is missed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// The crate's source files, test files aside.
fn sources(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "tests" {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file from its crate root: `tools/run.rs` is `["tools", "run"]`.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(root)
        .expect("under the root")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file that defines the longest prefix of a module path.
fn file_of(root: &Path, parts: &[String]) -> Option<PathBuf> {
    for n in (0..=parts.len()).rev() {
        let prefix = &parts[..n];
        if prefix.is_empty() {
            return ["lib.rs", "main.rs"]
                .iter()
                .map(|name| root.join(name))
                .find(|p| p.exists());
        }
        let joined: PathBuf = prefix.iter().collect();
        let file = root.join(&joined).with_extension("rs");
        if file.exists() {
            return Some(file);
        }
        let folder = root.join(&joined).join("mod.rs");
        if folder.exists() {
            return Some(folder);
        }
    }
    None
}

/// The text with every `#[cfg(test)] mod name { ... }` block left out, by brace matching that
/// steps over comments, strings and character literals (a test's strings hold braces).
fn without_tests(text: &str) -> String {
    let start = Regex::new(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+\w+\s*\{").expect("a pattern");
    let mut out = String::new();
    let mut at = 0;
    for m in start.find_iter(text) {
        if m.start() < at {
            continue;
        }
        out.push_str(&text[at..m.start()]);
        at = block_end(text.as_bytes(), m.end());
    }
    out.push_str(&text[at.min(text.len())..]);
    out
}

/// Where the block whose `{` ends just before `from` closes (past its `}`), or the text's end.
fn block_end(bytes: &[u8], from: usize) -> usize {
    let mut depth = 1;
    let mut i = from;
    let skip_to = |i: usize, pattern: &[u8]| {
        bytes[i..]
            .windows(pattern.len())
            .position(|w| w == pattern)
            .map_or(bytes.len(), |p| i + p + pattern.len())
    };
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = skip_to(i, b"\n"),
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = skip_to(i + 2, b"*/"),
            b'r' if matches!(bytes.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                if bytes.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                i = skip_to(i + 2 + hashes, &close);
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 3,
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// `use crate::a::{b, c::d};` written out as `crate::a::b crate::a::c::d`.
fn expand_groups(text: &str) -> String {
    let group =
        Regex::new(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};")
            .expect("a pattern");
    group
        .replace_all(text, |c: &regex::Captures<'_>| {
            let head = format!("{}{}", &c[1], &c[2]);
            c[3].split(',')
                .map(|item| item.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|item| !item.is_empty() && !item.contains('{'))
                .map(|item| {
                    let name = item.split(" as ").next().unwrap_or("").trim().to_string();
                    format!("{head}::{name}")
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .into_owned()
}

/// Where `kind::names` points from the module `here`, as a module path from the crate root.
fn resolve(here: &[String], kind: &str, names: &[String]) -> Vec<String> {
    let mut base: Vec<String> = match kind {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        _ => here[..here.len().saturating_sub(1)].to_vec(),
    };
    let mut rest = names;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    base
}

/// Every arrow between two files of one crate: which files each file uses.
fn graph(root: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let path = Regex::new(r"(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)").expect("a pattern");
    let child = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;").expect("a pattern");
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for file in sources(root) {
        let text = std::fs::read_to_string(&file).expect("a source file");
        let text = expand_groups(&without_tests(&text));
        let here = module_of(root, &file);
        let mut found: Vec<(String, Vec<String>)> = Vec::new();
        let preceded = |at: usize| {
            text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        };
        for m in path.captures_iter(&text) {
            let whole = m.get(0).expect("a match");
            if preceded(whole.start()) {
                continue;
            }
            let names = m[2].split("::").skip(1).map(str::to_string).collect();
            found.push((m[1].to_string(), names));
        }
        for c in child.captures_iter(&text) {
            let name = &c[1];
            let bare =
                Regex::new(&format!(r"{name}((?:::[A-Za-z_][A-Za-z0-9_]*)+)")).expect("a pattern");
            for m in bare.captures_iter(&text) {
                let whole = m.get(0).expect("a match");
                if preceded(whole.start()) {
                    continue;
                }
                let mut names = vec![name.to_string()];
                names.extend(m[1].split("::").skip(1).map(str::to_string));
                found.push(("self".to_string(), names));
            }
        }
        let targets = edges.entry(file.clone()).or_default();
        for (kind, names) in found {
            let parts = resolve(&here, &kind, &names);
            if let Some(target) = file_of(root, &parts)
                && target != file
            {
                targets.insert(target);
            }
        }
    }
    edges
}

/// The circles of a graph: its strongly connected parts of more than one file (Tarjan's, with an
/// explicit stack, since nothing that walks structure recurses without bound).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let nodes: Vec<&PathBuf> = edges.keys().collect();
    let id: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let next: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|t| id.get(t).copied())
                .collect()
        })
        .collect();
    let count = nodes.len();
    let mut index = vec![usize::MAX; count];
    let mut low = vec![0; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    for start in 0..count {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 && index[v] == usize::MAX {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = next[v].get(*child) {
                *child += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut part = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    part.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    out.push(part);
                }
            }
        }
    }
    out
}

/// The floors of one crate as `specs/layering.md` lists them: module name to floor.
fn floors(section: &str) -> BTreeMap<String, u32> {
    let spec = std::fs::read_to_string(workspace_root().join("specs/layering.md"))
        .expect("specs/layering.md");
    let body = spec
        .split(&format!("## Floors of `{section}`"))
        .nth(1)
        .expect("the section of the crate");
    let body = body.split("\n## ").next().unwrap_or(body);
    let body = body.split("\n### ").next().unwrap_or(body);
    let name = Regex::new(r"`([a-z_]+)`").expect("a pattern");
    let mut out = BTreeMap::new();
    for line in body.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(floor) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        for m in name.captures_iter(cells.get(2).copied().unwrap_or("")) {
            let previous = out.insert(m[1].to_string(), floor);
            assert!(
                previous.is_none(),
                "`{}` is on two floors of {section}",
                &m[1]
            );
        }
    }
    out
}

/// The offences of one crate (its source folder `root`, named `crate_src`) against its floors.
fn floor_offences(root: &Path, crate_src: &str, floors: &BTreeMap<String, u32>) -> Vec<String> {
    let top = |file: &Path| module_of(root, file).first().cloned();
    let mut offences = Vec::new();
    let mut modules = BTreeSet::new();
    for (file, targets) in graph(root) {
        let Some(from) = top(&file) else {
            continue; // the crate root sits above every floor
        };
        modules.insert(from.clone());
        let Some(&from_floor) = floors.get(&from) else {
            continue;
        };
        for target in targets {
            let Some(to) = top(&target) else {
                offences.push(format!(
                    "{} uses the crate root",
                    file.strip_prefix(root).unwrap_or(&file).display()
                ));
                continue;
            };
            if to == from {
                continue;
            }
            match floors.get(&to) {
                Some(&to_floor) if to_floor < from_floor => {}
                Some(&to_floor) => offences.push(format!(
                    "{} (`{from}`, floor {from_floor}) uses `{to}` (floor {to_floor})",
                    file.strip_prefix(root).unwrap_or(&file).display()
                )),
                None => {}
            }
        }
    }
    for module in &modules {
        if !floors.contains_key(module) {
            offences.push(format!(
                "`{module}` of {crate_src} is on no floor of specs/layering.md"
            ));
        }
    }
    for listed in floors.keys() {
        if !modules.contains(listed) {
            offences.push(format!(
                "specs/layering.md lists `{listed}`, which {crate_src} does not have"
            ));
        }
    }
    offences
}

// Verifies: LAYER-1
#[test]
fn every_module_uses_only_modules_on_lower_floors() {
    let mut offences = Vec::new();
    for crate_src in ["core/src", "server/src"] {
        let root = workspace_root().join(crate_src);
        offences.extend(floor_offences(&root, crate_src, &floors(crate_src)));
    }
    assert!(
        offences.is_empty(),
        "imports the floors of specs/layering.md do not allow:\n{}",
        offences.join("\n")
    );
}

// Verifies: LAYER-1
#[test]
fn an_import_sideways_or_up_and_a_module_off_the_table_are_offences() {
    // The check itself, on a crate made for it: `a` on floor 0, `b` and `c` on floor 1, `d` on
    // no floor. `b` using `a` is allowed; `c` using `b` (sideways) and `a` naming `c` in a doc
    // link (up), after a test module whose strings hold braces, are not; `d` is named, and what
    // its test module names is not counted.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    let write = |name: &str, text: &str| std::fs::write(src.join(name), text).expect("written");
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n");
    write(
        "a.rs",
        "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    const OPEN: &str = \"{\";\n    const C: char = '{';\n}\n/// Used by [`crate::c::g`].\npub fn k() {}\n",
    );
    write("b.rs", "use crate::a::f;\npub fn h() { f() }\n");
    write("c.rs", "pub fn g() { crate::b::h(); }\n");
    write("d.rs", "#[cfg(test)]\nmod tests { use crate::c::g; }\n");
    let floors: BTreeMap<String, u32> = [("a", 0), ("b", 1), ("c", 1)]
        .into_iter()
        .map(|(m, f)| (m.to_string(), f))
        .collect();
    let offences = floor_offences(src, "made", &floors);
    assert_eq!(
        offences,
        vec![
            "a.rs (`a`, floor 0) uses `c` (floor 1)".to_string(),
            "c.rs (`c`, floor 1) uses `b` (floor 1)".to_string(),
            "`d` of made is on no floor of specs/layering.md".to_string(),
        ]
    );
}

// Verifies: LAYER-2
#[test]
fn no_circle_of_files_spans_two_folders_and_the_session_is_in_none() {
    let mut offences = Vec::new();
    for crate_src in ["core/src", "server/src"] {
        let root = workspace_root().join(crate_src);
        for circle in circles(&graph(&root)) {
            let folders: BTreeSet<&Path> = circle.iter().filter_map(|f| f.parent()).collect();
            let shown: Vec<String> = circle
                .iter()
                .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
                .collect();
            if folders.len() > 1 {
                offences.push(format!(
                    "a circle across {} folders of {crate_src}: {}",
                    folders.len(),
                    shown.join(", ")
                ));
            }
            if circle.iter().any(|f| f.ends_with("core/src/session.rs")) {
                offences.push(format!("session.rs is in a circle: {}", shown.join(", ")));
            }
        }
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

// Verifies: LAYER-2
#[test]
fn a_circle_across_folders_is_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    std::fs::create_dir(src.join("tools")).expect("a folder");
    std::fs::write(src.join("lib.rs"), "pub mod session;\npub mod tools;\n").expect("lib");
    std::fs::write(src.join("session.rs"), "use crate::tools::Spec;\n").expect("session");
    std::fs::write(
        src.join("tools/mod.rs"),
        "mod read;\npub struct Spec;\npub fn f() { read::run(); }\n",
    )
    .expect("tools");
    std::fs::write(
        src.join("tools/read.rs"),
        "use crate::session::Session;\npub fn run() {}\n#[cfg(test)]\nmod tests { use crate::lib; }\n",
    )
    .expect("read");
    let found = circles(&graph(src));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0],
        vec![
            src.join("session.rs"),
            src.join("tools/mod.rs"),
            src.join("tools/read.rs")
        ]
    );
}

// Verifies: LAYER-3
#[test]
fn the_kernel_reads_no_clock_and_does_no_io() {
    let root = workspace_root().join("core/src/kernel");
    let forbidden = Regex::new(
        r"SystemTime::now|Instant::now|std::fs::[a-z_]+\s*\(|std::process|std::net|tokio|std::thread::sleep",
    )
    .expect("a pattern");
    let mut offences = Vec::new();
    for file in sources(&root) {
        let text = without_tests(&std::fs::read_to_string(&file).expect("a source file"));
        for (n, line) in text.lines().enumerate() {
            if let Some(m) = forbidden.find(line) {
                offences.push(format!(
                    "{}:{}: {}",
                    file.strip_prefix(&root).unwrap_or(&file).display(),
                    n + 1,
                    m.as_str()
                ));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "the kernel reads a clock or does IO:\n{}",
        offences.join("\n")
    );
}

/// Every file outside the kernel that names a trusted label as a value (not joined into a label
/// it can only lower), and why it may: each names it where a gate or provenance already decided.
const TRUSTED_BY_HAND: &[(&str, &str)] = &[
    (
        "core/src/turn.rs",
        "the person's prompt and pictures, AGENTS.md after its trust check",
    ),
    (
        "core/src/record.rs",
        "a record's label read back; anything unknown reads as the worst",
    ),
    (
        "core/src/restore.rs",
        "a restored file not marked untrusted; the driver's own notice",
    ),
    (
        "core/src/delegate.rs",
        "the driver's listing of definitions and its own fallback words",
    ),
    (
        "core/src/tools/mcp.rs",
        "the driver's name line before a server's tool",
    ),
    (
        "core/src/tools/land.rs",
        "bytes the trust map or a check found readable",
    ),
    (
        "core/src/tools/edit_file.rs",
        "a passage of a file the trust map found readable",
    ),
    (
        "core/src/tools/lsp.rs",
        "hover of a trusted file, after its integrity check",
    ),
    (
        "core/src/tools/search.rs",
        "matches in files the trust map found readable",
    ),
    (
        "core/src/tools/read_git.rs",
        "a trusted repository's answer, after its integrity check",
    ),
    (
        "core/src/tools/load_skill.rs",
        "a skill read where it is trusted (SKILL-4)",
    ),
    (
        "core/src/tools/list_files.rs",
        "names in a place the person opened (LIST-1)",
    ),
    (
        "core/src/tools/read_file.rs",
        "a file the trust map or a check found readable",
    ),
    (
        "core/src/tools/run.rs",
        "output of a plan the person or a rule vouched for, joined with stdin",
    ),
    ("core/src/tools/ask_user.rs", "the person's own answer"),
    (
        "core/src/tools/diagnostics.rs",
        "diagnostics of files a trust rule vouches for, and the driver's words",
    ),
];

// Verifies: LABEL-4
#[test]
fn a_trusted_label_is_named_by_hand_only_where_a_gate_or_provenance_decided_it() {
    let root = workspace_root();
    let named = Regex::new(r"Label::TRUSTED_(?:PUBLIC|PRIVATE)").expect("a pattern");
    let joined =
        Regex::new(r"\.join\(\s*(?:crate::kernel::label::)?Label::TRUSTED_").expect("a pattern");
    let mut found = BTreeSet::new();
    for crate_src in ["core/src", "server/src"] {
        for file in sources(&root.join(crate_src)) {
            let rel = file
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            if rel.starts_with("core/src/kernel/") {
                continue;
            }
            let text = without_tests(&std::fs::read_to_string(&file).expect("a source file"));
            let text = joined.replace_all(&text, ".join(");
            if named.is_match(&text) {
                found.insert(rel);
            }
        }
    }
    let listed: BTreeSet<String> = TRUSTED_BY_HAND.iter().map(|(f, _)| f.to_string()).collect();
    let new: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(
        new.is_empty() && stale.is_empty(),
        "files naming a trusted label by hand that are not listed (say why, in TRUSTED_BY_HAND): {new:?}; listed files that no longer do: {stale:?}"
    );
}

// Verifies: EGRESS-1
#[test]
fn only_egress_holds_an_http_client_or_opens_a_connection() {
    let root = workspace_root();
    let outbound = Regex::new(
        r"reqwest|hyper::client|TcpStream::connect|UdpSocket|UnixStream::connect|TcpSocket",
    )
    .expect("a pattern");
    let mut found = Vec::new();
    for crate_src in ["core/src", "server/src"] {
        for file in sources(&root.join(crate_src)) {
            let rel = file
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            if rel.starts_with("core/src/egress/") {
                continue;
            }
            let text = without_tests(&std::fs::read_to_string(&file).expect("a source file"));
            for m in outbound.find_iter(&text) {
                found.push(format!("{rel}: {}", m.as_str()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a way out beside core/src/egress (EGRESS-1): {found:?}"
    );
}
