//! `run`'s compiler: a command line in shell notation, turned into a plan a person can read and
//! approve, which is exactly what runs. Nothing here starts a process, and nothing is ever handed
//! to a shell.
//!
//! ```
//! use bravebot_core::cmdline::{FixedEnvironment, compile};
//!
//! let env = FixedEnvironment::new("/work/proj").programs(&["grep", "head"]);
//! let plan = compile("grep -n 'a b' notes.txt | head -5 > top.txt", &env).unwrap();
//! assert_eq!(plan.commands()[0].argv(), ["grep", "-n", "a b", "notes.txt"]);
//! assert_eq!(plan.writes(), [std::path::Path::new("/work/proj/top.txt")]);
//! ```
//!
//! The pieces, in the order a line goes through them:
//!
//! - `lex` splits the line into words and operators and removes quoting, keeping for each
//!   character whether it was quoted. Every construct with a meaning that is not in the line
//!   (`$…`, backquotes, `&`, here-documents, comments, a newline) is refused here.
//! - `parse` builds sequences (`;`, `&&`, `||`), pipelines (`|`), groups (`( … )`, `{ …; }`) and
//!   simple commands.
//! - [`compile()`] expands each word (`expand`: braces, a leading `~`, globs against the directory
//!   listings of an [`Environment`]), refuses what may not be a program (control flow, `eval`,
//!   shell builtins, a glob), resolves each program to an absolute path and each redirect target
//!   to an absolute file, and returns a [`Plan`].
//! - [`mod@plan`] is the result: the directory, the tree of steps, [`Plan::reads`],
//!   [`Plan::writes`], [`Plan::describe`] for the person and [`Plan::identity`] for binding an
//!   answer to what runs.
//!
//! Decisions a reader may look for, each with its reason in `specs/run.md`: a `#` at the start of
//! a word is refused rather than taken as a comment; braces expand both lists (`{a,b}`) and
//! sequences (`{1..3}`, `{a..e}`, `{01..10..2}`); globs and braces together may produce at most
//! [`EXPANSION_LIMIT`] words per line and read at most [`LISTING_LIMIT`] directories; a line is at
//! most [`MAX_LINE_BYTES`] long; `**` alone as a segment crosses directories; a group can be
//! neither piped nor redirected; `/dev/null` ([`DISCARD`]) is neither a read nor a write.

pub mod compile;
pub mod environment;
mod expand;
mod lex;
mod parse;
pub mod plan;
mod refusal;

pub use compile::compile;
pub use environment::{DirectoryEntry, Environment, FixedEnvironment, SystemEnvironment};
pub use expand::{EXPANSION_LIMIT, LISTING_LIMIT};
pub use lex::MAX_LINE_BYTES;
pub use plan::{
    Assignment, Command, DISCARD, Join, Pipeline, Plan, Redirect, Sequence, Step, Streams, masked,
    shown,
};
pub use refusal::Refusal;
