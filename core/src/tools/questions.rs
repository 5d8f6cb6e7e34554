//! Putting a question to the person and writing what became of it to the audit trail, from one
//! place (REL-7). A tool builds its question with [`Question::approve`] and puts it with
//! `Call::ask_recorded` (or, where no call is open, [`ask_recorded`]); it names the words of the
//! record, and this writes the record at the question gate with the decision those words carry.

use tokio_util::sync::CancellationToken;

use crate::kernel::audit::{Decision, Gate};
use crate::screen::{Answer, Question, QuestionOption};
use crate::session::Session;

/// What the person answered to a question: the answer, and the option it chose if the question
/// offered it.
pub struct Asked {
    pub answer: Answer,
    pub chosen: Option<QuestionOption>,
}

impl Asked {
    /// A selected, offered, approving option.
    pub fn approved(&self) -> bool {
        self.chosen.as_ref().is_some_and(|o| o.kind.approves())
    }

    /// An approving option that lasts the session (`allow_always`).
    pub fn allowed_always(&self) -> bool {
        self.chosen
            .as_ref()
            .is_some_and(|o| o.kind.approves() && o.kind.lasts())
    }

    /// A refusing option that lasts the session (`reject_always`).
    pub fn refused_always(&self) -> bool {
        self.chosen
            .as_ref()
            .is_some_and(|o| !o.kind.approves() && o.kind.lasts())
    }

    /// The id of the option chosen, if the question offered it.
    pub fn id(&self) -> Option<&str> {
        self.chosen.as_ref().map(|o| o.id.as_str())
    }

    /// The record's words: `allowed` on an approval, `refused` on anything else.
    pub fn said(&self, allowed: impl Into<String>, refused: impl Into<String>) -> Said {
        if self.approved() {
            Said::Allowed(allowed.into())
        } else {
            Said::Refused(refused.into())
        }
    }
}

/// The audit record of an answered question: its decision and its detail.
pub enum Said {
    Allowed(String),
    Refused(String),
}

/// Puts `question` to the person and waits for the answer: a cancelled turn refuses it, and so
/// does the session's screen when nobody answers within `questions.timeoutSeconds`, which is
/// written to the audit trail here, whatever the asker records of the refusal (ATTN-1). Every
/// question a tool puts passes here.
pub async fn put(session: &Session, cancel: &CancellationToken, question: Question) -> Answer {
    let kind = question.kind.as_str();
    let answer = tokio::select! {
        a = session.screen.ask(question) => a,
        () = cancel.cancelled() => Answer::Refused,
    };
    if let Answer::TimedOut { seconds } = answer {
        session.state().audit.record(
            Gate::Question,
            Decision::Refused,
            format!("{kind} question: nobody answered within {seconds} s (questions.timeoutSeconds), refused"),
        );
    }
    answer
}

/// Puts `question` to the person (a cancelled turn refuses it), and writes the record `said`
/// makes of the answer at the question gate.
pub async fn ask_recorded(
    session: &Session,
    cancel: &CancellationToken,
    question: Question,
    said: impl FnOnce(&Asked) -> Said,
) -> Asked {
    // Only the options are needed to read the answer: the question is handed over whole, since
    // its texts may be large and shared.
    let offered = question.options.clone();
    let answer = put(session, cancel, question).await;
    let chosen = answer.chosen_among(&offered).cloned();
    let asked = Asked { answer, chosen };
    let (decision, detail) = match said(&asked) {
        Said::Allowed(d) => (Decision::Allowed, d),
        Said::Refused(d) => (Decision::Refused, d),
    };
    session
        .state()
        .audit
        .record(Gate::Question, decision, detail);
    asked
}
