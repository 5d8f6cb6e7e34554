//! The pattern language of `search`, checked here and matched by ripgrep's own line-oriented
//! searcher (`grep-searcher` over a `grep-regex` matcher), and the loop that finds the matching
//! lines of a file.
//!
//! The engine never backtracks: matching costs the length of the text times the size of the
//! compiled pattern, whatever the pattern is, and the size is bounded here by a cap on each
//! pattern's length, on how many patterns a list holds, on nesting, and on the compiled program.
//! What is refused is refused by name before anything is read: backreferences and lookaround
//! (neither can be matched without backtracking), named groups, and every flag but `i`. Counted
//! repetition is not refused but absent: `{` and `}` are ordinary characters, escaped before the
//! pattern reaches the engine, because nesting two counted repetitions multiplies the states a
//! short pattern expands to.
//!
//! The matcher is built with `\n` as its line terminator, so no match can contain a line break:
//! `\s` and `[^x]` lose `\n`, and a pattern that can only match by crossing a line is refused.
//! `\A` and `\z` are written as `^` and `$` for it, which on one line mean the same. The searcher
//! then finds candidate lines with the matcher's literal prefilters and confirms each on its
//! line, as ripgrep does.

use std::ops::ControlFlow;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{Searcher, SearcherBuilder, Sink, SinkMatch};
use regex::bytes::RegexBuilder;
use regex_syntax::ast::{self, AssertionKind, Ast, ErrorKind, Flag, FlagsItemKind, GroupKind};

use crate::paths::control_pictures;

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
    #[error(
        "pattern `{pattern}` matches a line break, which no search result can hold: each match lies within one line, so search for one line's text"
    )]
    LineBreak { pattern: String },
    #[error("pattern `{pattern}` is not a regular expression this engine reads: {reason}")]
    Syntax { pattern: String, reason: String },
}

/// One or more patterns compiled into one expression: a line matches if any of them does.
#[derive(Clone, Debug)]
pub struct Pattern {
    matcher: RegexMatcher,
}

/// The searcher one thread reuses for every file it searches: it owns ripgrep's line buffer, which
/// is worth allocating once rather than per file.
pub struct LineSearcher(Searcher);

impl Default for LineSearcher {
    fn default() -> LineSearcher {
        // Lines are not numbered as they are searched: numbering every match costs a count of the
        // line breaks before each, which a search that shows a page of its matches and counts
        // the rest does not need. [`LineNumbers`] numbers the lines that are shown.
        LineSearcher(SearcherBuilder::new().line_number(false).build())
    }
}

/// Numbers lines of one text from where they start, counting line breaks only up to the starts
/// asked for; the starts are asked for in increasing order, so a text is counted once at most.
#[derive(Clone, Copy, Debug)]
pub struct LineNumbers {
    /// How far the line breaks have been counted.
    counted: usize,
    /// The number of the line at `counted`, from 1.
    line: usize,
}

impl Default for LineNumbers {
    fn default() -> LineNumbers {
        LineNumbers {
            counted: 0,
            line: 1,
        }
    }
}

impl LineNumbers {
    /// The 1-based number of the line of `text` that starts at `start`, a start no earlier than
    /// the one asked for before.
    pub fn at(&mut self, text: &[u8], start: usize) -> usize {
        let upto = start.min(text.len());
        if let Some(between) = text.get(self.counted..upto) {
            self.line += memchr::memchr_iter(b'\n', between).count();
            self.counted = upto;
        }
        self.line
    }
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
        let mut line_branches = Vec::with_capacity(patterns.len());
        for pattern in patterns {
            let checked = check(pattern.as_ref())?;
            branches.push(format!("(?:{})", checked.rewritten));
            line_branches.push(format!("(?:{})", checked.per_line));
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
        // The regex crate reads the pattern as written first: its errors name what is wrong in
        // the person's terms, and its size cap is the one the refusal speaks of.
        RegexBuilder::new(&source)
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
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(!case_sensitive)
            .multi_line(true)
            .line_terminator(Some(b'\n'))
            .size_limit(PROGRAM_LIMIT)
            .dfa_size_limit(DFA_LIMIT)
            .nest_limit(MAX_NESTING + 1)
            .build(&line_branches.join("|"))
            .map_err(|e| match e.kind() {
                grep_regex::ErrorKind::NotAllowed(_) => {
                    PatternError::LineBreak { pattern: shown() }
                }
                _ => PatternError::Syntax {
                    pattern: shown(),
                    reason: one_line(&e.to_string()),
                },
            })?;
        Ok(Pattern { matcher })
    }

