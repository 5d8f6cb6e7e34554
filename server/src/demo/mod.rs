//! `bravebot demo`: one real turn against a scripted model built into the binary, over a sample
//! project in a temporary directory, printed as `bravebot exec` prints a turn.
//!
//! Only the model is scripted. The session is a normal one: the turn loop, the tools, the gates,
//! the check and the policy layer all run as they do against a real model, so what the transcript
//! shows (a file read after a check passed it, a README that comes back as a reference, an edit
//! put as a question) is bravebot working, not a picture of it. Two things differ from `exec`, and
//! both keep the demonstration on this machine and out of the person's files:
//!
//! - no settings file is read, and no model setting, proxy or credential is taken from the
//!   environment: the model is the one in [`model`], reached through an egress built with no
//!   proxy;
//! - the questions are answered by the demonstration's script, which says so on screen each time.

mod model;
mod sample;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use bravebot_core::egress::Egress;
use bravebot_core::files::DiskOnly;
use bravebot_core::kernel::policy;
use bravebot_core::model::{Api, ModelClient, ModelConfig};
use bravebot_core::screen::{
    Answer, BoxFuture, Question, QuestionKind, Screen, StopReason, Update,
};
use bravebot_core::session::{Session, SessionConfig};
use bravebot_core::settings::Settings;

use crate::setup;
use crate::transcript::Transcript;

/// Printed before the turn, word for word.
pub const LABEL: &str = "This is a scripted demonstration model built into bravebot, not a real model; nothing leaves this machine.";

/// What the person asks in the demonstration.
const PROMPT: &str =
    "Add a farewell function next to greet in src/greet.py, and tell me what the README asks for.";

/// The screen of the demonstration: the turn is printed as `exec` prints it, and each question is
/// answered from the script, saying so.
struct DemoScreen {
    transcript: Transcript,
}

impl DemoScreen {
    /// The script's answer: a file the check did not clear stays quarantined; every other
    /// question is approved once. Chosen by the question's kind and its options' kinds, which are
    /// structure the session wrote, never by what the question shows.
    fn scripted_choice(question: &Question) -> Option<&bravebot_core::screen::QuestionOption> {
        question.first_once(question.kind != QuestionKind::TrustRead)
    }
}

impl Screen for DemoScreen {
    fn update(&self, update: Update) {
        self.transcript.show(update);
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        let t = &self.transcript;
        t.line(&format!("  question for the person: {}", question.title));
        if let Some(verdict) = question.subject.verdict {
            t.line(&format!("  the check's verdict: {}", verdict.as_str()));
        }
        if question.subject.content.is_some() {
            // An editor would show the file's first lines inside its untrusted margin; the
            // demonstration leaves them out so that its transcript carries none of the planted
            // text.
            t.line("  (an editor shows the file's first lines here, marked as unvouched for)");
        }
        if let Some(diff) = &question.subject.diff {
            for line in policy::to_screen(diff).lines() {
                t.line(&format!("  │ {line}"));
            }
        }
        let offered: Vec<&str> = question.options.iter().map(|o| o.name.as_str()).collect();
        t.line(&format!("  options: {}", offered.join(" / ")));
        let answer = match DemoScreen::scripted_choice(&question) {
            Some(option) => {
                t.line(&format!(
                    "  the demonstration answers: {} (its script chose this; no person was asked)",
                    option.name
                ));
                Answer::select(option.id.clone())
            }
            None => {
                t.line("  the demonstration answers: no (its script found no option to choose)");
                Answer::Refused
            }
        };
        Box::pin(async move { answer })
    }

    fn interactive(&self) -> bool {
        true
    }
}

