//! `bravebot checkpoints [SESSION]` and `bravebot restore CHECKPOINT [SESSION]`: a recorded
//! session's checkpoints from the command line, the session being the one named or the newest
//! recorded in the current directory. Nobody is asked anything here: a file the person changed
//! after the agent is left as it is, and the command says so.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use bravebot_core::egress::Egress;
use bravebot_core::files::DiskOnly;
use bravebot_core::screen::{Answer, BoxFuture, Question, Screen, Update};

use crate::setup;

/// What the command line asked for.
pub enum Command {
    List {
        session: Option<String>,
    },
    Restore {
        checkpoint: String,
        session: Option<String>,
    },
}

/// A screen nobody watches: nothing is drawn, and every question is refused without being put.
struct Unwatched;

impl Screen for Unwatched {
    fn update(&self, _update: Update) {}

    fn ask(&self, _question: Question) -> BoxFuture<'_, Answer> {
        Box::pin(async { Answer::Refused })
    }

    fn interactive(&self) -> bool {
        false
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "bravebot: {message}");
    ExitCode::FAILURE
}

pub async fn run(egress: Arc<Egress>, command: Command) -> ExitCode {
    let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize) else {
        return fail("no working directory");
    };
    let Some(state) = setup::state_dir() else {
        return fail("HOME is not set: there is no ~/.bravebot with sessions in it");
    };
    let named = match &command {
        Command::List { session } | Command::Restore { session, .. } => session.clone(),
    };
    let id = match named {
        Some(id) => id,
        None => {
            let listing = {
                let state = state.clone();
                tokio::task::spawn_blocking(move || state.list().0).await
            };
            let here = cwd.display().to_string();
            match listing
                .unwrap_or_default()
                .into_iter()
                .find(|s| s.cwd == here)
            {
                Some(listed) => listed.id,
                None => {
                    return fail(&format!(
                        "no recorded session worked in {here}; name one (bravebot checkpoints SESSION)"
                    ));
                }
            }
        }
    };
    let loaded = {
        let (state, id) = (state.clone(), id.clone());
        tokio::task::spawn_blocking(move || state.load(&id)).await
    };
    let restored = match loaded {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return fail(&e.to_string()),
        Err(e) => return fail(&format!("reading the record: {e}")),
    };
    let Some(session_cwd) = std::fs::canonicalize(&restored.cwd)
        .ok()
        .filter(|c| c.is_dir())
    else {
        return fail(&format!(
            "session {id} worked in {}, which is not a directory now",
            restored.cwd.display()
        ));
    };
    let session = setup::open_session(
        session_cwd,
        setup::Opening::Resumed(id.clone()),
        None,
        egress,
        Arc::new(DiskOnly),
        |_| Arc::new(Unwatched),
        |_| {},
    )
    .keeping_records(state);
    session.restore(restored);
    let mut out = std::io::stdout();
    let code = match command {
        Command::List { .. } => {
            let listed = session.checkpoints.list();
            if listed.is_empty() {
                let _ = writeln!(out, "session {id} has no checkpoints");
            }
            for c in listed {
                let files: Vec<String> = c
                    .changes
                    .iter()
                    .map(|ch| bravebot_core::paths::display_path(&session.cwd, &ch.path))
                    .collect();
                let _ = writeln!(
                    out,
                    "{}\t{}\t{}\t{}",
                    c.id,
                    c.kind.as_str(),
                    bravebot_core::paths::control_pictures(&c.title),
                    files.join(", ")
                );
            }
            ExitCode::SUCCESS
        }
        Command::Restore { checkpoint, .. } => {
            match session.restore_checkpoint(&checkpoint).await {
                Ok(done) => {
                    for path in &done.restored {
                        if done.removed.contains(path) {
                            let _ = writeln!(out, "removed {path} (it did not exist then)");
                        } else {
                            let _ = writeln!(out, "restored {path}");
                        }
                    }
                    for (path, reason) in &done.skipped {
                        let _ = writeln!(out, "left {path}: {reason}");
                    }
                    let _ = writeln!(out, "undo with: bravebot restore {} {id}", done.undo);
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e.to_string()),
            }
        }
    };
    session.end();
    code
}
