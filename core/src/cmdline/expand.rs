//! The expansions a compiled line keeps: braces, a leading `~`, and globs matched against the
//! directory listings an [`Environment`] gives.
//!
//! Each acts only on unquoted characters, in the shell's order: braces first, then the `~`, then
//! globs. A glob matches one path segment at a time (`*`, `?`, `[…]`), `**` alone as a segment
//! matches any number of directories, and a name starting with `.` is matched only by a pattern
//! that writes the dot. Matching walks the pattern and the name once with a single remembered
//! `*`, so no pattern costs more than the name's length times its own.

use std::path::{Path, PathBuf};

use super::environment::Environment;
use super::lex::Char;

/// Most words braces and globs may produce across one line, and most matches one glob may have.
pub const EXPANSION_LIMIT: usize = 1000;
/// Most directory listings one line's globs may read.
pub const LISTING_LIMIT: usize = 10_000;

/// Why a brace expansion stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooManyWords;

/// Expands the braces of `word`: `a{b,c}d` is `abd acd`, `{1..3}` is `1 2 3`, `{a..c}` is
/// `a b c`, with an optional step (`{0..10..5}`) and zero padding kept (`{01..10}`). A brace
/// without a comma or a sequence inside it is literal (`{}`, `{a}`), as is one never closed.
/// Adds to `produced` the words made, failing past [`EXPANSION_LIMIT`].
pub(crate) fn braces(
    word: &[Char],
    keep_empty: bool,
    produced: &mut usize,
) -> Result<Vec<Vec<Char>>, TooManyWords> {
    let mut out = Vec::new();
    expand_braces(word.to_vec(), &mut out, produced)?;
    if !keep_empty {
        out.retain(|word| !word.is_empty());
    }
    Ok(out)
}

/// Expands a word's braces, first brace first, in a loop over a stack of words still holding
/// braces (not by recursion: a line may hold thousands of them). Every brace expanded counts
/// against the line's budget, one holding a single word too, so the work is bounded by
/// [`EXPANSION_LIMIT`] steps over a word within the line's length.
fn expand_braces(
    word: Vec<Char>,
    out: &mut Vec<Vec<Char>>,
    produced: &mut usize,
) -> Result<(), TooManyWords> {
    let mut pending = vec![word];
    while let Some(word) = pending.pop() {
        let Some((open, close, alternatives)) = find_brace(&word) else {
            out.push(word);
            continue;
        };
        *produced += alternatives.len().max(2) - 1;
        if *produced > EXPANSION_LIMIT
            || out.len() + pending.len() + alternatives.len() > EXPANSION_LIMIT
        {
            return Err(TooManyWords);
        }
        for alternative in alternatives.into_iter().rev() {
            let mut next = word[..open].to_vec();
            next.extend(alternative);
            next.extend_from_slice(&word[close + 1..]);
            pending.push(next);
        }
    }
    Ok(())
}

fn bare(c: &Char, ch: char) -> bool {
    !c.quoted && c.ch == ch
}

/// The first brace of `word` that expands: where it opens and closes, and its alternatives.
/// Braces are paired in one pass with a stack, so a line of unmatched `{` costs its length once.
fn find_brace(word: &[Char]) -> Option<(usize, usize, Vec<Vec<Char>>)> {
    // Each open brace: where it is and where its top-level commas are.
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
    // Each closed pair that expands, by where it opens.
    let mut best: Option<(usize, usize, Vec<usize>)> = None;
    for (index, c) in word.iter().enumerate() {
        if bare(c, '{') {
            open.push((index, Vec::new()));
        } else if bare(c, ',') {
            if let Some((_, commas)) = open.last_mut() {
                commas.push(index);
            }
        } else if bare(c, '}')
            && let Some((start, commas)) = open.pop()
        {
            let expands = !commas.is_empty() || sequence(&word[start + 1..index]).is_some();
            if expands && best.as_ref().is_none_or(|(first, _, _)| start < *first) {
                best = Some((start, index, commas));
            }
        }
    }
    let (start, close, commas) = best?;
    if commas.is_empty() {
        let items = sequence(&word[start + 1..close])?;
        let alternatives = items
            .into_iter()
            .map(|item| item.chars().map(|ch| Char { ch, quoted: true }).collect())
            .collect();
        return Some((start, close, alternatives));
    }
    let mut alternatives = Vec::new();
    let mut from = start + 1;
    for comma in commas.into_iter().chain(std::iter::once(close)) {
        alternatives.push(word[from..comma].to_vec());
        from = comma + 1;
    }
    Some((start, close, alternatives))
}

