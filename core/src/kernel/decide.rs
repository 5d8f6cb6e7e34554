//! Which effects happen without a question, which are put to the person, and which are refused:
//! one pure function per effect kind, over the person's standing approvals
//! ([`super::approvals::Approvals`]), the trust facts of the context that wrote the call, and
//! facts about the call the tool gathered first (reading files, running checks, matching rules).
//! No clock, no IO: the tool does the async work and writes the audit record; the decision is
//! here, and a table test holds each case (APPROVE-2).

use std::path::Path;

use super::approvals::Approvals;

/// What becomes of an effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// It happens without a question, for this reason.
    Unasked(Why),
    /// It is put to the person; `standing` says whether an approval lasting the session may be
    /// offered.
    Ask { standing: bool },
    /// It is refused without a question, for this reason.
    Refuse(Why),
    /// (`run` only) The files a read-only line reads must be checked first: decide again with
    /// what the check found.
    CheckFirst,
}

/// Why an effect happens or is refused unasked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// `acceptEdits` mode lands writes of trusted data.
    AcceptEditsMode,
    /// The person allowed edits to this file for the session.
    EditsAllowed,
    /// The person allowed this plan for the session.
    PlanAllowed,
    /// The person's allow rule (`run.allow`, `fetch.allow`, `mcp.allow`) names it.
    AllowRule,
    /// The person's deny rule (`fetch.deny`, `mcp.deny`) names it.
    DenyRule,
    /// Read-only table programs over files the person vouched for.
    ReadOnly,
    /// Read-only table programs over files the person vouched for or a check passed.
    ReadOnlyChecked,
    /// The line runs confined by the kernel (`run.confined: unasked`, or the person's choice on
    /// an earlier run question).
    Confined,
    /// The session is in plan mode.
    PlanMode,
    /// Nobody is watching to be asked.
    Unwatched,
}

/// What the context that wrote the call has met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// It met released content: only the person answers for its effects (CTX-2).
    pub person_only: bool,
    /// Its label is trusted and public: it read nothing private and nothing untrusted (GATE-4).
    pub trusted_public: bool,
}

/// An edit or write about to be put or landed (`tools/land.rs`).
#[derive(Clone, Copy, Debug)]
pub struct Edit<'a> {
    pub path: &'a Path,
    /// The file configures the person's tools.
    pub protected: bool,
    /// The planner named the file by a reference, not by its path.
    pub by_reference: bool,
    /// The proposed bytes are trusted.
    pub data_trusted: bool,
    /// The session is in `acceptEdits` mode.
    pub accept_edits: bool,
    pub interactive: bool,
}

/// Whether an edit lands unasked: a standing approval of the person's for a trusted proposal to a
/// file that configures no tool, named by its path, from a context whose routing is its own.
pub fn edit(approvals: &Approvals, context: Context, e: Edit<'_>) -> Decided {
    let own = !e.protected && !e.by_reference && !context.person_only;
    if own && e.interactive && e.data_trusted {
        if approvals.edits_allowed(e.path) {
            return Decided::Unasked(Why::EditsAllowed);
        }
        if e.accept_edits {
            return Decided::Unasked(Why::AcceptEditsMode);
        }
    }
    if !e.interactive {
        return Decided::Refuse(Why::Unwatched);
    }
    Decided::Ask {
        standing: own && e.data_trusted,
    }
}

/// A command line about to run (`tools/run.rs`), compiled to a plan.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// The plan's identity.
    pub identity: &'a str,
    /// It reads or writes a file through a redirect.
    pub touches_files: bool,
    /// It is fed bytes on its input.
    pub fed: bool,
    /// The person's `run.allow` rules name it.
    pub allow_rule: bool,
    /// Every step is a read-only table program over files the person vouched for.
    pub read_only: bool,
    /// After the check of the files it reads: whether every step is a read-only table program
    /// over files vouched for or passed. `None` before any check.
    pub checked: Option<bool>,
    pub plan_mode: bool,
    pub interactive: bool,
    /// The person's own settings say `run.confined: unasked`.
    pub confined_setting: bool,
    /// The kernel can hold this line to the confinement of RUN-17 (Landlock with network
    /// denial here, a directory inside the workspace, programs and named paths it may read).
    pub confinable: bool,
}

