//! Context integrity: what a planner's context has met, and what that forbids from then on.
//!
//! A planner whose context was shown anything untrusted produces output that is a function of
//! those bytes. From that point it may not name a reference (which would route quarantined
//! content somewhere of its choosing), ask the person a question (which could have been shaped by
//! the content) or start a delegate (whose task would be). References it was handed do not count:
//! a reference carries no instruction.
//!
//! A release (a person's yes, or auto-vetting, at `vet_content` or `read_output`) makes one slot's
//! bytes readable; it does not make them harmless. The context's label takes the released value's
//! label, so everything the planner composes afterwards is labelled by that content, and
//! [`PlannerContext::routing`] says its routing is no longer its own: each effect must be put to
//! the person (CTX-2).

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

/// Who may stand behind a routing argument the planner wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// The context holds nothing untrusted: its routing is its own, and the session's standing
    /// answers (modes, remembered plans, allow rules) may answer for the person.
    Own,
    /// The context met released content: its routing is a function of bytes nobody vouched for,
    /// so no effect lands without the person's yes to that one effect.
    PersonOnly,
}

#[derive(Clone, Debug, Default)]
pub struct PlannerContext {
    label: Option<Label>,
    /// The join of the labels of every slot released into the context on a person's (or
    /// auto-vetting's) endorsement: the endorsement makes those bytes readable, not harmless.
    released: Option<Label>,
    /// How many releases the context has met: a tool result that came back with the count moved
    /// carries released bytes.
    releases: u32,
}

impl PlannerContext {
    /// Notes that the planner is about to be shown something with this label.
    pub fn observe(&mut self, label: Label) {
        self.label = Some(self.label().join(label));
    }

    /// The join of everything the context holds, released content included; `(T,pub)` when it
    /// holds nothing. What the planner composes is labelled with this.
    pub fn label(&self) -> Label {
        let presented = self.label.unwrap_or(Label::TRUSTED_PUBLIC);
        self.released.map_or(presented, |r| presented.join(r))
    }

    /// The join of what was presented, without what was released; `(T,pub)` when nothing was.
    pub fn presented(&self) -> Label {
        self.label.unwrap_or(Label::TRUSTED_PUBLIC)
    }

    /// The join of what was released on an endorsement, if anything was.
    pub fn released(&self) -> Option<Label> {
        self.released
    }

    /// Notes that one slot's bytes, labelled `label`, were released into the context on an
    /// endorsement. The context takes that label: it only ever degrades.
    pub fn observe_release(&mut self, label: Label) {
        self.released = Some(self.released.map_or(label, |r| r.join(label)));
        self.releases = self.releases.saturating_add(1);
    }

    /// How many releases the context has met.
    pub fn releases(&self) -> u32 {
        self.releases
    }

    /// Whether the context holds anything untrusted, released on an endorsement or not.
    pub fn met_untrusted(&self) -> bool {
        self.released.is_some() || matches!(self.label().integrity, Integrity::Untrusted)
    }

    /// Whether the context met content released on an endorsement.
    pub fn met_released(&self) -> bool {
        self.released.is_some()
    }

    /// Who may stand behind the routing this context writes.
    pub fn routing(&self) -> Routing {
        if self.met_untrusted() {
            Routing::PersonOnly
        } else {
            Routing::Own
        }
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
        endorsed.observe_release(Label::UNTRUSTED_PRIVATE);
        assert_eq!(
            endorsed.permits(Capability::AskQuestion),
            Err(Capability::AskQuestion)
        );
    }

    // Verifies: CTX-2
    #[test]
    fn a_release_taints_the_context_and_takes_its_routing_away() {
        let mut ctx = PlannerContext::default();
        assert_eq!(ctx.routing(), Routing::Own);
        ctx.observe(Label::TRUSTED_PUBLIC);
        ctx.observe_release(Label::UNTRUSTED_PUBLIC);
        assert_eq!(
            ctx.label(),
            Label::UNTRUSTED_PUBLIC,
            "the release's label is joined"
        );
        assert_eq!(ctx.routing(), Routing::PersonOnly);
        assert!(ctx.met_released());
        ctx.observe(Label::TRUSTED_PRIVATE);
        assert_eq!(
            ctx.label(),
            Label::UNTRUSTED_PRIVATE,
            "and it never improves"
        );
        assert_eq!(ctx.routing(), Routing::PersonOnly);
    }
}