/// The items of a sequence brace's inside (`1..5`, `a..e`, `0..10..2`), if it is one. A sequence
/// longer than the expansion limit is cut to one item past it, so the caller refuses it without
/// building it.
fn sequence(inside: &[Char]) -> Option<Vec<String>> {
    // Two numbers and a step never need more; the bound keeps nested braces linear.
    if inside.len() > 64 || inside.iter().any(|c| c.quoted) {
        return None;
    }
    let text: String = inside.iter().map(|c| c.ch).collect();
    let parts: Vec<&str> = text.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [from, to] => (*from, *to, None),
        [from, to, step] => (*from, *to, Some(*step)),
        _ => return None,
    };
    let step = match step {
        Some(step) => step.parse::<i64>().ok()?.unsigned_abs().max(1),
        None => 1,
    };
    let cap = EXPANSION_LIMIT + 1;
    if let (Ok(start), Ok(end)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let padded = |text: &str| {
            let digits = text.trim_start_matches('-');
            digits.len() > 1 && digits.starts_with('0')
        };
        let width = if padded(from) || padded(to) {
            from.len().max(to.len())
        } else {
            0
        };
        let mut items = Vec::new();
        let mut value = i128::from(start);
        let step = i128::from(step);
        let end = i128::from(end);
        while items.len() < cap {
            let number = if value < 0 {
                format!("-{:0>width$}", -value, width = width.saturating_sub(1))
            } else {
                format!("{value:0>width$}")
            };
            items.push(number);
            if value == end {
                break;
            }
            if start as i128 <= end {
                value += step;
                if value > end {
                    break;
                }
            } else {
                value -= step;
                if value < end {
                    break;
                }
            }
        }
        return Some(items);
    }
    let letter = |text: &str| {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as u32),
            _ => None,
        }
    };
    let (start, end) = (letter(from)?, letter(to)?);
    let step = u32::try_from(step).unwrap_or(u32::MAX);
    let mut items = Vec::new();
    let mut value = start;
    loop {
        items.push(char::from_u32(value)?.to_string());
        if value == end || items.len() >= cap {
            break;
        }
        if start <= end {
            value = value.checked_add(step)?;
            if value > end {
                break;
            }
        } else {
            match value.checked_sub(step) {
                Some(next) if next >= end => value = next,
                _ => break,
            }
        }
    }
    Some(items)
}

/// Why a `~` could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TildeError {
    /// `~name`, `~+` and the like: someone else's home or the shell's directory stack.
    Other,
    /// A `~` with no home directory to stand for.
    NoHome,
}

/// Replaces a leading unquoted `~` (alone, or before a `/`) with the home directory. A `~`
/// followed by anything else is refused; a `~` that is quoted, or whose word up to the first `/`
/// holds quoting, is literal. `stops` ends the prefix at `:` too, for assignment values.
pub(crate) fn tilde(
    word: &[Char],
    home: Option<&Path>,
    stops_at_colon: bool,
) -> Result<Vec<Char>, TildeError> {
    let Some(first) = word.first() else {
        return Ok(Vec::new());
    };
    if !bare(first, '~') {
        return Ok(word.to_vec());
    }
    let end = word
        .iter()
        .position(|c| c.ch == '/' || (stops_at_colon && bare(c, ':')))
        .unwrap_or(word.len());
    if word[..end].iter().any(|c| c.quoted) {
        return Ok(word.to_vec());
    }
    if end > 1 {
        return Err(TildeError::Other);
    }
    let home = home.and_then(Path::to_str).ok_or(TildeError::NoHome)?;
    let mut out: Vec<Char> = home.chars().map(|ch| Char { ch, quoted: true }).collect();
    out.extend_from_slice(&word[1..]);
    Ok(out)
}

