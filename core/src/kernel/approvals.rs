//! The person's standing approvals in one session: plain data, no clock, no IO.
//!
//! One store keyed by what was approved ([`ApprovalKey`]): a file the person let the agent edit
//! for the session, a plan they let run unasked, an output slot of a run they approved once
//! (which they may still allow for the session from its `readOutput` question), and their answer
//! to an `ask_user` question. It is written only through the methods that record a gesture of
//! the person's (`person_*`, `run_approved_once`), and read by the decisions in
//! `kernel::decide`. A delegate's session starts with an empty one: what the person
//! approved for the turn's context is not the delegate's.
//!
//! Beside it, the paths offered a `trustRead` question this turn (once per path per turn), which
//! a new turn forgets.

use std::path::{Path, PathBuf};

use super::slot::SlotId;

/// What a standing approval is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalKey {
    /// Edits to this file land unasked (when the data is trusted).
    Edit(PathBuf),
    /// This plan (by identity) runs unasked.
    Plan(String),
    /// This output slot of a run approved once may allow its plan for the session.
    Output(SlotId),
    /// The person's answer to this `ask_user` question.
    Answer(String),
    /// Lines that can run confined run unasked, confined (RUN-17).
    Confined,
}

/// What the person gave, beside its key.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Given {
    Edit,
    /// The line that first compiled to the plan, for status.
    Plan {
        line: String,
    },
    /// The plan's identity and the line as first written.
    Output {
        identity: String,
        line: String,
    },
    Answer {
        text: String,
    },
    Confined,
}

/// The session's standing approvals, in the order the person gave them.
#[derive(Clone, Debug, Default)]
pub struct Approvals {
    given: Vec<(ApprovalKey, Given)>,
    offered_this_turn: Vec<PathBuf>,
}

impl Approvals {
    fn get(&self, key: &ApprovalKey) -> Option<&Given> {
        self.given.iter().find(|(k, _)| k == key).map(|(_, g)| g)
    }

    fn give(&mut self, key: ApprovalKey, given: Given) {
        self.given.push((key, given));
    }

    /// The person chose "allow always" on an edit of `path`.
    pub fn person_allowed_edits(&mut self, path: PathBuf) {
        self.give(ApprovalKey::Edit(path), Given::Edit);
    }

    /// Whether the person allowed edits to `path` for the session.
    pub fn edits_allowed(&self, path: &Path) -> bool {
        self.get(&ApprovalKey::Edit(path.to_path_buf())).is_some()
    }

    /// Files the person allowed edits to, in the order they did.
    pub fn edited_files(&self) -> impl Iterator<Item = &Path> {
        self.given.iter().filter_map(|(k, _)| match k {
            ApprovalKey::Edit(p) => Some(p.as_path()),
            _ => None,
        })
    }

    /// The person allowed the plan `identity` (first written as `line`) for the session.
    pub fn person_allowed_plan(&mut self, identity: String, line: String) {
        self.give(ApprovalKey::Plan(identity), Given::Plan { line });
    }

    /// Whether the person allowed the plan `identity` for the session.
    pub fn plan_allowed(&self, identity: &str) -> bool {
        self.get(&ApprovalKey::Plan(identity.to_string())).is_some()
    }

    /// The lines of the plans the person allowed, in the order they did.
    pub fn allowed_plans(&self) -> impl Iterator<Item = &str> {
        self.given.iter().filter_map(|(_, g)| match g {
            Given::Plan { line } => Some(line.as_str()),
            _ => None,
        })
    }

    /// The person approved once the run of plan `identity` (written `line`) whose output is in
    /// `slot`: its `readOutput` question may offer the plan for the session.
    pub fn run_approved_once(&mut self, slot: SlotId, identity: String, line: String) {
        self.give(ApprovalKey::Output(slot), Given::Output { identity, line });
    }

    /// The plan's identity and line behind an output slot that may allow it for the session.
    pub fn rememberable(&self, slot: SlotId) -> Option<(String, String)> {
        match self.get(&ApprovalKey::Output(slot)) {
            Some(Given::Output { identity, line }) => Some((identity.clone(), line.clone())),
            _ => None,
        }
    }

    /// The person answered `question` with `text` (or skipped it): it is not asked again.
    pub fn person_answered(&mut self, question: String, text: String) {
        self.give(ApprovalKey::Answer(question), Given::Answer { text });
    }

    /// The person's answer to `question`, if they gave one this session.
    pub fn answer(&self, question: &str) -> Option<&str> {
        match self.get(&ApprovalKey::Answer(question.to_string())) {
            Some(Given::Answer { text }) => Some(text),
            _ => None,
        }
    }

    /// The person chose, on a run question, to let lines run confined without a question for the
    /// rest of the session.
    pub fn person_allowed_confined(&mut self) {
        if !self.confined_allowed() {
            self.give(ApprovalKey::Confined, Given::Confined);
        }
    }

    /// Whether the person let lines run confined without a question this session.
    pub fn confined_allowed(&self) -> bool {
        self.get(&ApprovalKey::Confined).is_some()
    }

    /// `path` was offered a `trustRead` question this turn.
    pub fn offered(&mut self, path: PathBuf) {
        self.offered_this_turn.push(path);
    }

    /// Whether `path` was offered a `trustRead` question this turn.
    pub fn was_offered(&self, path: &Path) -> bool {
        self.offered_this_turn.iter().any(|p| p == path)
    }

    /// A new turn: every path may be offered again.
    pub fn new_turn(&mut self) {
        self.offered_this_turn.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: APPROVE-1
    #[test]
    fn each_approval_is_found_by_its_key_alone() {
        let mut a = Approvals::default();
        a.person_allowed_edits(PathBuf::from("/w/a.rs"));
        a.person_allowed_plan("plan-1".into(), "make".into());
        a.person_answered("Which?".into(), "the first".into());
        assert!(a.edits_allowed(Path::new("/w/a.rs")));
        assert!(!a.edits_allowed(Path::new("/w/b.rs")));
        assert!(a.plan_allowed("plan-1"));
        assert!(!a.plan_allowed("/w/a.rs"), "a path is no plan");
        assert_eq!(a.answer("Which?"), Some("the first"));
        assert_eq!(a.answer("plan-1"), None, "a plan is no answer");
        assert_eq!(a.allowed_plans().collect::<Vec<_>>(), ["make"]);
        assert_eq!(a.edited_files().collect::<Vec<_>>(), [Path::new("/w/a.rs")]);
        a.offered(PathBuf::from("/w/c.md"));
        assert!(a.was_offered(Path::new("/w/c.md")));
        a.new_turn();
        assert!(!a.was_offered(Path::new("/w/c.md")));
        assert!(
            a.plan_allowed("plan-1"),
            "a new turn keeps what the person allowed"
        );
    }
}
