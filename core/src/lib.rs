//! The bravebot core: the labelled kernel, the tools, the turn loop, the model backends and the
//! one way out of the process.
//!
//! The crate is split by whether a module may do IO:
//!
//! - [`kernel`] is plain data and pure functions: labels, labelled values, write-once slots and
//!   references, the trust map, context integrity, gates and the audit trail. It never touches the
//!   filesystem, the network or a clock.
//! - [`tools`], [`turn`], [`check`] and [`session`] drive a conversation. They reach the outside
//!   only through [`Screen`](screen::Screen) (the person), [`Files`](files::Files) (open buffers and
//!   the disk) and [`model::ModelClient`].
//! - [`egress`] alone holds an HTTP client; [`model`] speaks the two wire formats through it.
//!
//! Untrusted bytes are read only by the gates in [`kernel::policy`]: everything else carries them.

pub mod check;
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
pub mod watch;
pub mod workspace_file;