pub async fn run() -> ExitCode {
    let id = setup::new_session_id();
    let sample = match sample::SampleDir::create(&id) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: the demonstration's sample project could not be written: {e}"
            );
            return ExitCode::FAILURE;
        }
    };
    let model = match model::DemoModel::start().await {
        Ok(m) => m,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: the demonstration model could not listen on 127.0.0.1: {e}"
            );
            return ExitCode::FAILURE;
        }
    };
    // An environment that names no proxy and no certificates: the only endpoint is the loopback
    // port above, and a proxy from the person's environment would take even that elsewhere.
    let egress = match Egress::from_env(&|_| None) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: the demonstration's connection could not be set up: {e}"
            );
            return ExitCode::FAILURE;
        }
    };
    let screen = Arc::new(DemoScreen {
        transcript: Transcript::new(false),
    });
    let session = demo_session(&sample, &model, egress, id, screen.clone());
    let transcript = &screen.transcript;
    transcript.line(LABEL);
    transcript.line(&format!(
        "The sample project is {}; it is removed when the demonstration ends, with the \
         session's audit trail at {}.",
        sample.workspace().display(),
        sample.audit_log().display()
    ));
    transcript.line(&format!("The person asks: {PROMPT}"));
    transcript.line("");
    let stop = match session.prompt(PROMPT.to_owned(), Vec::new()).await {
        Ok(stop) => stop,
        Err(e) => StopReason::Error(e.to_string()),
    };
    session.end();
    transcript.line("");
    transcript.line(
        "What the gates decided (the session's audit trail, with no content in it; where it says \
         \"the person\", the demonstration's script answered):",
    );
    for record in session.audit_records() {
        transcript.line(&format!(
            "  {} {}: {}",
            record.gate.as_str(),
            record.decision.as_str(),
            record.detail
        ));
    }
    drop(session);
    drop(model);
    drop(sample);
    transcript.line("");
    for line in NEXT_STEPS {
        transcript.line(line);
    }
    match stop {
        StopReason::EndTurn => ExitCode::SUCCESS,
        other => {
            let detail = match &other {
                StopReason::Error(message) => message.clone(),
                _ => other.as_str().to_owned(),
            };
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: the demonstration's turn did not end as scripted: {detail}"
            );
            ExitCode::FAILURE
        }
    }
}

/// How to go on from the demonstration to a real model.
const NEXT_STEPS: [&str; 7] = [
    "To point bravebot at a real model, set the environment:",
    "  export BRAVEBOT_MODEL_URL=http://127.0.0.1:11434/v1 BRAVEBOT_MODEL=llama3.2",
    "  (add BRAVEBOT_API_KEY=... where the endpoint needs a key, and BRAVEBOT_MODEL_API=anthropic for Anthropic)",
    "or put the same in ~/.bravebot/settings.json:",
    r#"  {"model": {"baseUrl": "https://api.openai.com/v1", "name": "gpt-4.1", "apiKeyEnv": "OPENAI_API_KEY"}}"#,
    "Then run `bravebot doctor` to see whether it answers, and `bravebot exec \"PROMPT\"` or your",
    "editor to work with it.",
];

/// A session over the sample, talking to the scripted model, with the built-in defaults for
/// everything else: no settings file is read, no credential is looked up.
fn demo_session(
    sample: &sample::SampleDir,
    model: &model::DemoModel,
    egress: Arc<Egress>,
    id: String,
    screen: Arc<DemoScreen>,
) -> Session {
    let mut settings = Settings::default();
    settings.model.api = Api::OpenAi;
    settings.model.base_url = model.base_url();
    model::MODEL_NAME.clone_into(&mut settings.model.name);
    let client = ModelClient::new(
        ModelConfig {
            api: Api::OpenAi,
            base_url: settings.model.base_url.clone(),
            name: settings.model.name.clone(),
            api_key: None,
        },
        egress,
    );
    let cwd = sample.workspace().to_path_buf();
    let config = SessionConfig {
        audit_log: Some(sample.audit_log()),
        id,
        facts: setup::facts(&cwd),
        cwd,
        settings,
    };
    Session::new(config, client, screen, Arc::new(DiskOnly))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(kind: QuestionKind) -> Question {
        Question::approve(kind, "t")
            .allow_once("yes", "yes")
            .allow_always("always", "always")
            .reject("no", "no")
    }

    // Verifies: BIN-4
    #[test]
    fn the_script_keeps_an_uncleared_file_quarantined_and_approves_the_rest_once() {
        let chosen = |kind| DemoScreen::scripted_choice(&question(kind)).map(|o| o.id.clone());
        assert_eq!(chosen(QuestionKind::TrustRead), Some("no".to_owned()));
        assert_eq!(chosen(QuestionKind::Edit), Some("yes".to_owned()));
        assert_eq!(chosen(QuestionKind::Run), Some("yes".to_owned()));
    }
}
