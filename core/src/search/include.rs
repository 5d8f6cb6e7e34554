//! The `include` glob of `search`: which files a search reads.
//!
//! `*` and `?` stay inside one path component, `**` as a whole component crosses any number of
//! them, and `[...]` is a class. Brace groups are expanded into plain globs before the walk, so
//! each alternative is matched once per path and a group costs a multiple of the work rather than
//! a power of it. A glob without a `/` is matched against a file's name at any depth; one with a
//! `/` against the path from the searched directory, from the workspace root, or as written when
//! it is absolute. What the glob leans on that this matcher lacks is named, decided from the glob
//! alone.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::paths::control_pictures;

/// Most plain globs one `include` may expand to.
pub const MAX_EXPANSIONS: usize = 256;

#[derive(Clone, Debug)]
pub struct Include {
    /// Alternatives without a `/`, matched against the file name.
    names: GlobSet,
    /// Alternatives with a `/`, matched against relative and absolute paths.
    paths: GlobSet,
    advice: Vec<String>,
}

impl Include {
    pub fn compile(glob: &str) -> Result<Include, String> {
        let shown = control_pictures(glob);
        let alternatives = expand(glob).map_err(|e| format!("include `{shown}`: {e}"))?;
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        for alternative in &alternatives {
            let alternative = alternative.strip_prefix("./").unwrap_or(alternative);
            let compiled = GlobBuilder::new(alternative)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("include `{shown}` is not a glob this matcher reads: {e}"))?;
            if alternative.contains('/') {
                paths.add(compiled);
            } else {
                names.add(compiled);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build()
                .map_err(|e| format!("include `{shown}` is not a glob this matcher reads: {e}"))
        };
        Ok(Include {
            names: build(names)?,
            paths: build(paths)?,
            advice: advice(glob),
        })
    }

    /// Whether the search reads `path`, found under `directory` in the workspace `root`.
    pub fn selects(&self, path: &Path, directory: &Path, root: &Path) -> bool {
        if path.file_name().is_some_and(|n| self.names.is_match(n)) {
            return true;
        }
        if self.paths.is_empty() {
            return false;
        }
        [directory, root]
            .iter()
            .filter_map(|base| path.strip_prefix(base).ok())
            .any(|rel| self.paths.is_match(rel))
            || self.paths.is_match(path)
    }

    /// Sentences naming syntax the glob uses that this matcher does not have.
    pub fn advice(&self) -> &[String] {
        &self.advice
    }
}

/// Expands brace groups, nested ones included, into plain globs. Backslash escapes and classes
/// (`[{,}]`) are copied as they are; a `}` or `,` outside any group is an ordinary character.
pub fn expand(glob: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = glob.chars().collect();
    let mut at = 0;
    let mut out = sequence(&chars, &mut at, false)?;
    let mut seen = std::collections::HashSet::new();
    out.retain(|g| seen.insert(g.clone()));
    Ok(out)
}

/// Reads until the end, or inside a group until its `,` or `}`, returning every expansion.
fn sequence(chars: &[char], at: &mut usize, nested: bool) -> Result<Vec<String>, String> {
    let mut outs = vec![String::new()];
    let push = |outs: &mut Vec<String>, text: &str| outs.iter_mut().for_each(|o| o.push_str(text));
    while let Some(&c) = chars.get(*at) {
        match c {
            '\\' => {
                let escaped: String = chars[*at..(*at + 2).min(chars.len())].iter().collect();
                push(&mut outs, &escaped);
                *at += escaped.chars().count();
            }
            '[' => {
                // A class runs to the first `]` after its first member, so `[]]` and `[!]]` hold one.
                let mut end = *at + 1;
                if chars.get(end).is_some_and(|c| *c == '!' || *c == '^') {
                    end += 1;
                }
                end += 1;
                while end < chars.len() && chars[end] != ']' {
                    end += 1;
                }
                let end = (end + 1).min(chars.len());
                let class: String = chars[*at..end].iter().collect();
                push(&mut outs, &class);
                *at = end;
            }
            '{' => {
                *at += 1;
                let alternatives = group(chars, at)?;
                let product = outs.len().saturating_mul(alternatives.len());
                if product > MAX_EXPANSIONS {
                    return Err(format!(
                        "its brace groups expand to more than {MAX_EXPANSIONS} globs; use fewer alternatives"
                    ));
                }
                outs = outs
                    .iter()
                    .flat_map(|prefix| alternatives.iter().map(move |alt| format!("{prefix}{alt}")))
                    .collect();
            }
            ',' | '}' if nested => break,
            '}' => {
                push(&mut outs, "\\}");
                *at += 1;
            }
            other => {
                push(&mut outs, &other.to_string());
                *at += 1;
            }
        }
    }
    Ok(outs)
}

