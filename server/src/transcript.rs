//! How a turn is printed on a terminal: the answer as it streams, each tool call and its result,
//! references, checks, remarks and the plan. `bravebot exec` and `bravebot demo` both print
//! through [`Transcript`], so the demonstration shows a turn exactly as `exec` would.

use std::io::Write;
use std::sync::Mutex;

use bravebot_core::screen::{CheckState, Update};

use crate::screen;

/// Writes a turn to stdout: plain text, or one JSON update per line.
pub struct Transcript {
    json: bool,
    /// Whether the last thing written was agent text without a newline yet.
    mid_line: Mutex<bool>,
}

impl Transcript {
    pub fn new(json: bool) -> Transcript {
        Transcript {
            json,
            mid_line: Mutex::new(false),
        }
    }

    /// Writes one whole line, first ending any streamed text left open.
    pub fn line(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let mut mid = self.mid_line.lock().unwrap_or_else(|p| p.into_inner());
        if *mid {
            let _ = out.write_all(b"\n");
            *mid = false;
        }
        let _ = writeln!(out, "{text}");
    }

    /// Prints one update of the turn.
    pub fn show(&self, update: Update) {
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
                state: CheckState::Started { lines, file },
                ..
            } => {
                self.line(&match file {
                    Some("pdf") => "  a check is reading a PDF nobody vouched for".to_string(),
                    Some(_) => "  a check is reading a picture nobody vouched for".to_string(),
                    None => format!("  a check is reading {lines} lines nobody vouched for"),
                });
            }
            Update::Check {
                state: CheckState::Ended { completed, verdict },
                ..
            } => {
                self.line(&if completed {
                    format!("  the check ended: {}", verdict.as_str())
                } else {
                    "  the check failed: inconclusive".to_string()
                });
            }
            Update::Plan { todos } => {
                for t in todos {
                    self.line(&format!("  [{}] {}", t.status, t.content));
                }
            }
            Update::Notice { text } => self.line(&format!("-- {text}")),
            Update::Remark { text } => {
                // The screen is one of the places untrusted bytes may go; the margin marks them.
                for line in bravebot_core::kernel::policy::to_screen(&text).lines() {
                    self.line(&format!("  │ {line}"));
                }
            }
            Update::HeldBack {
                path,
                verdict,
                reasons,
            } => {
                self.line(&format!(
                    "  {path} is held back: a check judged its bytes {}",
                    verdict.as_str()
                ));
                // The screen is one of the places untrusted bytes may go; the margin marks them.
                if let Some(reasons) = reasons {
                    for line in bravebot_core::kernel::policy::to_screen(&reasons).lines() {
                        self.line(&format!("  │ {line}"));
                    }
                }
            }
            Update::Delegate {
                number,
                name,
                state,
                report,
                ..
            } => {
                self.line(&format!("  delegate {number} ({name}): {state}"));
                // The screen is one of the places untrusted bytes may go; the margin marks them.
                if let Some(report) = report {
                    for line in bravebot_core::kernel::policy::to_screen(&report).lines() {
                        self.line(&format!("  │ {line}"));
                    }
                }
            }
            // A headless run's transcript is often read by another program, so what a run printed
            // stays in its slot here; the tool line says how it ended.
            Update::Checkpoint {
                checkpoint_id,
                files,
            } => {
                if !files.is_empty() {
                    self.line(&format!(
                        "checkpoint {checkpoint_id}: {} changed ({})",
                        files.len(),
                        files.join(", ")
                    ));
                }
            }
            Update::AutoVetting { on, source } => {
                self.line(&bravebot_core::vetting::banner(
                    bravebot_core::vetting::AutoVettingState { on, source },
                ));
            }
            // Counts are for a screen with a meter; `--json` carries them.
            Update::RunOutput { .. } | Update::TurnEnded { .. } | Update::Usage { .. } => {}
        }
    }
}
