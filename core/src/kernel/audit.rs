//! The audit trail: every gate decision of a session, in order, holding no content.
//!
//! A record names the gate, whether it allowed or refused, and a detail built only from things
//! that are not content: tool and argument names, labels, workspace paths the planner or the
//! person named, and slot ids. That is what lets the trail be drawn on screen and written to a
//! file even for a workspace nobody vouched for.

use std::fmt;

/// The gates, each deciding one question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The planner's routing arguments are trusted and public.
    Routing,
    /// A routing argument the model proposed is endorsed: confined and non-destructive, or
    /// approved by a person.
    Promote,
    /// A file is read, and with what label.
    FileRead,
    /// A result may reach the planner, or goes into quarantine.
    Present,
    /// The trust map changed.
    Trust,
    /// A question was put to the person, and how it was answered.
    Question,
    /// Quarantined content went to an isolated check.
    Check,
    /// A context that met untrusted content tried something it may not.
    Context,
    /// The workspace went back to a checkpoint.
    Restore,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Routing => "routing",
            Gate::Promote => "promote",
            Gate::FileRead => "file_read",
            Gate::Present => "present",
            Gate::Trust => "trust",
            Gate::Question => "question",
            Gate::Check => "check",
            Gate::Context => "context",
            Gate::Restore => "restore",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Refused,
    /// Not a permission but a fact the trail needs: what label something came out with.
    Observed,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Refused => "refused",
            Decision::Observed => "observed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    pub gate: Gate,
    pub decision: Decision,
    pub detail: String,
    /// When the decision was made, by the machine's clock.
    pub at: std::time::SystemTime,
}

impl fmt::Display for AuditRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = match self.decision {
            Decision::Allowed => "ok     ",
            Decision::Refused => "refused",
            Decision::Observed => "observe",
        };
        write!(f, "{mark} {}: {}", self.gate.as_str(), self.detail)
    }
}

/// Where a trail reads the time of each decision. The kernel reads no clock: the session hands
/// its trail the machine's clock, a test a fixed one.
pub type Clock = fn() -> std::time::SystemTime;

/// The records of one session. Appending is the only operation; nothing is ever removed.
#[derive(Debug)]
pub struct AuditTrail {
    records: Vec<AuditRecord>,
    clock: Clock,
}

impl AuditTrail {
    /// An empty trail whose records are timed by `clock`.
    pub fn new(clock: Clock) -> AuditTrail {
        AuditTrail {
            records: Vec::new(),
            clock,
        }
    }

    pub fn record(&mut self, gate: Gate, decision: Decision, detail: impl Into<String>) {
        self.records.push(AuditRecord {
            gate,
            decision,
            detail: detail.into(),
            at: (self.clock)(),
        });
    }

    /// Appends a record another trail made (a delegate's), keeping the time it was decided.
    pub fn carry(&mut self, record: AuditRecord) {
        self.records.push(record);
    }

    pub fn records(&self) -> &[AuditRecord] {
        &self.records
    }

    /// Records from index `from` on, for a writer that appends them to a file.
    pub fn since(&self, from: usize) -> &[AuditRecord] {
        self.records.get(from..).unwrap_or(&[])
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}
