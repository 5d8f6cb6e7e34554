//! The labelled kernel: plain data and pure functions, no IO.
//!
//! - [`label`]: the lattice `I x C` and taint.
//! - [`labelled`]: a value that carries its label and cannot be looked at except through
//!   [`policy`].
//! - [`slot`]: write-once quarantine slots and the references the planner is given instead.
//! - [`trust`]: rules per path with where they came from.
//! - [`context`]: what a planner's context has met, and what that forbids.
//! - [`audit`]: every gate decision, holding no content.
//! - [`proposal`]: a proposed change, its hunks and diff, landing part of it or on moved text.
//! - [`policy`]: the gates, the only code that reads a labelled value's bytes.
//! - [`approvals`]: the person's standing approvals, one store keyed by what was approved.
//! - [`decide`]: which effect lands unasked, which is asked and which refused, as pure functions.

pub mod approvals;
pub mod audit;
pub mod context;
pub mod decide;
pub mod label;
pub mod labelled;
pub mod policy;
pub mod proposal;
pub mod slot;
pub mod trust;
pub mod verdicts;
