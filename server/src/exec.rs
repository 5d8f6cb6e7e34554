//! `bravebot exec`: one headless turn in the current directory. Nobody is watching, so every
//! question is refused without being put, and the transcript says so.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use bravebot_core::egress::Egress;
use bravebot_core::session::{Answer, BoxFuture, CheckState, Question, Screen, StopReason, Update};
use bravebot_core::tools::DiskOnly;

use crate::{screen, setup};

/// Writes the transcript to stdout: plain text, or one JSON update per line.
struct ExecScreen {
    json: bool,
    /// Whether the last thing written was agent text without a newline yet.
    mid_line: Mutex<bool>,
}

impl ExecScreen {
    fn line(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let mut mid = self.mid_line.lock().unwrap_or_else(|p| p.into_inner());
        if *mid {
            let _ = out.write_all(b"\n");
            *mid = false;
        }
        let _ = writeln!(out, "{text}");
    }
}

impl Screen for ExecScreen {
    fn update(&self, update: Update) {
        if self.json {
            let wire = screen::wire_update(update);
            if let Ok(text) = serde_json::to_string(&wire) {
                self.line(&text);
            }
            return;
        }
        match update {
            Update::AgentText { delta } => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(delta.as_bytes());
                let _ = out.flush();
                *self.mid_line.lock().unwrap_or_else(|p| p.into_inner()) = !delta.ends_with('\n');
            }
            Update::ToolCall {
                tool, why, routing, ..
            } => {
                self.line(&format!(
                    "→ {tool} {routing}{}",
                    if why.is_empty() {
                        String::new()
                    } else {
                        format!("  ({why})")
                    }
                ));
            }
            Update::ToolResult {
                status, summary, ..
            } => self.line(&format!("  {}: {summary}", status.as_str())),
            Update::Quarantined { reference, origin } => {
                self.line(&format!("  quarantined {origin} as {reference}"));
            }
            Update::Check {
                state: CheckState::Started { lines },
            } => {
                self.line(&format!(
                    "  a check is reading {lines} lines nobody vouched for"
                ));
            }
            Update::Check {
                state: CheckState::Ended { completed },
            } => {
                self.line(if completed {
                    "  the check ended"
                } else {
                    "  the check failed"
                });
            }
            Update::Plan { todos } => {
                for t in todos {
                    self.line(&format!("  [{}] {}", t.status, t.content));
                }
            }
            Update::Remark { text } => {
                // The screen is one of the places untrusted bytes may go; the margin marks them.
                for line in bravebot_core::kernel::policy::to_screen(&text).lines() {
                    self.line(&format!("  │ {line}"));
                }
            }
            // A headless run's transcript is often read by another program, so what a run printed
            // stays in its slot here; the tool line says how it ended.
            Update::RunOutput { .. } | Update::TurnEnded { .. } => {}
        }
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        self.line(&format!(
            "  refused without asking (nobody is watching): {}",
            question.title
        ));
        Box::pin(async { Answer::Refused })
    }

    fn interactive(&self) -> bool {
        false
    }
}

pub async fn run(egress: Arc<Egress>, prompt: String, json: bool, vet: bool) -> ExitCode {
    let cwd = match std::env::current_dir().and_then(std::fs::canonicalize) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "bravebot: no working directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let screen = Arc::new(ExecScreen {
        json,
        mid_line: Mutex::new(false),
    });
    let session = setup::open_session(
        cwd,
        None,
        egress,
        Arc::new(DiskOnly),
        |_| screen.clone(),
        |s| {
            // `--vet` is the narrowest switch in time and outranks the other two (seed 000).
            if vet {
                s.vetting_auto = true;
                s.vetting_auto_source = "--vet";
            }
        },
    );
    let base_url = session.settings.model.base_url.clone();
    let stop = match session.prompt(prompt, Vec::new()).await {
        Ok(stop) => stop,
        Err(e) => StopReason::Error(e.to_string()),
    };
    session.end();
    if json {
        screen.line(&serde_json::json!({"kind": "stop", "stopReason": stop.as_str()}).to_string());
    } else {
        screen.line("");
    }
    match stop {
        StopReason::EndTurn => ExitCode::SUCCESS,
        StopReason::Error(message) => {
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: the turn ended in an error: {message}\n\
                 The model endpoint is {base_url}. To use another, set BRAVEBOT_MODEL_URL, or `model.baseUrl` in \
                 ~/.bravebot/settings.json (and BRAVEBOT_MODEL / BRAVEBOT_MODEL_API for the model and its API)."
            );
            ExitCode::FAILURE
        }
        other => {
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: the turn stopped: {}",
                other.as_str()
            );
            ExitCode::FAILURE
        }
    }
}
