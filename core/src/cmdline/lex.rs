//! The lexer: one command line into words and operators, with every character remembering whether
//! it was quoted.
//!
//! Quote removal happens here, once: a word leaves the lexer as characters, each marked quoted or
//! not, because the later steps (braces, a leading `~`, globs, assignments) act only on unquoted
//! characters. Everything the grammar does not model is refused here with the span of the
//! construct, so a `$` never survives to be mistaken for text.

use std::ops::Range;

use super::refusal::Refusal;

/// One character of a word after quote removal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Char {
    pub ch: char,
    /// Written inside quotes or after a backslash, so it stands for itself.
    pub quoted: bool,
}

/// A word as written: its characters after quote removal and where it sits in the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    pub chars: Vec<Char>,
    /// Whether any quoting was used, so `''` is an empty argument rather than nothing.
    pub quoted: bool,
    pub span: Range<usize>,
}

impl Word {
    /// The text after quote removal.
    pub fn text(&self) -> String {
        self.chars.iter().map(|c| c.ch).collect()
    }

    /// Whether the word is exactly `text`, written without any quoting.
    pub fn is_bare(&self, text: &str) -> bool {
        !self.quoted && self.text() == text
    }
}

/// Which streams an output redirect sends to its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Streams {
    /// `>` and `>>` (also written `1>`).
    Output,
    /// `2>` and `2>>`.
    Error,
    /// `&>` and `&>>`.
    Both,
}

/// A redirect operator as lexed; all but the two duplications take a target word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedirectOperator {
    Input,
    Output { streams: Streams, append: bool },
    ErrorToOutput,
    OutputToError,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operator {
    Pipe,
    And,
    Or,
    Semicolon,
    Open,
    Close,
    Redirect(RedirectOperator),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    Word(Word),
    Operator(Operator, Range<usize>),
}

impl Token {
    pub fn span(&self) -> Range<usize> {
        match self {
            Token::Word(word) => word.span.clone(),
            Token::Operator(_, span) => span.clone(),
        }
    }
}

/// Longest line compiled, in bytes. A plan from a longer line is one nobody reads before
/// answering, and the bound keeps every step of compiling cheap.
pub const MAX_LINE_BYTES: usize = 16 * 1024;

/// Splits `line` into tokens, or refuses the first construct the grammar does not model.
pub(crate) fn lex(line: &str) -> Result<Vec<Token>, Refusal> {
    if line.len() > MAX_LINE_BYTES {
        let cut = (MAX_LINE_BYTES..=line.len())
            .find(|&at| line.is_char_boundary(at))
            .unwrap_or(line.len());
        return Err(Refusal::new(
            cut..line.len(),
            "line too long",
            format!(
                "the line is {} bytes long and at most {MAX_LINE_BYTES} are compiled; write a script and run that",
                line.len()
            ),
        ));
    }
    Lexer {
        line,
        chars: line.char_indices().collect(),
        at: 0,
        tokens: Vec::new(),
        word: None,
    }
    .run()
}

/// A word being read: its characters so far and the byte where it began.
struct Partial {
    chars: Vec<Char>,
    quoted: bool,
    start: usize,
}

struct Lexer<'a> {
    line: &'a str,
    chars: Vec<(usize, char)>,
    /// Index into `chars` of the next character to read.
    at: usize,
    tokens: Vec<Token>,
    word: Option<Partial>,
}

