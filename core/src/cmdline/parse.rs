//! The parser: tokens into the shape of a line (sequences, pipelines, groups, simple commands),
//! before anything is expanded or resolved.
//!
//! The grammar is the shell's, cut down: `&&` and `||` bind equally and from the left, `;` binds
//! loosest, `|` tightest, and `( … )` or `{ …; }` group a sequence. `{` and `}` are group marks only
//! where a command may start, so `find -exec rm {} \;` keeps its `{}` as an argument. A group is
//! neither piped nor redirected: each stage of a pipeline is one program, so the executor never has
//! to share one stream among several.

use std::ops::Range;

use super::lex::{Operator, RedirectOperator, Token, Word};
use super::plan::Join;
use super::refusal::Refusal;

/// A sequence as written: its first step and each later step with the join before it.
#[derive(Debug)]
pub(crate) struct Sequence {
    pub first: Box<Step>,
    pub rest: Vec<(Join, Step)>,
}

#[derive(Debug)]
pub(crate) enum Step {
    Pipeline(Vec<SimpleCommand>),
    Group(Sequence),
}

/// The words and redirects of one command, in the order written.
#[derive(Debug)]
pub(crate) struct SimpleCommand {
    pub words: Vec<Word>,
    pub redirects: Vec<RedirectWord>,
    pub span: Range<usize>,
}

