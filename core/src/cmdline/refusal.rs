//! What a line that did not compile gets back: the [`Refusal`], and the refusals every stage
//! shares (the words that open shell control flow, met by the parser and the compiler alike).

use std::ops::Range;

/// Why a line was not compiled: the construct, where it is in the line (a byte range) and what
/// to write instead. Compiling the same line again against the same facts refuses it again; only a
/// different line (or a changed tree, for a glob or a missing program) can compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{construct} at bytes {}..{}: {message}", span.start, span.end)]
pub struct Refusal {
    /// The bytes of the line the refusal is about.
    pub span: Range<usize>,
    /// A short name for what was refused, e.g. `command substitution`.
    pub construct: &'static str,
    /// What is wrong and what to write instead, in lowercase without a trailing period.
    pub message: String,
}

impl Refusal {
    pub(crate) fn new(
        span: Range<usize>,
        construct: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            span,
            construct,
            message: message.into(),
        }
    }

    /// The refused text of `line` (the line that was compiled), or `""` for a span outside it.
    pub fn excerpt<'a>(&self, line: &'a str) -> &'a str {
        line.get(self.span.clone()).unwrap_or_default()
    }
}

/// Words refused in program position because they open shell control flow.
const CONTROL_FLOW: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "!", "[[", "]]", "in",
];

/// The refusal for a word that opens shell control flow (or a coprocess) where a command starts.
pub(crate) fn control_flow(written: &str, span: Range<usize>) -> Option<Refusal> {
    if written == "coproc" {
        return Some(Refusal::new(
            span,
            "coprocess",
            "`coproc` starts a program the line cannot wait on or show; run it with the run tool's `background` argument",
        ));
    }
    CONTROL_FLOW.contains(&written).then(|| {
        Refusal::new(
            span,
            "control flow",
            format!(
                "`{written}` opens shell control flow, and control flow is a program; write the steps out, or put the logic in a script and run that"
            ),
        )
    })
}