/// Whether a line runs unasked: for a line that touches no file through a redirect, is fed
/// nothing and comes from a context whose routing is its own, a plan the person allowed, their
/// `run.allow` rules, or the read-only table over vouched-for files (or, after a check, over files
/// it passed). Otherwise plan mode refuses; a line the kernel can confine runs confined where the
/// person's settings or an earlier answer of theirs says so (RUN-17); nobody watching refuses; and
/// the person is asked.
pub fn run(approvals: &Approvals, context: Context, r: Run<'_>) -> Decided {
    let may_stand = !r.touches_files && !r.fed && !context.person_only;
    if may_stand {
        if approvals.plan_allowed(r.identity) {
            return Decided::Unasked(Why::PlanAllowed);
        }
        if r.allow_rule {
            return Decided::Unasked(Why::AllowRule);
        }
        if r.read_only {
            return Decided::Unasked(Why::ReadOnly);
        }
        match r.checked {
            None => return Decided::CheckFirst,
            Some(true) => return Decided::Unasked(Why::ReadOnlyChecked),
            Some(false) => {}
        }
    }
    if r.plan_mode {
        return Decided::Refuse(Why::PlanMode);
    }
    if may_stand && r.confinable && (r.confined_setting || approvals.confined_allowed()) {
        return Decided::Unasked(Why::Confined);
    }
    if !r.interactive {
        return Decided::Refuse(Why::Unwatched);
    }
    Decided::Ask {
        standing: may_stand,
    }
}

/// A call that a person's rule may answer for (`fetch_url`, an MCP tool's call).
#[derive(Clone, Copy, Debug)]
pub struct Ruled {
    /// A deny rule names it.
    pub denied: bool,
    /// An allow rule names it.
    pub allowed: bool,
    pub interactive: bool,
}

impl Ruled {
    /// An allow rule names the call, but the context that wrote it holds something private, so
    /// the person is asked (GATE-4): the tool notes it in the audit trail.
    pub fn rule_held_back(&self, context: Context) -> bool {
        self.allowed && !context.trusted_public
    }
}