#[derive(Debug)]
pub(crate) struct RedirectWord {
    pub operator: RedirectOperator,
    pub span: Range<usize>,
    /// The file, for every operator but the two duplications.
    pub target: Option<Word>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Closer {
    Parenthesis,
    Brace,
}

/// Parses a whole line's tokens.
pub(crate) fn parse(tokens: Vec<Token>, line_len: usize) -> Result<Sequence, Refusal> {
    if tokens.is_empty() {
        return Err(Refusal::new(
            0..line_len,
            "empty line",
            "the line holds no command",
        ));
    }
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let sequence = parser.sequence(None)?;
    match parser.peek() {
        None => Ok(sequence),
        Some(token) => Err(parser.unexpected(token.span())),
    }
}

/// Groups nested inside each other at most. The parser descends once a group, and so does every
/// walk of the plan it builds, so the bound keeps each of them far from the end of a thread's
/// stack whatever line it is given.
pub(crate) const MAX_GROUP_DEPTH: usize = 32;

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// Groups open around the token at `at`.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn peek_operator(&self) -> Option<(Operator, Range<usize>)> {
        match self.peek() {
            Some(Token::Operator(op, span)) => Some((*op, span.clone())),
            _ => None,
        }
    }

    /// Whether the next token is the bare word `text` (a group mark where a command may start).
    fn at_bare(&self, text: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(word)) if word.is_bare(text))
    }

    fn unexpected(&self, span: Range<usize>) -> Refusal {
        match self.tokens.get(self.at) {
            Some(Token::Operator(Operator::Close, _)) => {
                Refusal::new(span, "unbalanced group", "this `)` closes no group")
            }
            Some(Token::Word(word)) if word.is_bare("}") => {
                Refusal::new(span, "unbalanced group", "this `}` closes no group")
            }
            _ => Refusal::new(span, "syntax", "this is not expected here"),
        }
    }

    /// The span of the token before the current one, or an empty span at the end of the line.
    fn previous_span(&self) -> Range<usize> {
        self.at
            .checked_sub(1)
            .and_then(|index| self.tokens.get(index))
            .map_or(0..0, Token::span)
    }

    fn sequence(&mut self, closer: Option<Closer>) -> Result<Sequence, Refusal> {
        let first = self.step(closer)?;
        let mut rest = Vec::new();
        while let Some(token) = self.peek() {
            match token {
                Token::Operator(Operator::Semicolon, _) => {
                    self.at += 1;
                    // A `;` may end a sequence: `a;` and `{ a; }`.
                    let ends = match self.peek() {
                        None => true,
                        Some(Token::Operator(Operator::Close, _)) => true,
                        Some(Token::Word(word)) => {
                            word.is_bare("}") && closer == Some(Closer::Brace)
                        }
                        _ => false,
                    };
                    if ends {
                        break;
                    }
                    rest.push((Join::Then, self.step(closer)?));
                }
                Token::Operator(op @ (Operator::And | Operator::Or), _) => {
                    let join = if *op == Operator::And {
                        Join::And
                    } else {
                        Join::Or
                    };
                    self.at += 1;
                    rest.push((join, self.step(closer)?));
                }
                Token::Operator(Operator::Close, _) => break,
                Token::Word(word) if word.is_bare("}") && closer == Some(Closer::Brace) => break,
                Token::Word(word) if word.is_bare("}") => {
                    return Err(Refusal::new(
                        token.span(),
                        "unbalanced group",
                        "this `}` closes no group",
                    ));
                }
                Token::Word(_) => {
                    return Err(Refusal::new(
                        token.span(),
                        "word after a group",
                        "a group ends its command; join what follows with `;`, `&&`, `||` or `|`",
                    ));
                }
                Token::Operator(Operator::Redirect(_), _) => {
                    return Err(Refusal::new(
                        token.span(),
                        "redirect on a group",
                        "a group cannot be redirected; put the redirect on each command inside it",
                    ));
                }
                Token::Operator(Operator::Pipe, _) => {
                    return Err(Refusal::new(
                        token.span(),
                        "piped group",
                        "a group cannot be piped; each stage of a pipeline is one program",
                    ));
                }
                Token::Operator(Operator::Open, _) => {
                    return Err(Refusal::new(
                        token.span(),
                        "syntax",
                        "a `(` cannot follow a group directly",
                    ));
                }
            }
        }
        Ok(Sequence {
            first: Box::new(first),
            rest,
        })
    }

    /// One step where a command may start: a group or a pipeline.
    fn step(&mut self, closer: Option<Closer>) -> Result<Step, Refusal> {
        // Control flow is named as such even where the rest of it would not parse.
        if let Some(Token::Word(word)) = self.peek()
            && !word.quoted
            && let Some(refusal) = super::refusal::control_flow(&word.text(), word.span.clone())
        {
            return Err(refusal);
        }
        if self.at_bare("}") {
            let span = self.peek().map_or(0..0, Token::span);
            return Err(if closer == Some(Closer::Brace) {
                Refusal::new(span, "missing command", "a command is missing before this")
            } else {
                Refusal::new(span, "unbalanced group", "this `}` closes no group")
            });
        }
        if let Some((Operator::Open, span)) = self.peek_operator() {
            return self.group(Closer::Parenthesis, span);
        }
        if self.at_bare("{") {
            let span = self.peek().map_or(0..0, Token::span);
            return self.group(Closer::Brace, span);
        }
        self.pipeline()
    }

    fn group(&mut self, closer: Closer, open: Range<usize>) -> Result<Step, Refusal> {
        if self.depth == MAX_GROUP_DEPTH {
            return Err(Refusal::new(
                open,
                "groups nested too deeply",
                format!("at most {MAX_GROUP_DEPTH} groups nest inside each other"),
            ));
        }
        self.at += 1;
        let (close_text, open_text) = match closer {
            Closer::Parenthesis => (")", "("),
            Closer::Brace => ("}", "{"),
        };
        let empty = match closer {
            Closer::Parenthesis => matches!(self.peek_operator(), Some((Operator::Close, _))),
            Closer::Brace => self.at_bare("}"),
        };
        if empty {
            let end = self.peek().map_or(open.end, |token| token.span().end);
            return Err(Refusal::new(
                open.start..end,
                "empty group",
                "a group holds at least one command",
            ));
        }
        if self.peek().is_none() {
            return Err(Refusal::new(
                open,
                "unbalanced group",
                format!("this `{open_text}` is never closed"),
            ));
        }
        self.depth += 1;
        let body = self.sequence(Some(closer));
        self.depth -= 1;
        let body = body?;
        let closed = match closer {
            Closer::Parenthesis => matches!(self.peek_operator(), Some((Operator::Close, _))),
            Closer::Brace => self.at_bare("}"),
        };
        if !closed {
            return Err(Refusal::new(
                open,
                "unbalanced group",
                format!(
                    "this `{open_text}` is never closed by a `{close_text}` where a command could start"
                ),
            ));
        }
        self.at += 1;
        Ok(Step::Group(body))
    }

    fn pipeline(&mut self) -> Result<Step, Refusal> {
        let mut commands = vec![self.simple_command()?];
        while let Some((Operator::Pipe, span)) = self.peek_operator() {
            self.at += 1;
            if matches!(self.peek_operator(), Some((Operator::Open, _))) || self.at_bare("{") {
                return Err(Refusal::new(
                    span.start..self.peek().map_or(span.end, |token| token.span().end),
                    "piped group",
                    "a group cannot be piped; each stage of a pipeline is one program",
                ));
            }
            commands.push(self.simple_command()?);
        }
        Ok(Step::Pipeline(commands))
    }

    fn simple_command(&mut self) -> Result<SimpleCommand, Refusal> {
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        let start = self.peek().map(|token| token.span().start);
        let mut end = start.unwrap_or(0);
        loop {
            match self.peek().cloned() {
                Some(Token::Word(word)) => {
                    end = word.span.end;
                    words.push(word);
                    self.at += 1;
                }
                Some(Token::Operator(Operator::Redirect(operator), span)) => {
                    self.at += 1;
                    let target = match operator {
                        RedirectOperator::ErrorToOutput | RedirectOperator::OutputToError => None,
                        RedirectOperator::Input | RedirectOperator::Output { .. } => {
                            match self.peek().cloned() {
                                Some(Token::Word(word)) => {
                                    self.at += 1;
                                    Some(word)
                                }
                                _ => {
                                    return Err(Refusal::new(
                                        span,
                                        "redirect without a target",
                                        "a redirect needs the file it reads or writes",
                                    ));
                                }
                            }
                        }
                    };
                    end = target.as_ref().map_or(span.end, |word| word.span.end);
                    redirects.push(RedirectWord {
                        operator,
                        span,
                        target,
                    });
                }
                Some(Token::Operator(Operator::Open, span)) => {
                    if words.is_empty() && redirects.is_empty() {
                        return Err(Refusal::new(
                            span,
                            "syntax",
                            "a `(` cannot start a command here",
                        ));
                    }
                    return Err(Refusal::new(
                        span,
                        "syntax",
                        "a `(` inside a command is not supported; quote it if it is an argument",
                    ));
                }
                _ => break,
            }
        }
        if words.is_empty() && redirects.is_empty() {
            let (span, message) = match self.peek() {
                Some(token) => (token.span(), "a command is missing before this"),
                None => (self.previous_span(), "a command is missing after this"),
            };
            return Err(Refusal::new(span, "missing command", message));
        }
        Ok(SimpleCommand {
            words,
            redirects,
            span: start.unwrap_or(0)..end,
        })
    }
}