/// One token of a segment pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Literal(char),
    One,
    Any,
    Class {
        negated: bool,
        items: Vec<ClassItem>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum ClassItem {
    Char(char),
    Range(char, char),
    Named(String),
}

/// One `/`-separated piece of a word: literal text or a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Pattern(Vec<Token>),
    /// `**` alone: any number of directories.
    Tree,
}

fn segments(word: &[Char]) -> Vec<Segment> {
    word.split(|c| c.ch == '/')
        .map(|piece| {
            if piece.len() == 2 && piece.iter().all(|c| bare(c, '*')) {
                return Segment::Tree;
            }
            let tokens = pattern(piece);
            if tokens.iter().all(|t| matches!(t, Token::Literal(_))) {
                Segment::Literal(piece.iter().map(|c| c.ch).collect())
            } else {
                Segment::Pattern(tokens)
            }
        })
        .collect()
}

/// Whether the word holds an unquoted glob character that makes it a pattern.
pub(crate) fn is_glob(word: &[Char]) -> bool {
    segments(word)
        .iter()
        .any(|segment| !matches!(segment, Segment::Literal(_)))
}

/// Longest bracket expression read, in characters. A longer one matches nothing: reading it is
/// the only step whose cost could grow with the square of the line.
const CLASS_LIMIT: usize = 256;

fn pattern(piece: &[Char]) -> Vec<Token> {
    // Whether an unquoted `]` comes at or after each index, so a `[` that can never close is
    // known to be literal without reading the rest of the piece.
    let mut closes_after = vec![false; piece.len() + 1];
    for index in (0..piece.len()).rev() {
        closes_after[index] = closes_after[index + 1] || bare(&piece[index], ']');
    }
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < piece.len() {
        let c = piece[index];
        if c.quoted {
            tokens.push(Token::Literal(c.ch));
            index += 1;
            continue;
        }
        match c.ch {
            '*' => {
                if tokens.last() != Some(&Token::Any) {
                    tokens.push(Token::Any);
                }
                index += 1;
            }
            '?' => {
                tokens.push(Token::One);
                index += 1;
            }
            '[' if !closes_after[index + 1] => {
                tokens.push(Token::Literal('['));
                index += 1;
            }
            '[' => match class(piece, index) {
                Some((token, next)) => {
                    tokens.push(token);
                    index = next;
                }
                None => {
                    tokens.push(Token::Literal('['));
                    index += 1;
                }
            },
            other => {
                tokens.push(Token::Literal(other));
                index += 1;
            }
        }
    }
    tokens
}

/// A bracket expression starting at `open`, and the index after it; `None` when it never closes
/// (then the `[` is literal, as in the shell).
fn class(piece: &[Char], open: usize) -> Option<(Token, usize)> {
    let mut index = open + 1;
    let negated = piece
        .get(index)
        .is_some_and(|c| bare(c, '!') || bare(c, '^'));
    if negated {
        index += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        if index - open > CLASS_LIMIT {
            let nothing = Token::Class {
                negated: false,
                items: Vec::new(),
            };
            return Some((nothing, piece.len()));
        }
        let c = *piece.get(index)?;
        if bare(&c, ']') && !first {
            return Some((Token::Class { negated, items }, index + 1));
        }
        first = false;
        if bare(&c, '[') && piece.get(index + 1).is_some_and(|c| bare(c, ':')) {
            let rest = &piece[index + 2..];
            if let Some(end) = rest
                .windows(2)
                .position(|pair| bare(&pair[0], ':') && bare(&pair[1], ']'))
            {
                items.push(ClassItem::Named(rest[..end].iter().map(|c| c.ch).collect()));
                index += 2 + end + 2;
                continue;
            }
        }
        let is_range = piece.get(index + 1).is_some_and(|c| bare(c, '-'))
            && piece.get(index + 2).is_some_and(|c| !bare(c, ']'));
        if is_range {
            let last = piece[index + 2].ch;
            items.push(ClassItem::Range(c.ch, last));
            index += 3;
        } else {
            items.push(ClassItem::Char(c.ch));
            index += 1;
        }
    }
}

