//! The trust map: which paths' contents the planner may read, and why.
//!
//! Each rule is about a path (a file, or a directory and everything beneath it) and carries its
//! origin: the person's gesture, the defaults for the files a person writes to be obeyed, or a write
//! the agent made. (A check's clean verdict covers bytes, not a path: `tools::content_trust`.) What a
//! rule grants is derived from its origin and never stored beside it, so a rule cannot disagree
//! with itself.
//!
//! Lookups take the narrowest rule that covers a path: a file rule beats any directory rule, a
//! deeper directory beats a shallower one. Where two rules are equally narrow the stricter wins.
//! Paths are absolute and already normalised by the caller; the map compares components. A rule
//! covers whatever lands under its path later, and lives only as long as the session (COST-5).

use std::path::{Path, PathBuf};

use super::label::Integrity;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    File,
    Directory,
}

/// Where a rule came from. The integrity it grants follows from this alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleOrigin {
    /// A person vouched for it: a file named in a prompt, `bravebot/session/trust`, a yes to a
    /// `trustRead` question.
    Person,
    /// The session's defaults: the files a person writes in order to be obeyed (`AGENTS.md`,
    /// `.bravebot/skills/`).
    Instructions,
    /// The agent wrote data that nobody vouched for here, so the path now holds untrusted bytes.
    AgentWroteUntrusted,
    /// Read back from a session record written by a build that knew an origin this one does not.
    /// It grants nothing: the path reads as untrusted until a person says otherwise (SESS-3).
    Unrecognised,
    /// The person said do not look here (`bravebot/session/trust` with `deny`): nothing at or
    /// beneath the path is read, listed, searched or shown, whatever any other rule says.
    Denied,
    /// The same deny, written in a settings file's `read.deny` (TRUST-8).
    DeniedBySettings,
}

impl RuleOrigin {
    pub fn integrity(self) -> Integrity {
        match self {
            RuleOrigin::Person | RuleOrigin::Instructions => Integrity::Trusted,
            RuleOrigin::AgentWroteUntrusted
            | RuleOrigin::Unrecognised
            | RuleOrigin::Denied
            | RuleOrigin::DeniedBySettings => Integrity::Untrusted,
        }
    }