/// Whether a call a rule may answer for goes ahead: a deny rule refuses; an allow rule answers for
/// a context whose routing is its own and that holds nothing private; otherwise the person is
/// asked, or, with nobody watching, it is refused.
pub fn ruled(context: Context, r: Ruled) -> Decided {
    if r.denied {
        return Decided::Refuse(Why::DenyRule);
    }
    if r.allowed && !context.person_only && context.trusted_public {
        return Decided::Unasked(Why::AllowRule);
    }
    if !r.interactive {
        return Decided::Refuse(Why::Unwatched);
    }
    Decided::Ask { standing: false }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const OWN: Context = Context {
        person_only: false,
        trusted_public: false,
    };
    const PUBLIC: Context = Context {
        person_only: false,
        trusted_public: true,
    };
    const RELEASED: Context = Context {
        person_only: true,
        trusted_public: false,
    };

    fn store() -> Approvals {
        let mut a = Approvals::default();
        a.person_allowed_edits(PathBuf::from("/w/allowed.rs"));
        a.person_allowed_plan("make test".into(), "make test".into());
        a
    }

    fn edit_of(path: &str) -> Edit<'_> {
        Edit {
            path: Path::new(path),
            protected: false,
            by_reference: false,
            data_trusted: true,
            accept_edits: false,
            interactive: true,
        }
    }

    // Verifies: APPROVE-2
    #[test]
    fn an_edit_lands_unasked_only_on_a_standing_approval_of_trusted_data() {
        let a = store();
        let e = edit_of("/w/allowed.rs");
        let other = edit_of("/w/other.rs");
        let rows: Vec<(&str, Context, Edit<'_>, Decided)> = vec![
            ("allowed file", OWN, e, Decided::Unasked(Why::EditsAllowed)),
            ("other file", OWN, other, Decided::Ask { standing: true }),
            (
                "acceptEdits",
                OWN,
                Edit {
                    accept_edits: true,
                    ..other
                },
                Decided::Unasked(Why::AcceptEditsMode),
            ),
            (
                "allowed file, untrusted data",
                OWN,
                Edit {
                    data_trusted: false,
                    ..e
                },
                Decided::Ask { standing: false },
            ),
            (
                "acceptEdits, untrusted data",
                OWN,
                Edit {
                    data_trusted: false,
                    accept_edits: true,
                    ..other
                },
                Decided::Ask { standing: false },
            ),
            (
                "allowed file, protected",
                OWN,
                Edit {
                    protected: true,
                    ..e
                },
                Decided::Ask { standing: false },
            ),
            (
                "allowed file, by reference",
                OWN,
                Edit {
                    by_reference: true,
                    accept_edits: true,
                    ..e
                },
                Decided::Ask { standing: false },
            ),
            (
                "allowed file, released context",
                RELEASED,
                Edit {
                    accept_edits: true,
                    ..e
                },
                Decided::Ask { standing: false },
            ),
            (
                "allowed file, nobody watching",
                OWN,
                Edit {
                    interactive: false,
                    accept_edits: true,
                    ..e
                },
                Decided::Refuse(Why::Unwatched),
            ),
        ];
        for (case, context, facts, expected) in rows {
            assert_eq!(edit(&a, context, facts), expected, "{case}");
        }
    }

    fn line(identity: &str) -> Run<'_> {
        Run {
            identity,
            touches_files: false,
            fed: false,
            allow_rule: false,
            read_only: false,
            checked: Some(false),
            plan_mode: false,
            interactive: true,
            confined_setting: false,
            confinable: true,
        }
    }

    // Verifies: APPROVE-2
    #[test]
    fn a_line_runs_unasked_only_for_its_own_routing_on_a_plan_rule_or_read_only_table() {
        let a = store();
        let allowed = line("make test");
        let other = line("rm -rf x");
        let rows: Vec<(&str, Context, Run<'_>, Decided)> = vec![
            (
                "allowed plan",
                OWN,
                allowed,
                Decided::Unasked(Why::PlanAllowed),
            ),
            ("other plan", OWN, other, Decided::Ask { standing: true }),
            (
                "run.allow",
                OWN,
                Run {
                    allow_rule: true,
                    ..other
                },
                Decided::Unasked(Why::AllowRule),
            ),
            (
                "read-only over vouched",
                OWN,
                Run {
                    read_only: true,
                    ..other
                },
                Decided::Unasked(Why::ReadOnly),
            ),
            (
                "not yet checked",
                OWN,
                Run {
                    checked: None,
                    ..other
                },
                Decided::CheckFirst,
            ),
            (
                "check passed",
                OWN,
                Run {
                    checked: Some(true),
                    ..other
                },
                Decided::Unasked(Why::ReadOnlyChecked),
            ),
            (
                "allowed plan, touches files",
                OWN,
                Run {
                    touches_files: true,
                    checked: None,
                    ..allowed
                },
                Decided::Ask { standing: false },
            ),
            (
                "allowed plan, fed",
                OWN,
                Run {
                    fed: true,
                    allow_rule: true,
                    ..allowed
                },
                Decided::Ask { standing: false },
            ),
            (
                "allowed plan, released context",
                RELEASED,
                Run {
                    allow_rule: true,
                    read_only: true,
                    checked: None,
                    ..allowed
                },
                Decided::Ask { standing: false },
            ),
            (
                "plan mode",
                OWN,
                Run {
                    plan_mode: true,
                    ..other
                },
                Decided::Refuse(Why::PlanMode),
            ),
            (
                "plan mode, allowed plan",
                OWN,
                Run {
                    plan_mode: true,
                    ..allowed
                },
                Decided::Unasked(Why::PlanAllowed),
            ),
            (
                "nobody watching",
                OWN,
                Run {
                    interactive: false,
                    ..other
                },
                Decided::Refuse(Why::Unwatched),
            ),
            (
                "nobody watching, plan mode",
                OWN,
                Run {
                    interactive: false,
                    plan_mode: true,
                    ..other
                },
                Decided::Refuse(Why::PlanMode),
            ),
        ];
        for (case, context, facts, expected) in rows {
            assert_eq!(run(&a, context, facts), expected, "{case}");
        }
    }

    // Verifies: RUN-17, APPROVE-2
    #[test]
    fn a_line_runs_confined_unasked_only_where_the_person_said_so_and_the_kernel_can_hold_it() {
        let a = store();
        let other = line("cargo test");
        let on = Run {
            confined_setting: true,
            ..other
        };
        let mut chosen = store();
        chosen.person_allowed_confined();
        let rows: Vec<(&str, &Approvals, Context, Run<'_>, Decided)> = vec![
            ("off", &a, OWN, other, Decided::Ask { standing: true }),
            ("setting", &a, OWN, on, Decided::Unasked(Why::Confined)),
            (
                "chosen on a question",
                &chosen,
                OWN,
                other,
                Decided::Unasked(Why::Confined),
            ),
            (
                "setting, nobody watching",
                &a,
                OWN,
                Run {
                    interactive: false,
                    ..on
                },
                Decided::Unasked(Why::Confined),
            ),
            (
                "setting, the kernel cannot hold it",
                &a,
                OWN,
                Run {
                    confinable: false,
                    ..on
                },
                Decided::Ask { standing: true },
            ),
            (
                "setting, touches files",
                &a,
                OWN,
                Run {
                    touches_files: true,
                    checked: None,
                    ..on
                },
                Decided::Ask { standing: false },
            ),
            (
                "setting, fed",
                &a,
                OWN,
                Run { fed: true, ..on },
                Decided::Ask { standing: false },
            ),
            (
                "setting, released context",
                &a,
                RELEASED,
                Run {
                    checked: None,
                    ..on
                },
                Decided::Ask { standing: false },
            ),
            (
                "setting, plan mode",
                &a,
                OWN,
                Run {
                    plan_mode: true,
                    ..on
                },
                Decided::Refuse(Why::PlanMode),
            ),
            (
                "setting, nobody watching, the kernel cannot hold it",
                &a,
                OWN,
                Run {
                    interactive: false,
                    confinable: false,
                    ..on
                },
                Decided::Refuse(Why::Unwatched),
            ),
        ];
        for (case, approvals, context, facts, expected) in rows {
            assert_eq!(run(approvals, context, facts), expected, "{case}");
        }
    }

    // Verifies: APPROVE-2
    #[test]
    fn a_rule_answers_for_a_call_only_from_a_context_holding_nothing_private() {
        let asked = Ruled {
            denied: false,
            allowed: false,
            interactive: true,
        };
        let named = Ruled {
            allowed: true,
            ..asked
        };
        let rows: Vec<(&str, Context, Ruled, Decided, bool)> = vec![
            (
                "no rule",
                PUBLIC,
                asked,
                Decided::Ask { standing: false },
                false,
            ),
            (
                "allow rule",
                PUBLIC,
                named,
                Decided::Unasked(Why::AllowRule),
                false,
            ),
            (
                "allow rule, private context",
                OWN,
                named,
                Decided::Ask { standing: false },
                true,
            ),
            (
                "allow rule, released context",
                Context {
                    person_only: true,
                    trusted_public: true,
                },
                named,
                Decided::Ask { standing: false },
                false,
            ),
            (
                "deny rule wins",
                PUBLIC,
                Ruled {
                    denied: true,
                    ..named
                },
                Decided::Refuse(Why::DenyRule),
                false,
            ),
            (
                "nobody watching",
                PUBLIC,
                Ruled {
                    interactive: false,
                    ..asked
                },
                Decided::Refuse(Why::Unwatched),
                false,
            ),
            (
                "allow rule, nobody watching",
                PUBLIC,
                Ruled {
                    interactive: false,
                    ..named
                },
                Decided::Unasked(Why::AllowRule),
                false,
            ),
            (
                "allow rule, private context, nobody watching",
                RELEASED,
                Ruled {
                    interactive: false,
                    ..named
                },
                Decided::Refuse(Why::Unwatched),
                true,
            ),
        ];
        for (case, context, facts, expected, held_back) in rows {
            assert_eq!(ruled(context, facts), expected, "{case}");
            assert_eq!(facts.rule_held_back(context), held_back, "{case}: noted");
        }
    }
}