fn class_matches(negated: bool, items: &[ClassItem], ch: char) -> bool {
    let hit = items.iter().any(|item| match item {
        ClassItem::Char(c) => *c == ch,
        ClassItem::Range(from, to) => (*from..=*to).contains(&ch),
        ClassItem::Named(name) => match name.as_str() {
            "alpha" => ch.is_alphabetic(),
            "digit" => ch.is_ascii_digit(),
            "alnum" => ch.is_alphanumeric(),
            "upper" => ch.is_uppercase(),
            "lower" => ch.is_lowercase(),
            "space" => ch.is_whitespace(),
            "blank" => ch == ' ' || ch == '\t',
            "punct" => ch.is_ascii_punctuation(),
            "xdigit" => ch.is_ascii_hexdigit(),
            "cntrl" => ch.is_control(),
            "print" => !ch.is_control(),
            "graph" => !ch.is_control() && !ch.is_whitespace(),
            "word" => ch.is_alphanumeric() || ch == '_',
            _ => false,
        },
    });
    hit != negated
}

/// Whether `name` matches `tokens`, in one pass that remembers only the last `*`.
fn matches(tokens: &[Token], name: &[char]) -> bool {
    let (mut t, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match tokens.get(t) {
            Some(Token::Any) => {
                star = Some((t, n));
                t += 1;
                continue;
            }
            Some(token) => {
                let hit = match token {
                    Token::Literal(c) => *c == name[n],
                    Token::One => true,
                    Token::Class { negated, items } => class_matches(*negated, items, name[n]),
                    Token::Any => false,
                };
                if hit {
                    t += 1;
                    n += 1;
                    continue;
                }
            }
            None => {}
        }
        match star {
            Some((star_t, star_n)) => {
                t = star_t + 1;
                n = star_n + 1;
                star = Some((star_t, star_n + 1));
            }
            None => return false,
        }
    }
    tokens[t..].iter().all(|token| *token == Token::Any)
}

fn segment_matches(tokens: &[Token], name: &str) -> bool {
    // A hidden name is matched only by a pattern that writes its dot.
    if name.starts_with('.') && tokens.first() != Some(&Token::Literal('.')) {
        return false;
    }
    let chars: Vec<char> = name.chars().collect();
    matches(tokens, &chars)
}

/// Why a glob produced no words.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GlobError {
    NoMatch,
    TooMany,
    TooWide,
}

/// A path reached so far: as it will be written in the argument, and where it is.
struct Candidate {
    shown: String,
    path: PathBuf,
    /// Known to be a directory (`Some(true)`), known not to be, or not looked at (a prefix the
    /// pattern wrote literally).
    is_dir: Option<bool>,
}

fn joined(shown: &str, name: &str) -> String {
    if shown.is_empty() {
        name.to_owned()
    } else if shown.ends_with('/') {
        format!("{shown}{name}")
    } else {
        format!("{shown}/{name}")
    }
}

/// Expands glob words against directory listings, counting listings across the whole line.
pub(crate) struct Globber<'e> {
    env: &'e dyn Environment,
    listings: usize,
}

impl<'e> Globber<'e> {
    pub fn new(env: &'e dyn Environment) -> Self {
        Self { env, listings: 0 }
    }