    /// Whether the rule is a deny: it withholds the path from every read, not only its trust.
    pub fn is_deny(self) -> bool {
        matches!(self, RuleOrigin::Denied | RuleOrigin::DeniedBySettings)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RuleOrigin::Person => "person",
            RuleOrigin::Instructions => "instructions",
            RuleOrigin::AgentWroteUntrusted => "agentWrite",
            RuleOrigin::Unrecognised => "unrecognised",
            RuleOrigin::Denied => "personDeny",
            RuleOrigin::DeniedBySettings => "settingsDeny",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustRule {
    pub path: PathBuf,
    pub scope: Scope,
    pub origin: RuleOrigin,
}

impl TrustRule {
    fn covers(&self, path: &Path) -> bool {
        match self.scope {
            Scope::File => self.path == path,
            Scope::Directory => path.starts_with(&self.path),
        }
    }

    /// Bigger is narrower: a file rule outranks every directory rule, and a deeper directory a
    /// shallower one.
    fn narrowness(&self) -> (u8, usize) {
        let depth = self.path.components().count();
        match self.scope {
            Scope::File => (1, depth),
            Scope::Directory => (0, depth),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct TrustMap {
    rules: Vec<TrustRule>,
}

impl TrustMap {
    /// Adds a rule. A rule for exactly the same path and scope replaces the old one: the later
    /// statement about a path is the one that holds (a poisoned file stays poisoned until a person
    /// says otherwise; see [`TrustMap::add_default`] for the writer that may not override). A
    /// check's clean verdict is not a rule: it covers the bytes it judged and lives in
    /// `tools::content_trust`.
    /// A deny rule is never replaced: a later rule on the same path stands beside it and loses
    /// to it (TRUST-7).
    pub fn add(&mut self, rule: TrustRule) {
        if self.rules.contains(&rule) {
            return;
        }
        self.rules
            .retain(|r| r.origin.is_deny() || !(r.path == rule.path && r.scope == rule.scope));
        self.rules.push(rule);
    }

    /// Adds a default rule only where no rule covers the path yet, so a default never hands back
    /// trust that a write took away.
    pub fn add_default(&mut self, path: PathBuf, scope: Scope) -> bool {
        if self.rule_for(&path).is_some() {
            return false;
        }
        self.add(TrustRule {
            path,
            scope,
            origin: RuleOrigin::Instructions,
        });
        true
    }

    /// Marks a path as holding untrusted data because the agent wrote such data there.
    pub fn mark_written_untrusted(&mut self, path: PathBuf) {
        self.add(TrustRule {
            path,
            scope: Scope::File,
            origin: RuleOrigin::AgentWroteUntrusted,
        });
    }

    /// The rule that decides `path`, if any. A deny rule covering it decides, however narrow a
    /// rule beside it is: the strictest wins (TRUST-7).
    pub fn rule_for(&self, path: &Path) -> Option<&TrustRule> {
        if let Some(deny) = self.denied(path) {
            return Some(deny);
        }
        self.rules.iter().filter(|r| r.covers(path)).max_by(|a, b| {
            a.narrowness()
                .cmp(&b.narrowness())
                // Equally narrow: the untrusted one is the greater, so it wins.
                .then_with(|| strictness(a).cmp(&strictness(b)))
        })
    }

    /// The integrity a path's contents are read with; `None` means nobody has said anything.
    pub fn integrity_of(&self, path: &Path) -> Option<Integrity> {
        self.rule_for(path).map(|r| r.origin.integrity())
    }

    /// Whether any untrusted rule lies at or beneath `directory` (a deliberate "do not look
    /// here" covers names too).
    pub fn untrusted_within(&self, directory: &Path) -> bool {
        self.rules.iter().any(|r| {
            r.origin.integrity() == Integrity::Untrusted
                && (r.path.starts_with(directory) || r.covers(directory))
        })
    }

    /// The deny rule covering `path`, if any (the narrowest, so the one to name).
    pub fn denied(&self, path: &Path) -> Option<&TrustRule> {
        self.rules
            .iter()
            .filter(|r| r.origin.is_deny() && r.covers(path))
            .max_by_key(|r| r.narrowness())
    }

    /// A deny rule at or beneath `directory`, or covering it, if any.
    pub fn denied_within(&self, directory: &Path) -> Option<&TrustRule> {
        self.rules
            .iter()
            .find(|r| r.origin.is_deny() && (r.path.starts_with(directory) || r.covers(directory)))
    }

    pub fn rules(&self) -> &[TrustRule] {
        &self.rules
    }
}

fn strictness(rule: &TrustRule) -> u8 {
    match rule.origin.integrity() {
        Integrity::Trusted => 0,
        Integrity::Untrusted => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    // Verifies: TRUST-2
    #[test]
    fn trust_map_narrowest_rule_wins() {
        let mut map = TrustMap::default();
        map.add(TrustRule {
            path: p("/w"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        map.add(TrustRule {
            path: p("/w/vendor"),
            scope: Scope::Directory,
            origin: RuleOrigin::AgentWroteUntrusted,
        });
        map.add(TrustRule {
            path: p("/w/vendor/ok.txt"),
            scope: Scope::File,
            origin: RuleOrigin::Person,
        });
        assert_eq!(
            map.integrity_of(&p("/w/src/a.rs")),
            Some(Integrity::Trusted)
        );
        assert_eq!(
            map.integrity_of(&p("/w/vendor/x/y.rs")),
            Some(Integrity::Untrusted)
        );
        assert_eq!(
            map.integrity_of(&p("/w/vendor/ok.txt")),
            Some(Integrity::Trusted)
        );
        assert_eq!(map.integrity_of(&p("/elsewhere/a")), None);
        // Components, not string prefixes: /w/vendorx is not under /w/vendor.
        assert_eq!(
            map.integrity_of(&p("/w/vendorx/a")),
            Some(Integrity::Trusted)
        );
    }

    // Verifies: TRUST-1, TRUST-3, WRITE-7
    #[test]
    fn trust_map_untrusted_write_marks_its_path() {
        let mut map = TrustMap::default();
        map.add(TrustRule {
            path: p("/w"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        map.mark_written_untrusted(p("/w/out.txt"));
        assert_eq!(
            map.integrity_of(&p("/w/out.txt")),
            Some(Integrity::Untrusted)
        );
        assert_eq!(
            map.rule_for(&p("/w/out.txt")).map(|r| r.origin),
            Some(RuleOrigin::AgentWroteUntrusted)
        );
        // Neither a default nor a check can hand the trust back.
        assert!(!map.add_default(p("/w/out.txt"), Scope::File));
        assert_eq!(
            map.integrity_of(&p("/w/out.txt")),
            Some(Integrity::Untrusted)
        );
        assert!(map.untrusted_within(&p("/w")));
        // A person can.
        map.add(TrustRule {
            path: p("/w/out.txt"),
            scope: Scope::File,
            origin: RuleOrigin::Person,
        });
        assert_eq!(map.integrity_of(&p("/w/out.txt")), Some(Integrity::Trusted));
    }

    // Verifies: TRUST-2
    #[test]
    fn trust_map_equally_narrow_rules_take_the_stricter() {
        let mut map = TrustMap::default();
        map.add(TrustRule {
            path: p("/w/a"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        map.add(TrustRule {
            path: p("/w/a"),
            scope: Scope::File,
            origin: RuleOrigin::AgentWroteUntrusted,
        });
        // Different scopes on one path: the file rule is narrower.
        assert_eq!(map.integrity_of(&p("/w/a")), Some(Integrity::Untrusted));
        assert_eq!(map.integrity_of(&p("/w/a/b")), Some(Integrity::Trusted));
    }

    // Verifies: TRUST-7
    #[test]
    fn a_deny_rule_is_strictest_and_no_later_rule_replaces_it() {
        let mut map = TrustMap::default();
        map.add(TrustRule {
            path: p("/w/secrets"),
            scope: Scope::Directory,
            origin: RuleOrigin::Denied,
        });
        // A person's narrower trust rule, and one on the very same path and scope, lose to it.
        map.add(TrustRule {
            path: p("/w/secrets/ok.txt"),
            scope: Scope::File,
            origin: RuleOrigin::Person,
        });
        map.add(TrustRule {
            path: p("/w/secrets"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        assert_eq!(
            map.rule_for(&p("/w/secrets/ok.txt")).map(|r| r.origin),
            Some(RuleOrigin::Denied)
        );
        assert_eq!(
            map.integrity_of(&p("/w/secrets/x")),
            Some(Integrity::Untrusted)
        );
        assert!(map.denied(&p("/w/secrets/a/b")).is_some());
        assert!(map.denied(&p("/w/secretsx")).is_none(), "components");
        assert!(map.denied_within(&p("/w")).is_some());
        assert!(map.denied_within(&p("/w/src")).is_none());
        assert!(
            map.untrusted_within(&p("/w")),
            "a listing of /w is withheld"
        );
        // Neither a default nor a write removes it.
        assert!(!map.add_default(p("/w/secrets/AGENTS.md"), Scope::File));
        map.mark_written_untrusted(p("/w/secrets"));
        assert!(map.denied(&p("/w/secrets/ok.txt")).is_some());
        assert_eq!(
            map.rules()
                .iter()
                .filter(|r| r.origin == RuleOrigin::Denied)
                .count(),
            1
        );
    }

    // Verifies: TRUST-4
    #[test]
    fn trust_map_defaults_fill_gaps_only() {
        let mut map = TrustMap::default();
        assert!(map.add_default(p("/w/AGENTS.md"), Scope::File));
        assert!(
            !map.add_default(p("/w/AGENTS.md"), Scope::File),
            "a default is added once"
        );
    }
}
