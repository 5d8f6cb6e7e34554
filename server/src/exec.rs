//! `bravebot exec`: one headless turn in the current directory. Nobody is watching, so every
//! question is refused without being put, and the transcript says so. The session is recorded like
//! any other, so what the turn changed is a checkpoint `bravebot restore` puts back (CKPT-10).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use bravebot_core::egress::Egress;
use bravebot_core::files::DiskOnly;
use bravebot_core::screen::{Answer, BoxFuture, Question, Screen, StopReason, Update};

use crate::setup;
use crate::transcript::Transcript;

/// The screen of a headless turn: everything is printed, and every question is refused.
struct ExecScreen {
    transcript: Transcript,
    /// The turn's checkpoint, once it is known to hold a change.
    checkpoint: std::sync::Mutex<Option<String>>,
}

impl Screen for ExecScreen {
    fn update(&self, update: Update) {
        if let Update::Checkpoint {
            checkpoint_id,
            files,
        } = &update
            && !files.is_empty()
        {
            *self.checkpoint.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(checkpoint_id.clone());
        }
        self.transcript.show(update);
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        self.transcript.line(&format!(
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
        transcript: Transcript::new(json),
        checkpoint: std::sync::Mutex::new(None),
    });
    let session = setup::open_session(
        cwd,
        setup::Opening::Fresh,
        None,
        egress,
        Arc::new(DiskOnly),
        |_| screen.clone(),
        |s| {
            // `--vet` is the narrowest switch in time and outranks the other two (seed 000).
            bravebot_core::settings::apply_vetting_switches(s, None, vet, &mut Vec::new());
        },
    );
    // Recorded like any session, so its checkpoint outlives the run (CKPT-10).
    let session = match setup::state_dir() {
        Some(state) => session.keeping_records(state),
        None => session,
    };
    // A run with the mode on says so at the top of its transcript, before any slot can reach
    // the planner; a run asking as usual says nothing (VET-23).
    let vetting = session.auto_vetting.get();
    if vetting.on {
        screen.transcript.show(Update::AutoVetting {
            on: true,
            source: vetting.source,
        });
    }
    let id = session.id.clone();
    let base_url = session.settings.model.base_url.clone();
    let stop = match session.prompt(prompt, Vec::new()).await {
        Ok(stop) => stop,
        Err(e) => StopReason::Error(e.to_string()),
    };
    session.end();
    let checkpoint = screen
        .checkpoint
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if json {
        let mut line =
            serde_json::json!({"kind": "stop", "stopReason": stop.as_str(), "sessionId": id});
        if let Some(c) = &checkpoint {
            line["undo"] = serde_json::json!(["bravebot", "restore", c, id]);
        }
        screen.transcript.line(&line.to_string());
    } else {
        screen.transcript.line("");
        if let Some(c) = &checkpoint {
            screen.transcript.line(&format!(
                "undo this turn's changes with: bravebot restore {c} {id}"
            ));
        }
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
