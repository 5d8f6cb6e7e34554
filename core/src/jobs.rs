//! Background runs: a job is a plan started with `background: true`, running while the turn goes
//! on. Its output is captured like a foreground run's and keeps the label its plan had when it
//! started, whatever is vouched for later.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::kernel::label::Label;
use crate::process::SharedCapture;
use crate::runner::RunReport;

pub struct Job {
    /// `job-1`, `job-2`, … in the order the session started them.
    pub name: String,
    /// The line as the planner wrote it.
    pub line: String,
    /// Fixed when the job started.
    pub label: Label,
    pub stdout: SharedCapture,
    pub stderr: SharedCapture,
    /// How many bytes of each stream the planner has been handed an account of.
    pub seen: (u64, u64),
    pub started: Instant,
    pub stop: CancellationToken,
    /// Set once the run ends.
    pub report: Arc<Mutex<Option<RunReport>>>,
    /// Woken when output arrives or the job ends.
    pub changed: Arc<Notify>,
    /// Whether the turn has been told the job ended.
    pub reported: bool,
}

impl Job {
    pub fn ended(&self) -> Option<RunReport> {
        self.report
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn totals(&self) -> (u64, u64) {
        let total = |c: &SharedCapture| c.lock().unwrap_or_else(|p| p.into_inner()).total();
        (total(&self.stdout), total(&self.stderr))
    }
}
