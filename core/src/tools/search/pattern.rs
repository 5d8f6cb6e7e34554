//! The pattern language of `search`, compiled onto the `regex` crate, and the loop that finds the
//! matching lines of a file.
//!
//! The engine never backtracks: matching costs the length of the text times the size of the
//! compiled pattern, whatever the pattern is, and the size is bounded here by a cap on each
//! pattern's length, on how many patterns a list holds, on nesting, and on the compiled program.
//! What is refused is refused by name before anything is read: backreferences and lookaround
//! (neither can be matched without backtracking), named groups, and every flag but `i`. Counted
//! repetition is not refused but absent: `{` and `}` are ordinary characters, escaped before the
//! pattern reaches the engine, because nesting two counted repetitions multiplies the states a
//! short pattern expands to.

use std::ops::ControlFlow;

use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::ast::{self, AssertionKind, Ast, ErrorKind, Flag, FlagsItemKind, GroupKind};

use crate::tools::control_pictures;

/// Longest pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 1000;
/// Most patterns one list may hold.
pub const MAX_PATTERNS: usize = 32;
/// Deepest nesting of groups, classes and repetitions in one pattern.
pub const MAX_NESTING: u32 = 32;
/// Largest compiled program, in bytes, before a pattern is refused as too large.
const PROGRAM_LIMIT: usize = 2 << 20;
/// Cache the lazy DFA may fill per search before it falls back to the slower simulation.
const DFA_LIMIT: usize = 4 << 20;

/// Why a pattern was not compiled. Each message names the pattern and what is wrong with it; none
/// of them depends on anything read from the workspace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("a search needs a pattern; an empty list matches nothing")]
    NoPattern,
    #[error("{given} patterns were given; a list holds at most {MAX_PATTERNS}")]
    TooMany { given: usize },
    #[error(
        "pattern `{pattern}` is {chars} characters long; a pattern may be at most {MAX_PATTERN_CHARS}"
    )]
    TooLong { pattern: String, chars: usize },
    #[error(
        "pattern `{pattern}` nests groups, classes or repetitions more than {MAX_NESTING} deep"
    )]
    TooDeep { pattern: String },
    #[error(
        "pattern `{pattern}` compiles to more than the engine allows; split it or make it narrower"
    )]
    TooLarge { pattern: String },
    #[error(
        "pattern `{pattern}` uses a backreference, which is not supported: matching one needs backtracking"
    )]
    Backreference { pattern: String },
    #[error(
        "pattern `{pattern}` uses lookaround ((?=, (?!, (?<=, (?<!), which is not supported: match the surrounding text instead"
    )]
    Lookaround { pattern: String },
    #[error(
        "pattern `{pattern}` uses a named group, which is not supported: captures are never extracted, so write (...) or (?:...)"
    )]
    NamedGroup { pattern: String },
    #[error(
        "pattern `{pattern}` uses the flag `{flag}`, which is not supported: only i is (as (?i), (?-i), (?i:...) or case_sensitive)"
    )]
    Flag { pattern: String, flag: char },
    #[error(
        "pattern `{pattern}` opens a group with `(?{next}`, a form this engine does not have: the groups are (...), (?:...), (?i) and (?-i)"
    )]
    GroupForm { pattern: String, next: String },
    #[error("pattern `{pattern}` is not a regular expression this engine reads: {reason}")]
    Syntax { pattern: String, reason: String },
}

/// One or more patterns compiled into one expression: a line matches if any of them does.
#[derive(Clone, Debug)]
pub struct Pattern {
    regex: Regex,
    /// Whether the whole text may be searched at once and each hit checked against its line. Not
    /// where the pattern anchors to the start or end of the text (`\A`, `\z`): on a whole file
    /// those would mean the file's ends rather than each line's.
    whole_text: bool,
    /// Whether the pattern holds a Unicode word boundary (`\b`, `\B`). The regex crate's lazy
    /// DFA cannot decide one next to a non-ASCII byte and hands the rest of the haystack to a
    /// much slower engine; such a pattern searches runs of ASCII lines whole and each line that
    /// holds a non-ASCII byte alone, so the slow engine only ever sees one line.
    unicode_word: bool,
    /// For such a pattern, a literal every match contains (the longest literal piece of a
    /// pattern that is a sequence), found the way the regex crate finds literals: only the lines
    /// holding it can match, and only they are matched, each alone. The line-oriented searcher
    /// of ripgrep prefilters the same way.
    required: Option<Regex>,
}

