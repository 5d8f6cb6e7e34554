//! The bravebot core: the labelled kernel, the tools, the turn loop, the model backends and the
//! one way out of the process.
//!
//! The crate is stacked in floors, each module using only the floors below it
//! (`specs/layering.md`, kept by a test; `ARCHITECTURE.md` draws the house):
//!
//! - [`kernel`] is plain data and pure functions: labels, labelled values, write-once slots and
//!   references, the trust map, the verdicts, context integrity, gates and the audit trail. It
//!   never touches the filesystem, a process, the network or a clock (its audit trail is handed
//!   one).
//! - [`screen`], [`paths`] and [`files`] are the words everyone above speaks: what the person is
//!   shown and asked, path words, the editor's buffers.
//! - [`session`] is one conversation's data and seat; [`tools`] are what the planner may call;
//!   [`turn`] runs the rounds; [`driver`] starts turns. They reach the person only through
//!   [`Screen`](screen::Screen), buffers through [`Files`](files::Files) and models through
//!   [`model::ModelClient`]; files on disk through [`workspace_file`] (the one confined reader),
//!   programs through [`runner`] and [`process`], language servers through [`language`] and MCP
//!   servers through [`mcp`].
//! - [`egress`] alone holds an HTTP client; [`model`] speaks the two wire formats through it.
//!
//! Untrusted bytes are read only by the gates in [`kernel::policy`]: everything else carries them.

pub mod check;
pub mod checkpoint;
pub mod cmdline;
pub mod conversation;
pub mod credentials;
pub mod delegate;
pub mod delegation;
pub mod driver;
pub mod egress;
pub mod files;
pub mod git;
pub mod jobs;
pub mod kernel;
pub mod language;
pub mod looping;
pub mod mcp;
pub mod model;
pub mod paths;
pub mod pieces;
pub mod process;
pub mod record;
pub mod restore;
pub mod runner;
pub mod sandbox;
pub mod screen;
pub mod search;
pub mod secret;
pub mod session;
pub mod settings;
pub mod skills;
pub mod tools;
pub mod turn;
pub mod usage;
pub mod verdict_store;
pub mod vetting;
pub mod watch;
pub mod workspace_file;
