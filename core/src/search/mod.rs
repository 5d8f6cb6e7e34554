//! The search engine: a pattern compiled before anything is read ([`Pattern`]), an include glob
//! ([`Include`]), a sorted, depth-first, capped walk that reads and matches files
//! ([`search_tree`]), the sorted directory listing both the walk and `list_files` read
//! ([`directory`]), and the places where a session's capped searches stopped ([`Pages`]).
//!
//! It knows nothing of sessions, labels or the planner: the `search` tool (`tools/search.rs`)
//! chooses what to show and what to hold back. It sits beside `git/` and `cmdline/` for the same
//! reason they sit where they do: a benchmark or a test can run it on a directory alone.

pub mod directory;
mod include;
mod pages;
mod pattern;
mod walk;

pub use include::Include;
pub use pages::{PageKey, Pages};
pub use pattern::{
    LineSearcher, MAX_NESTING, MAX_PATTERN_CHARS, MAX_PATTERNS, Pattern, PatternError,
};
pub use walk::{
    Keep, Limits, MAX_LINE_CHARS, Match, Outcome, Request, Resume, SKIPPED_DIRECTORIES, Stop,
    search_tree, search_tree_keeping,
};