    /// Calls `found` with the 1-based number and the text of each line of `text` that matches,
    /// in order, until it breaks. Lines end at `\n`, which is not part of the line; a final line
    /// without one is a line, and the empty remainder after a final `\n` is not.
    pub fn each_matching_line(
        &self,
        text: &[u8],
        found: impl FnMut(usize, &[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.each_matching_line_with(&mut LineSearcher::default(), text, found)
    }

    /// [`Pattern::each_matching_line`] with a searcher the caller keeps from file to file.
    pub fn each_matching_line_with(
        &self,
        searcher: &mut LineSearcher,
        text: &[u8],
        mut found: impl FnMut(usize, &[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut numbers = LineNumbers::default();
        self.each_matching_line_at(searcher, text, |range| {
            let line = numbers.at(text, range.start);
            found(line, text.get(range).unwrap_or_default())
        })
    }

    /// As [`Pattern::each_matching_line_with`], giving each matching line as the range of `text`
    /// it spans (its line break left out), unnumbered, rather than as a numbered copy: a caller
    /// that shows only some of the lines cuts and numbers those ([`LineNumbers`]) and merely
    /// counts the rest.
    pub fn each_matching_line_at(
        &self,
        searcher: &mut LineSearcher,
        text: &[u8],
        mut found: impl FnMut(std::ops::Range<usize>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut sink = Lines {
            found: &mut found,
            stopped: false,
        };
        // Searching a slice in memory fails only if the sink does, and this one never does.
        let _ = searcher.0.search_slice(&self.matcher, text, &mut sink);
        if sink.stopped {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    /// Whether one line matches.
    pub fn is_match(&self, line: &[u8]) -> bool {
        self.matcher.is_match(line).unwrap_or(false)
    }
}

/// The searcher's sink: each matching line as the range of the searched text it spans without
/// its line break.
struct Lines<'f, F> {
    found: &'f mut F,
    stopped: bool,
}

impl<F: FnMut(std::ops::Range<usize>) -> ControlFlow<()>> Sink for Lines<'_, F> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        // The searcher is not in multi-line mode, so each match it hands over is one line; a
        // slice is searched in place, so the offset is into the text given.
        let start = usize::try_from(found.absolute_byte_offset()).unwrap_or(usize::MAX);
        let line = found.bytes();
        let end = start.saturating_add(line.len() - usize::from(line.ends_with(b"\n")));
        if (self.found)(start..end).is_break() {
            self.stopped = true;
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let empty = text.is_empty();
    body.split(|&b| b == b'\n').filter(move |_| !empty)
}

struct Checked {
    /// The pattern with its braces escaped, as the regex crate reads it.
    rewritten: String,
    /// The same with `\A` and `\z` written as `^` and `$`, as the line matcher reads it.
    per_line: String,
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
    let mut anchors = Vec::new();
    visit(&tree, &mut anchors).map_err(|refusal| refusal.into_error(shown()))?;
    // Spans come from the parse of `rewritten`, in the order met; spliced from the last back.
    anchors.sort_unstable_by_key(|(span, _)| std::cmp::Reverse(span.start.offset));
    let mut per_line = rewritten.clone();
    for (span, with) in anchors {
        per_line.replace_range(span.start.offset..span.end.offset, with);
    }
    Ok(Checked {
        rewritten,
        per_line,
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
/// The anchors to the text's ends (`\A`, `\z`) are collected with the line anchor each becomes.
fn visit(node: &Ast, anchors: &mut Vec<(ast::Span, &'static str)>) -> Result<(), Refusal> {
    match node {
        Ast::Flags(set) => flags(&set.flags),
        Ast::Assertion(a) => {
            match a.kind {
                AssertionKind::StartText => anchors.push((a.span, "^")),
                AssertionKind::EndText => anchors.push((a.span, "$")),
                _ => {}
            }
            Ok(())
        }
        Ast::Repetition(r) => visit(&r.ast, anchors),
        Ast::Group(g) => {
            match &g.kind {
                GroupKind::CaptureName { .. } => return Err(Refusal::NamedGroup),
                GroupKind::NonCapturing(f) => flags(f)?,
                GroupKind::CaptureIndex(_) => {}
            }
            visit(&g.ast, anchors)
        }
        Ast::Alternation(a) => a.asts.iter().try_for_each(|n| visit(n, anchors)),
        Ast::Concat(c) => c.asts.iter().try_for_each(|n| visit(n, anchors)),
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

    // Verifies: SEARCH-2, SEARCH-4
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
        for crossing in [r"a\nb", r"[\n]", "x\ny"] {
            assert!(
                refusal(crossing).contains("matches a line break"),
                "{crossing}: {}",
                refusal(crossing)
            );
        }
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
