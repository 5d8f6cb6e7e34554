//! `job_output`: what a background job printed since the last look, and whether it has ended.
//!
//! New bytes are counted per stream, so a line on one does not hide what arrived on the other. A
//! look may wait (`wait_seconds`, 1 to 600: outside that it is refused, never shortened) for new
//! output, the end of the job, the wait running out or the turn being cancelled. A job's output
//! keeps the label its plan had when it started.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::args::tool_args;
use super::{Call, Effects, ToolOutput, ToolSpec};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::Origin;
use crate::paths::control_pictures;
use crate::screen::Update;
use crate::session::Session;

tool_args! {
    /// The arguments of `job_output`, as the planner is shown them and as a call is read.
    pub struct Args {
        job: required String as Routing = json!({"type": "string", "description": "the job name run handed back, e.g. job-1"});
        kill: switch bool as Routing = json!({"type": "boolean", "description": "stop the job"});
        wait_seconds: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "maximum": 600, "description": "watch for up to this long"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "job_output";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Report what a background job has printed since the last look, per stream, and whether it \
has ended. `wait_seconds` (1-600) watches until output arrives, the job ends or the wait runs out; `kill` stops it.",
        args: Args::specs(),
    }
}

/// A look changes nothing; `kill` stops a job without a question of its own.
pub(super) fn effects(args: &Map<String, Value>) -> Effects {
    if super::args::switch(args, "kill") {
        Effects::Unasked
    } else {
        Effects::None
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let session = call.session;
    let Args {
        job: name,
        kill,
        wait_seconds: wait,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    if let Some(w) = wait.filter(|w| !(1..=600).contains(w)) {
        return ToolOutput::refused(format!(
            "wait_seconds {w} is outside 1 to 600; nothing was waited for"
        ));
    }
    let exists = session.state().jobs.iter().any(|j| j.name == name);
    if !exists {
        let names: Vec<String> = session
            .state()
            .jobs
            .iter()
            .map(|j| j.name.clone())
            .collect();
        return ToolOutput::error(format!(
            "there is no job `{}`; this session's jobs are {}",
            control_pictures(&name),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    if kill && let Some(j) = session.state().jobs.iter().find(|j| j.name == name) {
        j.stop.cancel();
    }
    let mut watched = Duration::ZERO;
    if let Some(w) = wait {
        let began = Instant::now();
        let limit = Duration::from_secs(w);
        loop {
            let (ended, fresh, changed) = {
                let state = session.state();
                let Some(j) = state.jobs.iter().find(|j| j.name == name) else {
                    break;
                };
                let (o, e) = j.totals();
                (
                    j.ended().is_some(),
                    o > j.seen.0 || e > j.seen.1,
                    j.changed.clone(),
                )
            };
            if ended || fresh || began.elapsed() >= limit || call.cancel.is_cancelled() {
                break;
            }
            // Output has no event of its own; look again shortly, or sooner when the job ends.
            tokio::select! {
                () = changed.notified() => {}
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
                () = call.cancel.cancelled() => {}
            }
        }
        watched = began.elapsed();
    }
    let text = account(session, &name, true);
    let note = match wait {
        Some(_) => format!(
            " Watched for {:.1} s; nothing is watching it now.",
            watched.as_secs_f64()
        ),
        None => String::new(),
    };
    ToolOutput::ok(
        PlannerText::driver(format!("{}{note}", text.as_str())),
        format!("{name}: looked"),
    )
}

/// An account of a job: running or how it ended, and what is new on each stream since the last
/// look, as text (trusted) or a reference (quarantined). Marks what it reports as seen, and an
/// ended job as reported.
pub fn account(session: &Session, name: &str, asked: bool) -> PlannerText {
    let mut state = session.state();
    let state = &mut *state;
    let Some(index) = state.jobs.iter().position(|j| j.name == name) else {
        return PlannerText::driver(format!("there is no job {name}"));
    };
    let (line, label, ended, new_out, new_err, totals) = {
        let j = &state.jobs[index];
        let out = j
            .stdout
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .since(j.seen.0);
        let err = j
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .since(j.seen.1);
        (j.line.clone(), j.label, j.ended(), out, err, j.totals())
    };
    let status = match &ended {
        Some(report) => format!("{name} (`{line}`) has ended: {}", report.summary()),
        None => format!("{name} (`{line}`) is still running"),
    };
    let mut text = format!("{status}.");
    let mut quarantined = Vec::new();
    for (stream, bytes) in [("stdout", new_out), ("stderr", new_err)] {
        if bytes.is_empty() {
            text.push_str(&format!("\n{stream}: nothing new"));
            continue;
        }
        if label.is_trusted() {
            let Ok(opened) = policy::open(Labelled::new(
                String::from_utf8_lossy(&bytes).into_owned(),
                label,
            )) else {
                continue;
            };
            let body = policy::present(
                opened,
                &format!("job_output {name} {stream}"),
                &mut state.context,
                &mut state.audit,
            );
            text.push_str(&format!(
                "\n{stream}, new ({} bytes):\n{}",
                bytes.len(),
                body.as_str()
            ));
        } else {
            let reference = state.quarantine.put(
                Labelled::new(bytes, label),
                Origin::Output {
                    line: line.clone(),
                    stream,
                },
            );
            policy::withhold(
                &format!("job_output {name} {stream}"),
                label,
                &reference.id.to_string(),
                &mut state.audit,
            );
            text.push_str(&format!("\n{stream}, new: quarantined, {reference}"));
            quarantined.push((reference, stream));
        }
    }
    let j = &mut state.jobs[index];
    j.seen = totals;
    if ended.is_some() && (asked || !j.reported) {
        j.reported = true;
    }
    for (reference, stream) in quarantined {
        session.screen.update(Update::Quarantined {
            reference,
            origin: format!("the {} of {line}", super::output_words(stream)),
        });
    }
    PlannerText::driver(text)
}

/// Accounts of jobs that ended and that nobody has been told about yet: once each.
pub fn finished_unreported(session: &Session) -> Vec<PlannerText> {
    let names: Vec<String> = session
        .state()
        .jobs
        .iter()
        .filter(|j| !j.reported && j.ended().is_some())
        .map(|j| j.name.clone())
        .collect();
    names.iter().map(|n| account(session, n, false)).collect()
}