/// Characters that end a word and begin an operator.
fn is_operator_start(c: char) -> bool {
    matches!(c, '|' | '&' | ';' | '(' | ')' | '<' | '>')
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).map(|&(_, c)| c)
    }

    /// The byte offset of the character at index `index`, or the line's length past the end.
    fn offset(&self, index: usize) -> usize {
        self.chars
            .get(index)
            .map_or(self.line.len(), |&(offset, _)| offset)
    }

    fn span(&self, from: usize, to: usize) -> Range<usize> {
        self.offset(from)..self.offset(to)
    }

    fn push(&mut self, ch: char, quoted: bool, start: usize) {
        let word = self.word.get_or_insert_with(|| Partial {
            chars: Vec::new(),
            quoted: false,
            start,
        });
        word.chars.push(Char { ch, quoted });
        word.quoted |= quoted;
    }

    /// Starts a word (if none is open) that so far holds nothing, as `''` does.
    fn open_quoted(&mut self, start: usize) {
        let word = self.word.get_or_insert_with(|| Partial {
            chars: Vec::new(),
            quoted: false,
            start,
        });
        word.quoted = true;
    }

    fn finish_word(&mut self) {
        if let Some(word) = self.word.take() {
            let end = self.offset(self.at);
            self.tokens.push(Token::Word(Word {
                chars: word.chars,
                quoted: word.quoted,
                span: word.start..end,
            }));
        }
    }

    fn run(mut self) -> Result<Vec<Token>, Refusal> {
        while let Some(c) = self.peek(0) {
            let start = self.offset(self.at);
            match c {
                '\n' | '\r' => {
                    return Err(Refusal::new(
                        self.span(self.at, self.at + 1),
                        "newline",
                        "a command line is one line; run each line separately or join them with `;` or `&&`",
                    ));
                }
                '\0' => {
                    return Err(Refusal::new(
                        self.span(self.at, self.at + 1),
                        "nul character",
                        "an argument cannot hold a NUL character",
                    ));
                }
                ' ' | '\t' => {
                    self.finish_word();
                    self.at += 1;
                }
                '\'' => self.single_quoted(start)?,
                '"' => self.double_quoted(start)?,
                '\\' => match self.peek(1) {
                    None => {
                        return Err(Refusal::new(
                            self.span(self.at, self.at + 1),
                            "trailing backslash",
                            "a backslash at the end of the line escapes nothing; a command line is one line",
                        ));
                    }
                    // A backslash does not make a newline or a NUL acceptable.
                    Some('\n' | '\r' | '\0') => self.at += 1,
                    Some(next) => {
                        self.push(next, true, start);
                        self.at += 2;
                    }
                },
                '$' => return Err(self.dollar(self.at)),
                '`' => return Err(self.backquote(self.at)),
                '#' if self.word.is_none() => {
                    return Err(Refusal::new(
                        start..self.line.len(),
                        "comment",
                        "a `#` at the start of a word begins a comment, which is refused rather than dropped; quote it if it is meant literally",
                    ));
                }
                c if is_operator_start(c) => self.operator()?,
                other => {
                    self.push(other, false, start);
                    self.at += 1;
                }
            }
        }
        self.finish_word();
        Ok(self.tokens)
    }

    fn single_quoted(&mut self, start: usize) -> Result<(), Refusal> {
        let open = self.at;
        self.open_quoted(start);
        self.at += 1;
        loop {
            match self.peek(0) {
                None => {
                    return Err(Refusal::new(
                        self.span(open, self.chars.len()),
                        "unbalanced quote",
                        "this single quote is never closed",
                    ));
                }
                Some('\'') => {
                    self.at += 1;
                    return Ok(());
                }
                Some('\n' | '\r') => {
                    return Err(Refusal::new(
                        self.span(self.at, self.at + 1),
                        "newline",
                        "a command line is one line, even inside quotes",
                    ));
                }
                Some('\0') => {
                    return Err(Refusal::new(
                        self.span(self.at, self.at + 1),
                        "nul character",
                        "an argument cannot hold a NUL character",
                    ));
                }
                Some(c) => {
                    self.push(c, true, start);
                    self.at += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self, start: usize) -> Result<(), Refusal> {
        let open = self.at;
        self.open_quoted(start);
        self.at += 1;
        loop {
            match self.peek(0) {
                None => {
                    return Err(Refusal::new(
                        self.span(open, self.chars.len()),
                        "unbalanced quote",
                        "this double quote is never closed",
                    ));
                }
                Some('"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some('\\') => match self.peek(1) {
                    Some(next @ ('"' | '\\' | '$' | '`')) => {
                        self.push(next, true, start);
                        self.at += 2;
                    }
                    // Inside double quotes a backslash before anything else is itself.
                    _ => {
                        self.push('\\', true, start);
                        self.at += 1;
                    }
                },
                Some('$') => return Err(self.dollar(self.at)),
                Some('`') => return Err(self.backquote(self.at)),
                Some('\n' | '\r') => {
                    return Err(Refusal::new(
                        self.span(self.at, self.at + 1),
                        "newline",
                        "a command line is one line, even inside quotes",
                    ));
                }
                Some('\0') => {
                    return Err(Refusal::new(
                        self.span(self.at, self.at + 1),
                        "nul character",
                        "an argument cannot hold a NUL character",
                    ));
                }
                Some(c) => {
                    self.push(c, true, start);
                    self.at += 1;
                }
            }
        }
    }

    /// The refusal for a `$` at index `at`, naming what it would have expanded.
    fn dollar(&self, at: usize) -> Refusal {
        let next = self.chars.get(at + 1).map(|&(_, c)| c);
        match next {
            Some('(') if self.chars.get(at + 2).map(|&(_, c)| c) == Some('(') => {
                // Matching from the outer parenthesis ends at the second of the closing pair.
                let end = self
                    .closing(at + 1, '(', ')')
                    .map_or(self.chars.len(), |close| close + 1);
                Refusal::new(
                    self.span(at, end),
                    "arithmetic expansion",
                    "arithmetic is a language and needs an interpreter; write the number itself",
                )
            }
            Some('(') => {
                let end = self
                    .closing(at + 1, '(', ')')
                    .map_or(self.chars.len(), |close| close + 1);
                Refusal::new(
                    self.span(at, end),
                    "command substitution",
                    "a command whose text is computed when it runs cannot be shown before it runs; run the inner command first and write its result into the line",
                )
            }
            Some('{') => {
                let end = self
                    .closing(at + 1, '{', '}')
                    .map_or(self.chars.len(), |close| close + 1);
                Refusal::new(
                    self.span(at, end),
                    "parameter expansion",
                    "a variable's value is not in the line, so the plan would not be either; write the value itself",
                )
            }
            Some('\'') => {
                let end = self.quote_end(at + 1, '\'');
                Refusal::new(
                    self.span(at, end),
                    "ansi-c quoting",
                    "`$'…'` quoting is not supported; write the characters inside plain quotes",
                )
            }
            Some('"') => {
                let end = self.quote_end(at + 1, '"');
                Refusal::new(
                    self.span(at, end),
                    "locale quoting",
                    "`$\"…\"` quoting is not supported; write the text inside plain quotes",
                )
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                let mut end = at + 1;
                while self
                    .chars
                    .get(end)
                    .is_some_and(|&(_, c)| c == '_' || c.is_ascii_alphanumeric())
                {
                    end += 1;
                }
                Refusal::new(
                    self.span(at, end),
                    "variable",
                    "a variable's value is not in the line, so the plan would not be either; write the value itself, or put a literal `$` inside single quotes",
                )
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => Refusal::new(
                self.span(at, at + 2),
                "variable",
                "a shell parameter has no value here because there is no shell; write the value itself, or put a literal `$` inside single quotes",
            ),
            _ => Refusal::new(
                self.span(at, at + 1),
                "dollar sign",
                "a `$` outside single quotes is refused; put it inside single quotes if it is meant literally",
            ),
        }
    }

    fn backquote(&self, at: usize) -> Refusal {
        let mut end = at + 1;
        let mut closed = false;
        while let Some(&(_, c)) = self.chars.get(end) {
            end += 1;
            match c {
                '\\' => end += 1,
                '`' => {
                    closed = true;
                    break;
                }
                _ => {}
            }
        }
        let end = if closed { end } else { self.chars.len() };
        Refusal::new(
            self.span(at, end.min(self.chars.len())),
            "command substitution",
            "a command whose text is computed when it runs cannot be shown before it runs; run the inner command first and write its result into the line",
        )
    }

    /// The index just past the quote `quote` that closes the one at `open`, or the end of the line.
    fn quote_end(&self, open: usize, quote: char) -> usize {
        let mut index = open + 1;
        while let Some(&(_, c)) = self.chars.get(index) {
            if c == '\\' && quote == '"' {
                index += 2;
                continue;
            }
            if c == quote {
                return index + 1;
            }
            index += 1;
        }
        self.chars.len()
    }

    /// The index of the `close` that matches the `open` at index `open`, skipping quoted text, so
    /// a refusal can name the whole construct.
    fn closing(&self, open: usize, open_char: char, close: char) -> Option<usize> {
        let mut depth = 0usize;
        let mut index = open;
        while let Some(&(_, c)) = self.chars.get(index) {
            match c {
                '\\' => index += 1,
                '\'' => {
                    index = self.quote_end(index, '\'') - 1;
                }
                '"' => {
                    index = self.quote_end(index, '"') - 1;
                }
                c if c == open_char => depth += 1,
                c if c == close => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(index);
                    }
                }
                _ => {}
            }
            index += 1;
        }
        None
    }

    /// Whether the character at `index` ends a word: the end of the line, a blank or an operator.
    fn ends_word(&self, index: usize) -> bool {
        self.chars
            .get(index)
            .is_none_or(|&(_, c)| c == ' ' || c == '\t' || is_operator_start(c))
    }

    fn emit(&mut self, operator: Operator, from: usize, len: usize) {
        let span = self.offset(from)..self.offset(self.at + len);
        self.at += len;
        self.tokens.push(Token::Operator(operator, span));
    }

    fn operator(&mut self) -> Result<(), Refusal> {
        let c = self.peek(0).unwrap_or(' ');
        let next = self.peek(1);
        if c == '<' || c == '>' {
            return self.redirect();
        }
        self.finish_word();
        let here = self.at;
        let one = |lexer: &Self, construct, message: &str| {
            Refusal::new(lexer.span(here, here + 1), construct, message)
        };
        let two = |lexer: &Self, construct, message: &str| {
            Refusal::new(lexer.span(here, here + 2), construct, message)
        };
        match (c, next) {
            ('|', Some('|')) => self.emit(Operator::Or, here, 2),
            ('|', Some('&')) => {
                return Err(two(
                    self,
                    "pipe with standard error",
                    "`|&` is not supported; write `2>&1 |`",
                ));
            }
            ('|', _) => self.emit(Operator::Pipe, here, 1),
            ('&', Some('&')) => self.emit(Operator::And, here, 2),
            ('&', Some('>')) => {
                let append = self.peek(2) == Some('>');
                let len = if append { 3 } else { 2 };
                self.emit(
                    Operator::Redirect(RedirectOperator::Output {
                        streams: Streams::Both,
                        append,
                    }),
                    here,
                    len,
                );
            }
            ('&', _) => {
                return Err(one(
                    self,
                    "background",
                    "`&` is not supported: to start a line without waiting for it, use the run tool's `background` argument",
                ));
            }
            (';', Some(';' | '&')) => {
                return Err(two(
                    self,
                    "case terminator",
                    "`;;` and `;&` belong to `case`, and control flow is refused",
                ));
            }
            (';', _) => self.emit(Operator::Semicolon, here, 1),
            ('(', _) => self.emit(Operator::Open, here, 1),
            (')', _) => self.emit(Operator::Close, here, 1),
            _ => {
                return Err(one(self, "operator", "this operator is not supported"));
            }
        }
        Ok(())
    }

    /// A redirect starting at `<` or `>`, taking a descriptor number written just before it.
    fn redirect(&mut self) -> Result<(), Refusal> {
        // A word of bare digits touching the operator names the descriptor (`2>`); anything else
        // before it is an ordinary word (`a2>f` is the word `a2` and a redirect of standard output).
        let mut descriptor: Option<(u32, usize)> = None;
        if let Some(word) = &self.word {
            let text: String = word.chars.iter().map(|c| c.ch).collect();
            if !word.quoted && !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
                let number = text.parse::<u32>().unwrap_or(u32::MAX);
                descriptor = Some((number, word.start));
            } else if !word.quoted
                && text.len() > 2
                && text.starts_with('{')
                && text.ends_with('}')
                && text[1..text.len() - 1]
                    .chars()
                    .all(|c| c == '_' || c.is_ascii_alphanumeric())
            {
                return Err(Refusal::new(
                    word.start..self.offset(self.at + 1),
                    "named descriptor",
                    "a `{name}` descriptor is a variable, and variables are refused",
                ));
            }
        }
        let start = match descriptor {
            Some((_, start)) => {
                self.word = None;
                start
            }
            None => {
                self.finish_word();
                self.offset(self.at)
            }
        };
        let here = self.at;
        let c = self.peek(0).unwrap_or('<');
        let refuse = |lexer: &Self, len: usize, construct, message: &str| {
            Refusal::new(start..lexer.offset(here + len), construct, message)
        };
        let number = descriptor.map(|(n, _)| n);
        let (operator, len) = if c == '<' {
            match self.peek(1) {
                Some('<') if self.peek(2) == Some('<') => {
                    return Err(refuse(
                        self,
                        3,
                        "here-string",
                        "`<<<` feeds text shaped like syntax to a program; pass the text as an argument or through the run tool's `stdin_ref`",
                    ));
                }
                Some('<') => {
                    return Err(refuse(
                        self,
                        2,
                        "here-document",
                        "here-documents are content wearing the shape of syntax; write the text to a file first or use the run tool's `stdin_ref`",
                    ));
                }
                Some('(') => {
                    let end = self
                        .closing(here + 1, '(', ')')
                        .map_or(self.chars.len(), |close| close + 1);
                    return Err(Refusal::new(
                        self.span(here, end),
                        "process substitution",
                        "a file made from a command nobody saw cannot be shown before it runs; run the inner command first",
                    ));
                }
                Some('&') => {
                    return Err(refuse(
                        self,
                        2,
                        "descriptor duplication",
                        "`<&` is not supported; the forms are `<`, `>`, `>>`, `2>`, `2>>`, `&>`, `&>>`, `2>&1` and `>&2`",
                    ));
                }
                Some('>') => {
                    return Err(refuse(
                        self,
                        2,
                        "read-write redirect",
                        "`<>` is not supported; the forms are `<`, `>`, `>>`, `2>`, `2>>`, `&>`, `&>>`, `2>&1` and `>&2`",
                    ));
                }
                _ => match number {
                    None | Some(0) => (RedirectOperator::Input, 1),
                    Some(_) => {
                        return Err(refuse(
                            self,
                            1,
                            "descriptor",
                            "only standard input can be read from a file with `<`",
                        ));
                    }
                },
            }
        } else {
            let streams = match number {
                None | Some(1) => Streams::Output,
                Some(2) => Streams::Error,
                Some(_) => {
                    return Err(refuse(
                        self,
                        1,
                        "descriptor",
                        "only standard output (1) and standard error (2) can be redirected",
                    ));
                }
            };
            match self.peek(1) {
                Some('(') => {
                    let end = self
                        .closing(here + 1, '(', ')')
                        .map_or(self.chars.len(), |close| close + 1);
                    return Err(Refusal::new(
                        self.span(here, end),
                        "process substitution",
                        "a file made from a command nobody saw cannot be shown before it runs; write to a file and run the other command on it",
                    ));
                }
                Some('|') => {
                    return Err(refuse(
                        self,
                        2,
                        "clobbering redirect",
                        "`>|` is not supported; write `>`",
                    ));
                }
                Some('>') => (
                    RedirectOperator::Output {
                        streams,
                        append: true,
                    },
                    2,
                ),
                Some('&') => {
                    let target = self.peek(2);
                    let whole = self.ends_word(here + 3);
                    match (streams, target) {
                        (Streams::Error, Some('1')) if whole => {
                            (RedirectOperator::ErrorToOutput, 3)
                        }
                        (Streams::Output, Some('2')) if whole => {
                            (RedirectOperator::OutputToError, 3)
                        }
                        _ => {
                            let mut end = here + 2;
                            while !self.ends_word(end) {
                                end += 1;
                            }
                            return Err(refuse(
                                self,
                                end - here,
                                "descriptor duplication",
                                "only `2>&1` and `>&2` join streams; to send both to a file write `&>` and the file",
                            ));
                        }
                    }
                }
                _ => (
                    RedirectOperator::Output {
                        streams,
                        append: false,
                    },
                    1,
                ),
            }
        };
        self.at += len;
        let end = self.offset(self.at);
        self.tokens
            .push(Token::Operator(Operator::Redirect(operator), start..end));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        lex(line)
            .unwrap()
            .into_iter()
            .map(|token| match token {
                Token::Word(word) => format!("{}@{:?}", word.text(), word.span),
                Token::Operator(op, span) => format!("{op:?}@{span:?}"),
            })
            .collect()
    }

    // Verifies: RUN-3
    #[test]
    fn lexer_keeps_spans_and_splits_operators_from_words() {
        assert_eq!(
            words("a2>f 2>>g x|y&&z"),
            [
                "a2@0..2",
                "Redirect(Output { streams: Output, append: false })@2..3",
                "f@3..4",
                "Redirect(Output { streams: Error, append: true })@5..8",
                "g@8..9",
                "x@10..11",
                "Pipe@11..12",
                "y@12..13",
                "And@13..15",
                "z@15..16",
            ]
        );
        assert_eq!(words("''"), ["@0..2"]);
        assert_eq!(
            words("a 2>&1 >&2"),
            [
                "a@0..1",
                "Redirect(ErrorToOutput)@2..6",
                "Redirect(OutputToError)@7..10"
            ]
        );
    }

    // Verifies: RUN-2
    #[test]
    fn lexer_marks_quoted_characters() {
        let tokens = lex(r#"a'*'"?"\[b"#).unwrap();
        let Token::Word(word) = &tokens[0] else {
            panic!("a word")
        };
        let quoted: Vec<bool> = word.chars.iter().map(|c| c.quoted).collect();
        assert_eq!(quoted, [false, true, true, true, false]);
        assert_eq!(word.text(), "a*?[b");
    }
}