    fn list(&mut self, path: &Path) -> Result<Vec<super::environment::DirectoryEntry>, GlobError> {
        self.listings += 1;
        if self.listings > LISTING_LIMIT {
            return Err(GlobError::TooWide);
        }
        let mut entries = self.env.list_directory(path).unwrap_or_default();
        entries.retain(|entry| entry.name != "." && entry.name != ".." && !entry.name.is_empty());
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// The paths `word` matches, relative to `base` unless it is absolute, sorted by byte value
    /// and written as the pattern wrote its literal part.
    pub fn expand(&mut self, word: &[Char], base: &Path) -> Result<Vec<String>, GlobError> {
        let segments = segments(word);
        let absolute = word.first().is_some_and(|c| c.ch == '/');
        let mut candidates = vec![if absolute {
            Candidate {
                shown: "/".to_owned(),
                path: PathBuf::from("/"),
                is_dir: None,
            }
        } else {
            Candidate {
                shown: String::new(),
                path: base.to_path_buf(),
                is_dir: None,
            }
        }];
        let segments = if absolute {
            &segments[1..]
        } else {
            &segments[..]
        };
        let mut seen_pattern = false;
        let last = segments.len().saturating_sub(1);
        for (index, segment) in segments.iter().enumerate() {
            let mut next = Vec::new();
            match segment {
                Segment::Literal(text) if !seen_pattern => {
                    for candidate in candidates {
                        next.push(Candidate {
                            shown: if text.is_empty() {
                                format!("{}/", candidate.shown)
                            } else {
                                joined(&candidate.shown, text)
                            },
                            path: candidate.path.join(text),
                            is_dir: None,
                        });
                    }
                }
                Segment::Literal(text) => {
                    for candidate in candidates {
                        if candidate.is_dir != Some(true) {
                            continue;
                        }
                        if text.is_empty() {
                            if !candidate.shown.ends_with('/') {
                                next.push(Candidate {
                                    shown: format!("{}/", candidate.shown),
                                    ..candidate
                                });
                            } else {
                                next.push(candidate);
                            }
                        } else if text == "." || text == ".." {
                            next.push(Candidate {
                                shown: joined(&candidate.shown, text),
                                path: candidate.path.join(text),
                                is_dir: Some(true),
                            });
                        } else if let Some(entry) = self
                            .list(&candidate.path)?
                            .into_iter()
                            .find(|entry| entry.name == *text)
                        {
                            next.push(Candidate {
                                shown: joined(&candidate.shown, text),
                                path: candidate.path.join(text),
                                is_dir: Some(entry.is_dir),
                            });
                        }
                    }
                }
                Segment::Pattern(tokens) => {
                    seen_pattern = true;
                    for candidate in candidates {
                        if candidate.is_dir == Some(false) {
                            continue;
                        }
                        for entry in self.list(&candidate.path)? {
                            if segment_matches(tokens, &entry.name) {
                                next.push(Candidate {
                                    shown: joined(&candidate.shown, &entry.name),
                                    path: candidate.path.join(&entry.name),
                                    is_dir: Some(entry.is_dir),
                                });
                            }
                        }
                    }
                }
                Segment::Tree => {
                    seen_pattern = true;
                    let at_end = index == last;
                    for candidate in candidates {
                        if candidate.is_dir == Some(false) {
                            continue;
                        }
                        if !at_end {
                            next.push(Candidate {
                                shown: candidate.shown.clone(),
                                path: candidate.path.clone(),
                                is_dir: Some(true),
                            });
                        }
                        self.descend(&candidate, at_end, &mut next)?;
                    }
                }
            }
            if seen_pattern && next.len() > EXPANSION_LIMIT * 10 {
                return Err(GlobError::TooMany);
            }
            candidates = next;
        }
        let mut out: Vec<String> = candidates
            .into_iter()
            .map(|candidate| candidate.shown)
            .collect();
        out.sort();
        out.dedup();
        if out.is_empty() {
            return Err(GlobError::NoMatch);
        }
        if out.len() > EXPANSION_LIMIT {
            return Err(GlobError::TooMany);
        }
        Ok(out)
    }

    /// Everything under `from` that is not hidden: the directories it may cross, or every entry
    /// when `everything`. A link is never crossed, so it is reported only as an entry.
    fn descend(
        &mut self,
        from: &Candidate,
        everything: bool,
        out: &mut Vec<Candidate>,
    ) -> Result<(), GlobError> {
        let mut stack = vec![(from.shown.clone(), from.path.clone())];
        while let Some((shown, path)) = stack.pop() {
            for entry in self.list(&path)? {
                if entry.name.starts_with('.') {
                    continue;
                }
                let child = Candidate {
                    shown: joined(&shown, &entry.name),
                    path: path.join(&entry.name),
                    is_dir: Some(entry.is_dir),
                };
                let crossable = entry.is_dir && !entry.is_link;
                if crossable {
                    stack.push((child.shown.clone(), child.path.clone()));
                }
                if everything || crossable {
                    out.push(child);
                }
                if out.len() > EXPANSION_LIMIT * 10 {
                    return Err(GlobError::TooMany);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unquoted(text: &str) -> Vec<Char> {
        text.chars().map(|ch| Char { ch, quoted: false }).collect()
    }

    fn text(word: &[Char]) -> String {
        word.iter().map(|c| c.ch).collect()
    }

    fn brace_words(word: &str) -> Vec<String> {
        let mut produced = 0;
        braces(&unquoted(word), false, &mut produced)
            .unwrap()
            .iter()
            .map(|w| text(w))
            .collect()
    }

    // Verifies: RUN-6
    #[test]
    fn run_braces_expand_like_the_shell() {
        assert_eq!(brace_words("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(brace_words("{a,b{c,d}}"), ["a", "bc", "bd"]);
        assert_eq!(brace_words("{a}{b,c}"), ["{a}b", "{a}c"]);
        assert_eq!(brace_words("{}"), ["{}"]);
        assert_eq!(brace_words("x{,}"), ["x", "x"]);
        assert_eq!(brace_words("{1..3}"), ["1", "2", "3"]);
        assert_eq!(brace_words("{3..1}"), ["3", "2", "1"]);
        assert_eq!(brace_words("{08..11}"), ["08", "09", "10", "11"]);
        assert_eq!(brace_words("{0..10..5}"), ["0", "5", "10"]);
        assert_eq!(brace_words("{-1..1}"), ["-1", "0", "1"]);
        assert_eq!(brace_words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(brace_words("{1..a}"), ["{1..a}"]);
        assert_eq!(brace_words("{a,b"), ["{a,b"]);
        let mut produced = 0;
        assert_eq!(
            braces(&unquoted("{1..5000}"), false, &mut produced),
            Err(TooManyWords)
        );
    }

    // Verifies: RUN-7
    #[test]
    fn run_segment_patterns_match_in_one_pass() {
        let tokens = pattern(&unquoted("*.rs"));
        assert!(segment_matches(&tokens, "main.rs"));
        assert!(!segment_matches(&tokens, "main.rsx"));
        assert!(!segment_matches(&tokens, ".hidden.rs"));
        assert!(segment_matches(&pattern(&unquoted(".*")), ".hidden"));
        assert!(segment_matches(&pattern(&unquoted("[!a-c]?")), "dx"));
        assert!(!segment_matches(&pattern(&unquoted("[!a-c]?")), "bx"));
        assert!(segment_matches(&pattern(&unquoted("[[:digit:]]x")), "7x"));
        assert!(segment_matches(&pattern(&unquoted("[]a]")), "]"));
        assert!(segment_matches(&pattern(&unquoted("a*b*c")), "aXbYbZc"));
        assert!(!is_glob(&unquoted("a[b")));
        // A pattern that would take exponential time with naive backtracking.
        let long = "a".repeat(200);
        assert!(!segment_matches(
            &pattern(&unquoted(&"*a".repeat(50))),
            &format!("{long}b")
        ));
    }
}