impl Pattern {
    /// Compiles a list of patterns as alternation. `case_sensitive` false starts the whole
    /// expression folded, so `(?-i)` inside narrows it; `(?i)` widens from where it is written.
    pub fn compile<S: AsRef<str>>(
        patterns: &[S],
        case_sensitive: bool,
    ) -> Result<Pattern, PatternError> {
        if patterns.is_empty() {
            return Err(PatternError::NoPattern);
        }
        if patterns.len() > MAX_PATTERNS {
            return Err(PatternError::TooMany {
                given: patterns.len(),
            });
        }
        let mut branches = Vec::with_capacity(patterns.len());
        let mut whole_text = true;
        for pattern in patterns {
            let checked = check(pattern.as_ref())?;
            whole_text &= !checked.anchors_to_text;
            branches.push(format!("(?:{})", checked.rewritten));
        }
        let source = branches.join("|");
        let shown = || {
            control_pictures(
                &patterns
                    .iter()
                    .map(AsRef::as_ref)
                    .collect::<Vec<_>>()
                    .join("`, `"),
            )
        };
        let regex = RegexBuilder::new(&source)
            .case_insensitive(!case_sensitive)
            .multi_line(true)
            .size_limit(PROGRAM_LIMIT)
            .dfa_size_limit(DFA_LIMIT)
            // One level more than a single pattern may use, for the group each is wrapped in.
            .nest_limit(MAX_NESTING + 1)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => PatternError::TooLarge { pattern: shown() },
                other => PatternError::Syntax {
                    pattern: shown(),
                    reason: one_line(&other.to_string()),
                },
            })?;
        // A pattern the engine compiled parses; should it not, the plain path is as correct.
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(!case_sensitive)
            .multi_line(true)
            .nest_limit(MAX_NESTING + 1)
            .build()
            .parse(&source)
            .ok();
        let unicode_word = hir
            .as_ref()
            .is_some_and(|hir| hir.properties().look_set().contains_word_unicode());
        let required = hir
            .as_ref()
            .filter(|_| unicode_word)
            .and_then(required_literal)
            .and_then(|literal| Regex::new(&regex::escape(&literal)).ok());
        Ok(Pattern {
            regex,
            whole_text,
            unicode_word,
            required,
        })
    }

    /// Calls `found` with the 1-based number and the text of each line of `text` that matches,
    /// in order, until it breaks. Lines end at `\n`, which is not part of the line; a final line
    /// without one is a line, and the empty remainder after a final `\n` is not.
    pub fn each_matching_line(
        &self,
        text: &[u8],
        mut found: impl FnMut(usize, &[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if !self.whole_text {
            for (index, line) in lines(text).enumerate() {
                if self.regex.is_match(line) {
                    found(index + 1, line)?;
                }
            }
            return ControlFlow::Continue(());
        }
        if let Some(required) = &self.required {
            return self.each_candidate_line(text, required, &mut found);
        }
        if !self.unicode_word {
            return self.each_matching_line_whole(text, 1, &mut found);
        }
        // Runs of ASCII lines are searched whole; a line holding a non-ASCII byte is matched
        // alone. Either way a line matches exactly when it matches alone.
        let mut start = 0;
        let mut line_number = 1;
        while start < text.len() {
            let Some(wide) = text[start..].iter().position(|b| !b.is_ascii()) else {
                return self.each_matching_line_whole(&text[start..], line_number, &mut found);
            };
            let wide = start + wide;
            let line_start = text[start..wide]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(start, |i| start + i + 1);
            let line_end = text[wide..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| wide + i);
            let run = &text[start..line_start];
            self.each_matching_line_whole(run, line_number, &mut found)?;
            line_number += count_newlines(run);
            let line = &text[line_start..line_end];
            if self.regex.is_match(line) {
                found(line_number, line)?;
            }
            line_number += 1;
            start = line_end + 1;
        }
        ControlFlow::Continue(())
    }

    /// [`Pattern::each_matching_line`] matching alone each line that holds `required`.
    fn each_candidate_line(
        &self,
        text: &[u8],
        required: &Regex,
        found: &mut impl FnMut(usize, &[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut position = 0;
        let mut line_number = 1;
        let mut counted_to = 0;
        while let Some(hit) = required.find_at(text, position) {
            let start = hit.start();
            let line_start = text[position..start]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(position, |i| position + i + 1);
            let line_end = text[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| start + i);
            line_number += count_newlines(&text[counted_to..line_start]);
            counted_to = line_start;
            let line = &text[line_start..line_end];
            if self.regex.is_match(line) {
                found(line_number, line)?;
            }
            if line_end >= text.len() {
                break;
            }
            position = line_end + 1;
        }
        ControlFlow::Continue(())
    }

    /// [`Pattern::each_matching_line`] over `text` searched whole, its first line numbered
    /// `first_line`.
    fn each_matching_line_whole(
        &self,
        text: &[u8],
        first_line: usize,
        found: &mut impl FnMut(usize, &[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        // Search the whole text, then judge each hit by its line: a hit lying inside one line is
        // a match of that line (with multi-line anchors, `^`, `$` and `\b` see the same
        // neighbours either way), and one running past the line's end is checked again on the
        // line alone, since a class such as `[^x]` or `\s` can step over a line break.
        let mut position = 0;
        let mut line_number = first_line;
        let mut counted_to = 0;
        while position < text.len() {
            let Some(hit) = self.regex.find_at(text, position) else {
                break;
            };
            let start = hit.start();
            if start == text.len() && text.last() == Some(&b'\n') {
                break;
            }
            let line_start = text[position..start]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(position, |i| position + i + 1);
            let line_end = text[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| start + i);
            line_number += count_newlines(&text[counted_to..line_start]);
            counted_to = line_start;
            let line = &text[line_start..line_end];
            if hit.end() <= line_end || self.regex.is_match(line) {
                found(line_number, line)?;
            }
            position = line_end + 1;
        }
        ControlFlow::Continue(())
    }

    /// Whether one line matches.
    pub fn is_match(&self, line: &[u8]) -> bool {
        self.regex.is_match(line)
    }
}

/// The longest literal piece of a pattern that is one sequence (captures looked through), when
/// it is at least two bytes and holds no line break: every match of the pattern contains it.
fn required_literal(hir: &regex_syntax::hir::Hir) -> Option<String> {
    use regex_syntax::hir::HirKind;
    let mut hir = hir;
    while let HirKind::Capture(capture) = hir.kind() {
        hir = &capture.sub;
    }
    let pieces = match hir.kind() {
        HirKind::Concat(pieces) => pieces.as_slice(),
        _ => std::slice::from_ref(hir),
    };
    pieces
        .iter()
        .filter_map(|piece| match piece.kind() {
            HirKind::Literal(literal) => std::str::from_utf8(&literal.0).ok(),
            _ => None,
        })
        .filter(|literal| literal.len() >= 2 && !literal.contains('\n'))
        .max_by_key(|literal| literal.len())
        .map(str::to_owned)
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let empty = text.is_empty();
    body.split(|&b| b == b'\n').filter(move |_| !empty)
}

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

struct Checked {
    rewritten: String,
    anchors_to_text: bool,
}

/// Checks one pattern and rewrites its braces as ordinary characters.
fn check(pattern: &str) -> Result<Checked, PatternError> {
    let shown = || control_pictures(pattern);
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(PatternError::TooLong {
            pattern: shown().chars().take(60).chain("…".chars()).collect(),
            chars,
        });
    }
    let rewritten = braces_as_literals(pattern);
    if names_a_backreference(&rewritten) {
        return Err(PatternError::Backreference { pattern: shown() });
    }
    let parsed = ast::parse::ParserBuilder::new()
        .nest_limit(MAX_NESTING)
        .build()
        .parse(&rewritten);
    let tree = match parsed {
        Ok(tree) => tree,
        Err(e) => {
            let pattern = shown();
            return Err(match e.kind() {
                ErrorKind::UnsupportedBackreference => PatternError::Backreference { pattern },
                ErrorKind::UnsupportedLookAround => PatternError::Lookaround { pattern },
                ErrorKind::NestLimitExceeded(_) => PatternError::TooDeep { pattern },
                ErrorKind::FlagUnrecognized
                | ErrorKind::FlagUnexpectedEof
                | ErrorKind::FlagDanglingNegation
                    if group_opening(&rewritten, e.span().start.offset).is_some() =>
                {
                    PatternError::GroupForm {
                        next: group_opening(&rewritten, e.span().start.offset).unwrap_or_default(),
                        pattern,
                    }
                }
                ErrorKind::GroupNameInvalid
                | ErrorKind::GroupNameUnexpectedEof
                | ErrorKind::GroupNameEmpty => PatternError::NamedGroup { pattern },
                kind => PatternError::Syntax {
                    pattern,
                    reason: kind.to_string(),
                },
            });
        }
    };
    let mut anchors_to_text = false;
    visit(&tree, &mut anchors_to_text).map_err(|refusal| refusal.into_error(shown()))?;
    Ok(Checked {
        rewritten,
        anchors_to_text,
    })
}

/// Whether the pattern spells a backreference by name (`\k<n>`, `\k'n'`, `\k{n}`, `(?P=n)`),
/// which the parser would otherwise report as an unknown escape or flag.
fn names_a_backreference(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        let named = match c {
            '\\' => chars.next() == Some('k') && matches!(chars.peek(), Some('<' | '\'' | '\\')),
            '(' => chars.clone().take(3).eq("?P=".chars()),
            _ => false,
        };
        if named {
            return true;
        }
    }
    false
}

/// Where a flag error sits just after `(?`, the character that followed it, so the message can
/// name the group form rather than blame a repeat or a flag.
fn group_opening(pattern: &str, offset: usize) -> Option<String> {
    let before = pattern.get(..offset)?;
    let opened = before.rfind("(?")?;
    let after = &pattern[opened + 2..];
    let first = after.chars().next()?;
    // `(?s)` and `(?x:` are flags the engine knows and this tool refuses; they are reported as
    // flags by the visitor. Only a character that is no flag at all is a missing group form.
    if first.is_ascii_alphabetic() || first == '-' || first == ':' || first == ')' {
        return None;
    }
    Some(first.to_string())
}

enum Refusal {
    NamedGroup,
    Flag(char),
}

impl Refusal {
    fn into_error(self, pattern: String) -> PatternError {
        match self {
            Refusal::NamedGroup => PatternError::NamedGroup { pattern },
            Refusal::Flag(flag) => PatternError::Flag { pattern, flag },
        }
    }
}

/// Walks the parsed pattern for the constructs the engine has but this tool refuses. The depth
/// is bounded by the nesting cap the parser enforced.
fn visit(node: &Ast, anchors_to_text: &mut bool) -> Result<(), Refusal> {
    match node {
        Ast::Flags(set) => flags(&set.flags),
        Ast::Assertion(a) => {
            if matches!(a.kind, AssertionKind::StartText | AssertionKind::EndText) {
                *anchors_to_text = true;
            }
            Ok(())
        }
        Ast::Repetition(r) => visit(&r.ast, anchors_to_text),
        Ast::Group(g) => {
            match &g.kind {
                GroupKind::CaptureName { .. } => return Err(Refusal::NamedGroup),
                GroupKind::NonCapturing(f) => flags(f)?,
                GroupKind::CaptureIndex(_) => {}
            }
            visit(&g.ast, anchors_to_text)
        }
        Ast::Alternation(a) => a.asts.iter().try_for_each(|n| visit(n, anchors_to_text)),
        Ast::Concat(c) => c.asts.iter().try_for_each(|n| visit(n, anchors_to_text)),
        Ast::Empty(_)
        | Ast::Literal(_)
        | Ast::Dot(_)
        | Ast::ClassUnicode(_)
        | Ast::ClassPerl(_)
        | Ast::ClassBracketed(_) => Ok(()),
    }
}

fn flags(set: &ast::Flags) -> Result<(), Refusal> {
    for item in &set.items {
        let letter = match item.kind {
            FlagsItemKind::Negation | FlagsItemKind::Flag(Flag::CaseInsensitive) => continue,
            FlagsItemKind::Flag(Flag::MultiLine) => 'm',
            FlagsItemKind::Flag(Flag::DotMatchesNewLine) => 's',
            FlagsItemKind::Flag(Flag::SwapGreed) => 'U',
            FlagsItemKind::Flag(Flag::Unicode) => 'u',
            FlagsItemKind::Flag(Flag::CRLF) => 'R',
            FlagsItemKind::Flag(Flag::IgnoreWhitespace) => 'x',
        };
        return Err(Refusal::Flag(letter));
    }
    Ok(())
}

/// Escapes every `{` and `}` that is not already escaped, so that braces match themselves. The
/// braces of the engine's own escapes (`\p{Greek}`, `\x{41}`, `\u{41}`) are left as they are:
/// those are characters and classes, not counted repetition.
fn braces_as_literals(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push('\\');
                let Some(next) = chars.next() else { break };
                out.push(next);
                if matches!(next, 'p' | 'P' | 'x' | 'u' | 'U') && chars.peek() == Some(&'{') {
                    for inner in chars.by_ref() {
                        out.push(inner);
                        if inner == '}' {
                            break;
                        }
                    }
                }
            }
            '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(text)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matching(patterns: &[&str], case_sensitive: bool, text: &str) -> Vec<(usize, String)> {
        let pattern = Pattern::compile(patterns, case_sensitive).expect("compiles");
        let mut out = Vec::new();
        let _ = pattern.each_matching_line(text.as_bytes(), |n, line| {
            out.push((n, String::from_utf8_lossy(line).into_owned()));
            ControlFlow::Continue(())
        });
        out
    }

    fn numbers(found: &[(usize, String)]) -> Vec<usize> {
        found.iter().map(|(n, _)| *n).collect()
    }

    fn refusal(pattern: &str) -> String {
        Pattern::compile(&[pattern], true)
            .map(|_| ())
            .expect_err("refused")
            .to_string()
    }

    // Verifies: SEARCH-2
    #[test]
    fn search_pattern_braces_are_ordinary_characters() {
        assert_eq!(numbers(&matching(&["a{2}"], true, "aa\na{2}\n")), [2]);
        assert_eq!(numbers(&matching(&["^}$"], true, "{\n}\n")), [2]);
        assert_eq!(numbers(&matching(&[r"\x{41}"], true, "b\nA\n")), [2]);
        assert_eq!(numbers(&matching(&[r"\p{Greek}"], true, "b\nλ\n")), [2]);
        assert_eq!(braces_as_literals(r"a{2,9}\{x\}"), r"a\{2,9\}\{x\}");
    }

    // Verifies: SEARCH-2
    #[test]
    fn search_refusals_name_the_construct() {
        for back in [r"(a)\1", r"(?<n>a)\k<n>", r"(a)\k'n'", "(?P<n>a)(?P=n)"] {
            assert!(
                refusal(back).contains("backreference"),
                "{back}: {}",
                refusal(back)
            );
        }
        for look in ["(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b"] {
            assert!(
                refusal(look).contains("lookaround"),
                "{look}: {}",
                refusal(look)
            );
        }
        for named in ["(?P<n>a)", "(?<n>a)"] {
            assert!(refusal(named).contains("named group"), "{named}");
        }
        for (flagged, letter) in [
            ("(?s)a", 's'),
            ("(?m:a)", 'm'),
            ("(?x)a", 'x'),
            ("(?U)a+", 'U'),
            ("(?-u)a", 'u'),
        ] {
            assert!(
                refusal(flagged).contains(&format!("the flag `{letter}`")),
                "{flagged}: {}",
                refusal(flagged)
            );
        }
        assert!(
            refusal("(?>a)").contains("a form this engine does not have"),
            "{}",
            refusal("(?>a)")
        );
        assert!(refusal(&"a".repeat(MAX_PATTERN_CHARS + 1)).contains("characters long"));
        let deep = format!("{}a{}", "(".repeat(40), ")".repeat(40));
        assert!(refusal(&deep).contains("deep"), "{}", refusal(&deep));
        assert!(
            refusal("(a").contains("not a regular expression"),
            "{}",
            refusal("(a")
        );
        let many = vec!["a"; MAX_PATTERNS + 1];
        assert!(Pattern::compile(&many, true).is_err());
        assert!(Pattern::compile::<&str>(&[], true).is_err());
    }

    // Verifies: SEARCH-3
    #[test]
    fn search_case_is_folded_by_the_engine_and_flags_are_scoped() {
        let text = "Policy\npolicy\nPOLICY\n7\n";
        assert_eq!(numbers(&matching(&["policy"], true, text)), [2]);
        assert_eq!(numbers(&matching(&["policy"], false, text)), [1, 2, 3]);
        assert_eq!(numbers(&matching(&["(?i)policy"], true, text)), [1, 2, 3]);
        assert_eq!(numbers(&matching(&["(?i:p)olicy"], true, text)), [1, 2]);
        assert_eq!(numbers(&matching(&["P(?-i)OLICY"], false, text)), [3]);
        // Folding keeps a negated shorthand negated: \D never becomes \d.
        assert_eq!(numbers(&matching(&[r"(?i)^\D+$"], true, text)), [1, 2, 3]);
        // A line is reported as written, not as it was folded.
        assert_eq!(matching(&["POLICY"], false, "Policy\n")[0].1, "Policy");
    }

    // Verifies: SEARCH-1
    #[test]
    fn search_a_list_of_patterns_is_alternation() {
        let text = "alpha\nbeta\ngamma\n";
        assert_eq!(numbers(&matching(&["^a", "ma$"], true, text)), [1, 3]);
        // A flag in one pattern does not leak into the next.
        assert_eq!(numbers(&matching(&["(?i)ALPHA", "BETA"], true, text)), [1]);
    }

    // Verifies: SEARCH-4
    #[test]
    fn search_matches_never_span_lines_and_anchors_are_per_line() {
        let text = "a\nb\nab\n\nlast";
        assert_eq!(
            numbers(&matching(&[r"a[^x]b"], true, text)),
            Vec::<usize>::new()
        );
        assert_eq!(
            numbers(&matching(&[r"a\sb"], true, text)),
            Vec::<usize>::new()
        );
        assert_eq!(numbers(&matching(&["^$"], true, text)), [4]);
        assert_eq!(numbers(&matching(&["^b"], true, text)), [2]);
        assert_eq!(numbers(&matching(&[r"\Ab"], true, text)), [2]);
        assert_eq!(numbers(&matching(&[r"t\z"], true, text)), [5]);
        assert_eq!(numbers(&matching(&["t$"], true, text)), [5]);
        // Every line of a text ending in a newline, and not the empty rest after it.
        assert_eq!(numbers(&matching(&[""], true, "x\ny\n")), [1, 2]);
        assert_eq!(numbers(&matching(&[""], true, "")), Vec::<usize>::new());
        // A hit that runs past its line is checked on the line alone, and the line can still match.
        assert_eq!(numbers(&matching(&[r"a\s*b"], true, "a\nb ab\n")), [2]);
        assert_eq!(numbers(&matching(&[r"x\s+y|q"], true, "x\ny q\n")), [2]);
    }

    // Verifies: SEARCH-17
    #[test]
    fn word_boundaries_beside_non_ascii_lines_match_as_each_line_alone() {
        let text = "fn get_unchecked(x) {}\n// é panic here\n  // a panic\nnaïve_unchecked\n\
            ünchecked_unchecked é\nplain_unchecked\n// panicé\nlast_unchecked";
        for patterns in [
            &[r"\w+_unchecked\b"][..],
            &[r"^\s*//.*\bpanic"],
            &[r"\bpanic\b", r"é$"],
            &[r"\Bnchecked"],
        ] {
            let pattern = Pattern::compile(patterns, true).expect("compiles");
            assert!(pattern.unicode_word, "{patterns:?}");
            let alone: Vec<(usize, String)> = lines(text.as_bytes())
                .enumerate()
                .filter(|(_, line)| pattern.is_match(line))
                .map(|(i, line)| (i + 1, String::from_utf8_lossy(line).into_owned()))
                .collect();
            assert!(!alone.is_empty(), "{patterns:?}");
            assert_eq!(matching(patterns, true, text), alone, "{patterns:?}");
            let ended = format!("{text}\n");
            assert_eq!(matching(patterns, true, &ended), alone, "{patterns:?}");
        }
        assert_eq!(
            numbers(&matching(&[r"\w+_unchecked\b"], true, "é\nx_unchecked\n")),
            [2]
        );
        assert!(
            !Pattern::compile(&["unsafe"], true)
                .expect("compiles")
                .unicode_word
        );
    }

    // Verifies: SEARCH-4
    #[test]
    fn search_a_pattern_built_to_backtrack_returns() {
        let mut line = "a".repeat(100_000);
        line.push('b');
        assert!(matching(&["(a+)+$"], true, &line).is_empty());
        assert_eq!(matching(&["(a+)+b$"], true, &line).len(), 1);
        assert_eq!(matching(&["(a|aa)+$", "(a*)*b$"], true, &line).len(), 1);
    }
}
