//! Context integrity: what a planner's context has met, and what that forbids from then on.
//!
//! A planner whose context was shown anything untrusted produces output that is a function of
//! those bytes. From that point it may not name a reference (which would route quarantined
//! content somewhere of its choosing), ask the person a question (which could have been shaped by
//! the content) or start a delegate (whose task would be). References it was handed do not count:
//! a reference carries no instruction.

use super::label::{Integrity, Label};

/// The things a tainted context may not do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    NameReference,
    AskQuestion,
    Delegate,
}

impl Capability {
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::NameReference => "name a reference",
            Capability::AskQuestion => "ask a question",
            Capability::Delegate => "start a delegate",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct PlannerContext {
    label: Option<Label>,
    /// Bytes nobody vouched for were released into the context on a person's (or auto-vetting's)
    /// endorsement of that one slot: the endorsement makes them readable, not harmless.
    released: bool,
}

impl PlannerContext {
    /// Notes that the planner is about to be shown something with this label.
    pub fn observe(&mut self, label: Label) {
        self.label = Some(self.label().join(label));
    }

    /// The join of everything the context holds; `(T,pub)` when it holds nothing.
    pub fn label(&self) -> Label {
        self.label.unwrap_or(Label::TRUSTED_PUBLIC)
    }

    /// Notes that one slot's bytes were released into the context on an endorsement.
    pub fn observe_release(&mut self) {
        self.released = true;
    }

    /// Whether the context holds anything untrusted, released on an endorsement or not.
    pub fn met_untrusted(&self) -> bool {
        self.released || matches!(self.label().integrity, Integrity::Untrusted)
    }

    /// Whether the context may still use `capability`.
    pub fn permits(&self, capability: Capability) -> Result<(), Capability> {
        if self.met_untrusted() {
            Err(capability)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: CTX-1
    #[test]
    fn context_tainted_by_untrusted_forbids_references_questions_and_delegates() {
        let mut ctx = PlannerContext::default();
        ctx.observe(Label::TRUSTED_PRIVATE);
        for cap in [
            Capability::NameReference,
            Capability::AskQuestion,
            Capability::Delegate,
        ] {
            assert_eq!(ctx.permits(cap), Ok(()));
        }
        ctx.observe(Label::UNTRUSTED_PUBLIC);
        for cap in [
            Capability::NameReference,
            Capability::AskQuestion,
            Capability::Delegate,
        ] {
            assert_eq!(ctx.permits(cap), Err(cap));
        }
        ctx.observe(Label::TRUSTED_PUBLIC);
        assert!(ctx.met_untrusted(), "a context never becomes clean again");
        assert_eq!(ctx.label(), Label::UNTRUSTED_PRIVATE);
        let mut endorsed = PlannerContext::default();
        endorsed.observe_release();
        assert_eq!(
            endorsed.permits(Capability::AskQuestion),
            Err(Capability::AskQuestion)
        );
        assert!(
            endorsed.label().is_trusted(),
            "a release endorsed by a person taints no routing"
        );
    }
}