/// Reads the alternatives of a group whose `{` was just consumed, through its `}`.
fn group(chars: &[char], at: &mut usize) -> Result<Vec<String>, String> {
    let mut all = Vec::new();
    loop {
        all.extend(sequence(chars, at, true)?);
        if all.len() > MAX_EXPANSIONS {
            return Err(format!(
                "its brace groups expand to more than {MAX_EXPANSIONS} globs; use fewer alternatives"
            ));
        }
        match chars.get(*at) {
            Some(',') => *at += 1,
            Some('}') => {
                *at += 1;
                return Ok(all);
            }
            _ => return Err("a `{` is never closed".to_string()),
        }
    }
}

/// Names what the glob leans on that this matcher does not have. Decided from the glob, which is
/// routing the planner wrote, never from anything the walk found.
fn advice(glob: &str) -> Vec<String> {
    let mut out = Vec::new();
    if glob.contains('|') {
        out.push(
            "`|` is not alternation in a glob: it matches a `|` in a name; write {a,b}".to_string(),
        );
    }
    if glob.starts_with('!') {
        out.push("a leading `!` does not exclude anything: include only selects, and the `!` is part of the name".to_string());
    }
    for form in ["@(", "!(", "+(", "?(", "*("] {
        if glob.contains(form) {
            out.push(format!(
                "`{form}...)` (extended globbing) is not supported: its characters are read as ordinary glob syntax; write {{a,b}}"
            ));
            break;
        }
    }
    if comma_outside_braces(glob) {
        out.push(
            "a `,` outside braces is an ordinary character, not a list; write {a,b}".to_string(),
        );
    }
    if glob
        .split('/')
        .any(|component| component.contains("**") && component != "**")
    {
        out.push("`**` crosses directories only as a whole path component (`**/x`, `a/**`); elsewhere it is `*`".to_string());
    }
    out
}

fn comma_outside_braces(glob: &str) -> bool {
    let mut depth = 0usize;
    let mut escaped = false;
    for c in glob.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selects(glob: &str, path: &str) -> bool {
        let include = Include::compile(glob).expect("compiles");
        include.selects(Path::new(path), Path::new("/w/src"), Path::new("/w"))
    }

    // Verifies: SEARCH-5
    #[test]
    fn search_include_braces_expand_before_the_walk() {
        assert_eq!(
            expand("**/*.{cc,h,mm}").expect("expands"),
            ["**/*.cc", "**/*.h", "**/*.mm"]
        );
        assert_eq!(expand("{a,{b,c}}x").expect("expands"), ["ax", "bx", "cx"]);
        assert_eq!(expand("[{,}]").expect("expands"), ["[{,}]"]);
        assert_eq!(expand(r"\{a,b\}").expect("expands"), [r"\{a,b\}"]);
        assert!(expand("{a,b").is_err());
        let huge = "{a,b,c,d}".repeat(5);
        assert!(expand(&huge).expect_err("too many").contains("more than"));
        assert!(selects("*.{rs,toml}", "/w/src/deep/Cargo.toml"));
        assert!(selects("**/*.{rs,toml}", "/w/src/a/b.rs"));
        assert!(!selects("*.{rs,toml}", "/w/src/a.md"));
    }

    // Verifies: SEARCH-5
    #[test]
    fn search_include_with_a_slash_reads_from_the_directory_or_the_root() {
        assert!(selects("a/*.rs", "/w/src/a/x.rs"), "from the directory");
        assert!(selects("src/a/*.rs", "/w/src/a/x.rs"), "from the root");
        assert!(selects("./a/*.rs", "/w/src/a/x.rs"));
        assert!(selects("/w/src/**/*.rs", "/w/src/a/b/x.rs"), "absolute");
        assert!(
            !selects("a/*.rs", "/w/src/a/b/x.rs"),
            "`*` stays in one component"
        );
        assert!(selects("a/**/*.rs", "/w/src/a/b/x.rs"));
    }

    // Verifies: SEARCH-6
    #[test]
    fn search_include_leaning_on_missing_syntax_is_named() {
        let named = |glob: &str| {
            Include::compile(glob)
                .expect("compiles")
                .advice()
                .join("\n")
        };
        assert!(named("*.rs|*.toml").contains("`|`"));
        assert!(named("!*.md").contains("leading `!`"));
        assert!(named("@(a|b).rs").contains("extended globbing"));
        assert!(named("*.rs,*.toml").contains("`,` outside braces"));
        assert!(named("src**/*.rs").contains("`**`"));
        assert!(named("**/*.{rs,toml}").is_empty());
        assert!(named("src/**").is_empty());
    }
}
