//! Support for bravebot's end-to-end tests: a fake model server, a client that drives the binary
//! over stdio, and what else the tests share.

// Test support panics on purpose: a failure here is a failing test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fake_model;
pub mod fuzz;
pub mod git_fixture;
pub mod lsp_client;
pub mod measure;
pub mod project_session;
pub mod prompt_cache;
pub mod setup;
