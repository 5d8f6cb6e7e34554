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
//!
//! The rules are indexed (TRUST-21): a lookup hashes the path and each of its ancestors rather
//! than visiting every rule, so thousands of files the person named cost a search nothing per file
//! beyond the depth of its path.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// A point in a session's trust history. Every rule is stamped with the moment it was written,
/// and a person's gesture with the moment the person was shown what they vouch for, so the store
/// can tell a fresh vouch from one a later mark has overtaken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Moment(u64);

/// A file's identity on disk (device and inode): a mark follows the bytes under every name they
/// have, so a hard link is no fresh name for a marked file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            device: meta.dev(),
            inode: meta.ino(),
        }
    }
}

/// A person's vouch for a path: the only way a path's integrity rises. It is made where a person
/// answered a question that showed them the path (or sent `bravebot/session/trust`), and carries
/// the moment they were shown it: a mark written after that moment is news the person did not
/// have, and the store refuses the vouch over it (TRUST-10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gesture {
    path: PathBuf,
    scope: Scope,
    shown_at: Moment,
}

/// Proof that a person said yes: made only by `session::Answer::approval` (an answered question)
/// and `Session::trust_path` (`bravebot/session/trust`, a prompt's named files). A tidy test holds
/// every other module to that (`only_an_answer_or_session_trust_makes_a_yes`).
#[derive(Debug)]
pub struct Approved {
    _seal: (),
}

impl Approved {
    pub(crate) fn by_the_person() -> Approved {
        Approved { _seal: () }
    }
}

impl Gesture {
    /// The person's yes about `path`, given where they were shown what the store held at
    /// `shown_at` (read with [`TrustMap::now`] before the question's contents were read).
    pub fn new(path: PathBuf, scope: Scope, shown_at: Moment, approved: Approved) -> Gesture {
        let Approved { _seal: () } = approved;
        Gesture {
            path,
            scope,
            shown_at,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Why the store would not take a vouch: a mark made after the person was shown the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} was marked as holding untrusted data after the person was asked about it", path.display())]
pub struct Overtaken {
    pub path: PathBuf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    rule: TrustRule,
    at: Moment,
    /// For a mark: the identity of the file it marked, when it was on disk.
    file: Option<FileId>,
}

/// The paths the person's rules name, for the reach of a read (`workspace_file::Reach`): how many
/// `person` rules stand at each path, and every path such a rule was written for, in order, so
/// each is resolved once, by whoever reads, the first time a read asks after it is written.
/// Shared with each reach built from it, and copied only when a rule changes while a reach still
/// holds it.
#[derive(Debug, Default)]
pub struct NamedFiles {
    standing: HashMap<PathBuf, usize>,
    written: Vec<PathBuf>,
    resolved: std::sync::Mutex<Resolved>,
}

/// The real paths the written named paths resolved to, as far as they have been resolved.
#[derive(Clone, Debug, Default)]
struct Resolved {
    /// How many of `written` have been resolved.
    done: usize,
    /// Each real path, and the named paths that resolved to it.
    by_real: HashMap<PathBuf, Vec<PathBuf>>,
}

impl Clone for NamedFiles {
    fn clone(&self) -> NamedFiles {
        NamedFiles {
            standing: self.standing.clone(),
            written: self.written.clone(),
            resolved: std::sync::Mutex::new(self.resolutions().clone()),
        }
    }
}

impl NamedFiles {
    /// The named paths given, each as though one rule stood for it.
    pub fn of(paths: Vec<PathBuf>) -> NamedFiles {
        let mut named = NamedFiles::default();
        for path in paths {
            named.add(path);
        }
        named
    }

    /// Whether a `person` rule stands at exactly `path`.
    pub fn contains(&self, path: &Path) -> bool {
        self.standing.contains_key(path)
    }

    /// Whether a path a `person` rule stands at resolved to `real`. Each path written since the
    /// last call is resolved first, by `resolve` (the caller's, which may touch the disk), and
    /// only then: a named path is resolved once, and keeps the real path it had then.
    pub fn resolves_to(&self, real: &Path, resolve: impl Fn(&Path) -> Option<PathBuf>) -> bool {
        let mut resolved = self.resolutions();
        for path in self.written.get(resolved.done..).unwrap_or_default() {
            if let Some(to) = resolve(path) {
                resolved.by_real.entry(to).or_default().push(path.clone());
            }
        }
        resolved.done = self.written.len();
        resolved
            .by_real
            .get(real)
            .is_some_and(|named| named.iter().any(|n| self.contains(n)))
    }

    fn resolutions(&self) -> std::sync::MutexGuard<'_, Resolved> {
        self.resolved.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn add(&mut self, path: PathBuf) {
        self.written.push(path.clone());
        *self.standing.entry(path).or_default() += 1;
    }

    fn remove(&mut self, path: &Path) {
        if let Some(n) = self.standing.get_mut(path) {
            *n -= 1;
            if *n == 0 {
                self.standing.remove(path);
            }
        }
    }
}

/// The rules, and the indexes that answer a lookup without looking at every rule: a path's rules
/// are those stored at the path itself and at each of its ancestors (found by hashing each), and
/// the rules at or beneath a directory are one range of paths in component order. Every index is
/// kept in step with `entries` by [`TrustMap::insert`] and [`TrustMap::remove`] alone.
#[derive(Clone, Debug, Default)]
pub struct TrustMap {
    /// Every rule, by the moment it was written: oldest first.
    entries: BTreeMap<Moment, Entry>,
    /// The moments of the rules at each path, whatever their scope.
    at_path: HashMap<PathBuf, Vec<Moment>>,
    /// How many rules granting nothing (marks and denies alike) stand at each path.
    untrusted: BTreeMap<PathBuf, usize>,
    /// The moments of the deny rules at each path.
    denies: BTreeMap<PathBuf, Vec<Moment>>,
    /// The moments of the marks made on each file's identity on disk.
    marks_by_file: HashMap<FileId, BTreeSet<Moment>>,
    named: Arc<NamedFiles>,
    clock: u64,
    /// The most components any rule's path has had: no ancestor of a path deeper than this can
    /// hold a rule, so a lookup passes those over without hashing them. Never lowered when a rule
    /// goes (an upper bound only costs a few more lookups).
    deepest: usize,
}

impl TrustMap {
    /// The moment of the latest rule written. A question that shows a person a path reads it
    /// before reading what it shows, and the person's gesture carries it.
    pub fn now(&self) -> Moment {
        Moment(self.clock)
    }

    fn tick(&mut self) -> Moment {
        self.clock += 1;
        Moment(self.clock)
    }

    /// The rules stored at `path` exactly (both scopes).
    fn at(&self, path: &Path) -> impl Iterator<Item = &Entry> {
        self.at_path
            .get(path)
            .into_iter()
            .flatten()
            .filter_map(|m| self.entries.get(m))
    }

    /// Every rule that covers `path`: those at the path and at each of its ancestors (and at the
    /// empty path, which every path starts with; met twice for a relative path, which does no
    /// harm to any question asked of them), each asked whether it covers.
    fn covering<'s, 'p>(&'s self, path: &'p Path) -> impl Iterator<Item = &'s Entry> + use<'s, 'p> {
        // The ancestor `i` steps up has `depth - i` components; only those no deeper than the
        // deepest rule can be a rule's path. Without this a path thousands of directories deep
        // (a git tree nested on purpose) hashed thousands of long ancestors per lookup.
        let shallow_enough = path.components().count().saturating_sub(self.deepest);
        path.ancestors()
            .skip(shallow_enough)
            .chain(std::iter::once(Path::new("")))
            .flat_map(|at| self.at(at))
            .filter(move |e| e.rule.covers(path))
    }

    /// Writes a rule. A rule for exactly the same path and scope replaces the old one: the later
    /// statement about a path is the one that holds. A deny rule is never replaced: a later rule on
    /// the same path stands beside it and loses to it (TRUST-7).
    fn insert(&mut self, rule: TrustRule, file: Option<FileId>) {
        if rule.origin.is_deny() && self.at(&rule.path).any(|e| e.rule == rule) {
            return;
        }
        let replaced: Vec<Moment> = self
            .at(&rule.path)
            .filter(|e| !e.rule.origin.is_deny() && e.rule.scope == rule.scope)
            .map(|e| e.at)
            .collect();
        for at in replaced {
            self.remove(at);
        }
        let at = self.tick();
        self.deepest = self.deepest.max(rule.path.components().count());
        self.at_path.entry(rule.path.clone()).or_default().push(at);
        if rule.origin.integrity() == Integrity::Untrusted {
            *self.untrusted.entry(rule.path.clone()).or_default() += 1;
        }
        if rule.origin.is_deny() {
            self.denies.entry(rule.path.clone()).or_default().push(at);
        }
        if let Some(id) = file
            && rule.origin == RuleOrigin::AgentWroteUntrusted
        {
            self.marks_by_file.entry(id).or_default().insert(at);
        }
        if rule.origin == RuleOrigin::Person {
            Arc::make_mut(&mut self.named).add(rule.path.clone());
        }
        self.entries.insert(at, Entry { rule, at, file });
    }

    /// Takes a rule out, and out of every index.
    fn remove(&mut self, at: Moment) {
        let Some(e) = self.entries.remove(&at) else {
            return;
        };
        let path = &e.rule.path;
        if let Some(moments) = self.at_path.get_mut(path) {
            moments.retain(|m| *m != at);
            if moments.is_empty() {
                self.at_path.remove(path);
            }
        }
        if e.rule.origin.integrity() == Integrity::Untrusted
            && let Some(n) = self.untrusted.get_mut(path)
        {
            *n -= 1;
            if *n == 0 {
                self.untrusted.remove(path);
            }
        }
        if e.rule.origin.is_deny()
            && let Some(moments) = self.denies.get_mut(path)
        {
            moments.retain(|m| *m != at);
            if moments.is_empty() {
                self.denies.remove(path);
            }
        }
        if let Some(id) = e.file
            && let Some(moments) = self.marks_by_file.get_mut(&id)
        {
            moments.remove(&at);
            if moments.is_empty() {
                self.marks_by_file.remove(&id);
            }
        }
        if e.rule.origin == RuleOrigin::Person {
            Arc::make_mut(&mut self.named).remove(path);
        }
    }

    /// A person's vouch. Refused where a mark written after the person was shown the path covers
    /// it: trust rises only by a gesture made after the mark it replaces (TRUST-10). A check's
    /// clean verdict is not a rule: it covers the bytes it judged and lives in
    /// `tools::content_trust`.
    pub fn vouch(&mut self, gesture: Gesture) -> Result<(), Overtaken> {
        let overtaken = self.covering(&gesture.path).any(|e| {
            e.at > gesture.shown_at
                && e.rule.origin.integrity() == Integrity::Untrusted
                && !e.rule.origin.is_deny()
        });
        if overtaken {
            return Err(Overtaken { path: gesture.path });
        }
        self.insert(
            TrustRule {
                path: gesture.path,
                scope: gesture.scope,
                origin: RuleOrigin::Person,
            },
            None,
        );
        Ok(())
    }

    /// A deny rule (`personDeny` or `settingsDeny`): only ever takes away.
    pub fn deny(&mut self, path: PathBuf, scope: Scope, origin: RuleOrigin) {
        debug_assert!(origin.is_deny());
        let origin = if origin.is_deny() {
            origin
        } else {
            RuleOrigin::Denied
        };
        self.insert(
            TrustRule {
                path,
                scope,
                origin,
            },
            None,
        );
    }

    /// Puts back a rule read from a session record, as it stood when the record was written: the
    /// gesture behind a `person` rule was made in that session, before any mark of this one.
    pub fn restore(&mut self, rule: TrustRule) {
        self.insert(rule, None);
    }

    /// Adds a default rule only where no rule covers the path yet, so a default never hands back
    /// trust that a write took away.
    pub fn add_default(&mut self, path: PathBuf, scope: Scope) -> bool {
        if self.rule_for(&path).is_some() {
            return false;
        }
        self.insert(
            TrustRule {
                path,
                scope,
                origin: RuleOrigin::Instructions,
            },
            None,
        );
        true
    }

    /// Marks a file as holding untrusted data because the agent wrote such data there; `file` is
    /// its identity on disk where it has one, so every other name for it is marked too.
    pub fn mark_written_untrusted(&mut self, path: PathBuf, file: Option<FileId>) {
        self.mark(path, Scope::File, file);
    }

    /// Marks a path (a file, or a directory and what lands beneath it) as holding untrusted
    /// data. A mark only takes away, so it is written whatever stands there already.
    pub fn mark(&mut self, path: PathBuf, scope: Scope, file: Option<FileId>) {
        self.insert(
            TrustRule {
                path,
                scope,
                origin: RuleOrigin::AgentWroteUntrusted,
            },
            file,
        );
    }

    fn entry_for(&self, path: &Path) -> Option<&Entry> {
        if let Some(deny) = self.denied_entry(path) {
            return Some(deny);
        }
        let narrowest = self.covering(path).max_by(|a, b| {
            a.rule
                .narrowness()
                .cmp(&b.rule.narrowness())
                // Equally narrow: the untrusted one is the greater, so it wins.
                .then_with(|| strictness(&a.rule).cmp(&strictness(&b.rule)))
                .then_with(|| a.at.cmp(&b.at))
        })?;
        // Labels only degrade: a mark covering the path that is newer than the trusted rule
        // answering for it wins, however much broader it is (TRUST-10).
        if narrowest.rule.origin.integrity() == Integrity::Trusted
            && let Some(mark) = self.newest_mark_over(path, narrowest.at)
        {
            return Some(mark);
        }
        Some(narrowest)
    }

    /// The newest mark (not a deny) covering `path` written after `since`.
    fn newest_mark_over(&self, path: &Path, since: Moment) -> Option<&Entry> {
        self.covering(path)
            .filter(|e| {
                e.at > since
                    && e.rule.origin.integrity() == Integrity::Untrusted
                    && !e.rule.origin.is_deny()
            })
            .max_by_key(|e| e.at)
    }

    /// The rule that decides `path`, if any. A deny rule covering it decides, however narrow a
    /// rule beside it is: the strictest wins (TRUST-7).
    pub fn rule_for(&self, path: &Path) -> Option<&TrustRule> {
        self.entry_for(path).map(|e| &e.rule)
    }

    /// The integrity a path's contents are read with; `None` means nobody has said anything.
    pub fn integrity_of(&self, path: &Path) -> Option<Integrity> {
        self.rule_for(path).map(|r| r.origin.integrity())
    }

    /// The integrity of a file read at `path` whose identity on disk is `file`: the path's rule,
    /// unless a mark on the same file under any name is newer than that rule (or no rule covers
    /// the path), when it reads as untrusted (TRUST-11).
    pub fn integrity_of_file(&self, path: &Path, file: Option<FileId>) -> Option<Integrity> {
        let decided = self.entry_for(path);
        let Some(file) = file else {
            return decided.map(|e| e.rule.origin.integrity());
        };
        let since = decided.map(|e| e.at);
        let marked_later = self
            .marks_by_file
            .get(&file)
            .and_then(|moments| moments.last())
            .is_some_and(|newest| since.is_none_or(|at| *newest > at));
        if marked_later {
            return Some(Integrity::Untrusted);
        }
        decided.map(|e| e.rule.origin.integrity())
    }

    /// Whether any untrusted rule lies at or beneath `directory` (a deliberate "do not look
    /// here" covers names too).
    pub fn untrusted_within(&self, directory: &Path) -> bool {
        let beneath = self
            .untrusted
            .range::<Path, _>((Bound::Included(directory), Bound::Unbounded))
            .next()
            .is_some_and(|(p, _)| p.starts_with(directory));
        beneath
            || self
                .covering(directory)
                .any(|e| e.rule.origin.integrity() == Integrity::Untrusted)
    }

    fn denied_entry(&self, path: &Path) -> Option<&Entry> {
        self.covering(path)
            .filter(|e| e.rule.origin.is_deny())
            .max_by(|a, b| {
                a.rule
                    .narrowness()
                    .cmp(&b.rule.narrowness())
                    .then_with(|| a.at.cmp(&b.at))
            })
    }

    /// The deny rule covering `path`, if any (the narrowest, so the one to name).
    pub fn denied(&self, path: &Path) -> Option<&TrustRule> {
        self.denied_entry(path).map(|e| &e.rule)
    }

    /// A deny rule at or beneath `directory`, or covering it, if any: the oldest such.
    pub fn denied_within(&self, directory: &Path) -> Option<&TrustRule> {
        let beneath = self
            .denies
            .range::<Path, _>((Bound::Included(directory), Bound::Unbounded))
            .take_while(|(p, _)| p.starts_with(directory))
            .flat_map(|(_, moments)| moments.iter().filter_map(|m| self.entries.get(m)));
        let covering = self.covering(directory).filter(|e| e.rule.origin.is_deny());
        beneath
            .chain(covering)
            .min_by_key(|e| e.at)
            .map(|e| &e.rule)
    }

    /// The rules, oldest first.
    pub fn rules(&self) -> impl Iterator<Item = &TrustRule> + Clone {
        self.entries.values().map(|e| &e.rule)
    }

    /// The paths the person's rules name, shared: a reach holds it without copying it.
    pub fn named(&self) -> Arc<NamedFiles> {
        self.named.clone()
    }
}

/// The one trust map of a session, shared by every seat that works in it: the turn, each
/// delegate and each background job write their marks and denies here at once, and read here,
/// so no fact that lowers trust lives only in a copy (TRUST-10). Never held across an await.
#[derive(Debug, Default)]
pub struct TrustStore {
    map: std::sync::Mutex<TrustMap>,
}

impl TrustStore {
    pub fn new(map: TrustMap) -> TrustStore {
        TrustStore {
            map: std::sync::Mutex::new(map),
        }
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, TrustMap> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the map as it stands, for a walk that must not hold the lock.
    pub fn snapshot(&self) -> TrustMap {
        self.lock().clone()
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
        map.restore(TrustRule {
            path: p("/w"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        map.restore(TrustRule {
            path: p("/w/vendor"),
            scope: Scope::Directory,
            origin: RuleOrigin::AgentWroteUntrusted,
        });
        map.restore(TrustRule {
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
        map.restore(TrustRule {
            path: p("/w"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        map.mark_written_untrusted(p("/w/out.txt"), None);
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
        // A person can, by a gesture made after the mark.
        let now = map.now();
        map.vouch(yes(p("/w/out.txt"), Scope::File, now))
            .expect("a fresh gesture is taken");
        assert_eq!(map.integrity_of(&p("/w/out.txt")), Some(Integrity::Trusted));
    }

    fn yes(path: PathBuf, scope: Scope, shown_at: Moment) -> Gesture {
        Gesture::new(path, scope, shown_at, Approved::by_the_person())
    }

    // Verifies: TRUST-10
    #[test]
    fn a_vouch_shown_before_a_mark_is_refused_and_the_mark_stands() {
        let mut map = TrustMap::default();
        // The person is shown /w/a.txt; then a seat writes untrusted bytes there; then the yes.
        let shown = map.now();
        map.mark_written_untrusted(p("/w/a.txt"), None);
        assert_eq!(
            map.vouch(yes(p("/w/a.txt"), Scope::File, shown)),
            Err(Overtaken {
                path: p("/w/a.txt")
            })
        );
        assert_eq!(map.integrity_of(&p("/w/a.txt")), Some(Integrity::Untrusted));
        // A directory vouch over a newer directory mark is refused; over a newer file mark beneath
        // it, it is taken, and the narrower mark still decides its file.
        let shown = map.now();
        map.mark(p("/w/out"), Scope::Directory, None);
        assert!(
            map.vouch(yes(p("/w/out/x.txt"), Scope::File, shown))
                .is_err()
        );
        assert!(map.vouch(yes(p("/w"), Scope::Directory, shown)).is_ok());
        assert_eq!(map.integrity_of(&p("/w/a.txt")), Some(Integrity::Untrusted));
        assert_eq!(
            map.integrity_of(&p("/w/out/x.txt")),
            Some(Integrity::Untrusted)
        );
        assert_eq!(map.integrity_of(&p("/w/b.txt")), Some(Integrity::Trusted));
        // An old vouch for a path (a seat's copy from before) cannot be replayed over the mark:
        // re-marking moves the mark's moment on.
        let shown = map.now();
        map.mark_written_untrusted(p("/w/b.txt"), None);
        assert!(map.vouch(yes(p("/w/b.txt"), Scope::File, shown)).is_err());
        assert_eq!(map.integrity_of(&p("/w/b.txt")), Some(Integrity::Untrusted));
    }

    // Verifies: TRUST-10
    #[test]
    fn only_an_answer_or_session_trust_makes_a_yes() {
        // The proof a vouch needs is made in two places alone: an answered question
        // (`Answer::approval`) and the person's own request (`Session::trust_path`). Every other
        // module that vouches gets it from an answer.
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut makers = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("source directory") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("source");
                    // This file's tests make their own, to drive the map directly.
                    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
                    for _ in text.matches("Approved::by_the_person") {
                        makers.push(path.strip_prefix(&src).expect("inside").to_path_buf());
                    }
                }
            }
        }
        makers.sort();
        assert_eq!(
            makers,
            vec![PathBuf::from("screen.rs"), PathBuf::from("session.rs")],
            "Approved is made only by Answer::approval and Session::trust_path"
        );
    }

    // Verifies: TRUST-11
    #[test]
    fn a_mark_follows_the_file_under_every_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let marked = dir.path().join("marked.txt");
        let link = dir.path().join("fresh-name.txt");
        std::fs::write(&marked, "x").expect("written");
        std::fs::hard_link(&marked, &link).expect("linked");
        let id = |path: &Path| Some(FileId::of(&std::fs::metadata(path).expect("there")));
        let mut map = TrustMap::default();
        // The person trusted the other name before the mark.
        map.restore(TrustRule {
            path: link.clone(),
            scope: Scope::File,
            origin: RuleOrigin::Person,
        });
        map.mark_written_untrusted(marked.clone(), id(&marked));
        assert_eq!(
            map.integrity_of(&link),
            Some(Integrity::Trusted),
            "by path alone"
        );
        assert_eq!(
            map.integrity_of_file(&link, id(&link)),
            Some(Integrity::Untrusted),
            "the same file, marked after the rule"
        );
        // A name nobody said anything about is no way round the mark either: it is not checked
        // back into trust (TRUST-5).
        let other = dir.path().join("third-name.txt");
        std::fs::hard_link(&marked, &other).expect("linked");
        assert_eq!(map.integrity_of(&other), None);
        assert_eq!(
            map.integrity_of_file(&other, id(&other)),
            Some(Integrity::Untrusted)
        );
        // A person's gesture on that name made after the mark trusts it.
        let now = map.now();
        map.vouch(yes(link.clone(), Scope::File, now))
            .expect("fresh");
        assert_eq!(
            map.integrity_of_file(&link, id(&link)),
            Some(Integrity::Trusted)
        );
        // A different file is untouched by the mark.
        let unrelated = dir.path().join("unrelated.txt");
        std::fs::write(&unrelated, "y").expect("written");
        assert_eq!(map.integrity_of_file(&unrelated, id(&unrelated)), None);
    }

    // Verifies: TRUST-2
    #[test]
    fn trust_map_equally_narrow_rules_take_the_stricter() {
        let mut map = TrustMap::default();
        map.restore(TrustRule {
            path: p("/w/a"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        map.restore(TrustRule {
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
        map.restore(TrustRule {
            path: p("/w/secrets"),
            scope: Scope::Directory,
            origin: RuleOrigin::Denied,
        });
        // A person's narrower trust rule, and one on the very same path and scope, lose to it.
        map.restore(TrustRule {
            path: p("/w/secrets/ok.txt"),
            scope: Scope::File,
            origin: RuleOrigin::Person,
        });
        map.restore(TrustRule {
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
        map.mark_written_untrusted(p("/w/secrets"), None);
        assert!(map.denied(&p("/w/secrets/ok.txt")).is_some());
        assert_eq!(
            map.rules()
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

/// The kernel invariant of TRUST-10, over random interleavings of every seat's reads, writes,
/// marks, vouches and ends: no path's integrity ever rises except by a person's gesture made after
/// its last mark. `cargo test` runs it with a fixed seed; a longer run is
/// `PROPTEST_CASES=20000 PROPTEST_RNG_SEED=$RANDOM cargo test -p bravebot-core --lib interleavings`.
#[cfg(test)]
mod interleavings {
    use std::sync::Arc;

    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed, TestRunner};

    use super::*;

    const PATHS: [&str; 5] = ["/w/a.txt", "/w/b.txt", "/w/d", "/w/d/x.txt", "/w/AGENTS.md"];
    /// The turn and three delegate or job seats.
    const SEATS: usize = 4;

    #[derive(Clone, Debug)]
    enum Step {
        /// A seat reads a path and puts a question about it (the moment is taken first).
        Shown { seat: usize, path: usize },
        /// The person says yes to the seat's open question.
        Yes { seat: usize },
        /// A seat writes untrusted bytes (edit, write, run, job) to a path.
        Mark {
            seat: usize,
            path: usize,
            directory: bool,
        },
        /// The person sends `session/trust` for a path.
        Trust { path: usize, directory: bool },
        /// The person denies a path.
        Deny { path: usize },
        /// The start-of-session default fills a gap.
        Default { path: usize },
        /// A seat (a delegate, a job) starts afresh or ends: it forgets its open question.
        SeatEnds { seat: usize },
    }

    fn step() -> impl Strategy<Value = Step> {
        let seat = 0..SEATS;
        let path = 0..PATHS.len();
        prop_oneof![
            (seat.clone(), path.clone()).prop_map(|(seat, path)| Step::Shown { seat, path }),
            seat.clone().prop_map(|seat| Step::Yes { seat }),
            (seat.clone(), path.clone(), any::<bool>()).prop_map(|(seat, path, directory)| {
                Step::Mark {
                    seat,
                    path,
                    directory,
                }
            }),
            (path.clone(), any::<bool>())
                .prop_map(|(path, directory)| Step::Trust { path, directory }),
            path.clone().prop_map(|path| Step::Deny { path }),
            path.clone().prop_map(|path| Step::Default { path }),
            seat.prop_map(|seat| Step::SeatEnds { seat }),
        ]
    }

    fn scope(directory: bool) -> Scope {
        if directory {
            Scope::Directory
        } else {
            Scope::File
        }
    }

    fn covers(rule_path: &str, directory: bool, path: &str) -> bool {
        if directory {
            Path::new(path).starts_with(rule_path)
        } else {
            rule_path == path
        }
    }

    /// Runs the steps through the one store every seat holds, checking after each that every
    /// path that reads as trusted after a mark was vouched for by a gesture shown after it.
    fn run(steps: &[Step]) -> Result<(), TestCaseError> {
        let store = Arc::new(TrustStore::default());
        let seats: Vec<Arc<TrustStore>> = (0..SEATS).map(|_| store.clone()).collect();
        let mut open: Vec<Option<(usize, Moment, usize)>> = vec![None; SEATS];
        // Per path: the step of its last mark, and the steps at which gestures covering it were
        // shown and taken.
        let mut last_mark: Vec<Option<usize>> = vec![None; PATHS.len()];
        let mut gestures: Vec<(usize, bool, usize)> = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            match s.clone() {
                Step::Shown { seat, path } => {
                    let at = seats[seat].lock().now();
                    open[seat] = Some((path, at, i));
                }
                Step::Yes { seat } => {
                    if let Some((path, at, shown_step)) = open[seat].take() {
                        let g = yes(p(PATHS[path]), Scope::File, at);
                        if seats[seat].lock().vouch(g).is_ok() {
                            gestures.push((path, false, shown_step));
                        }
                    }
                }
                Step::Mark {
                    seat,
                    path,
                    directory,
                } => {
                    seats[seat]
                        .lock()
                        .mark(p(PATHS[path]), scope(directory), None);
                    for (q, last) in last_mark.iter_mut().enumerate() {
                        if covers(PATHS[path], directory, PATHS[q]) {
                            *last = Some(i);
                        }
                    }
                }
                Step::Trust { path, directory } => {
                    let mut map = store.lock();
                    let at = map.now();
                    if map.vouch(yes(p(PATHS[path]), scope(directory), at)).is_ok() {
                        gestures.push((path, directory, i));
                    }
                }
                Step::Deny { path } => {
                    store
                        .lock()
                        .deny(p(PATHS[path]), Scope::File, RuleOrigin::Denied);
                }
                Step::Default { path } => {
                    store.lock().add_default(p(PATHS[path]), Scope::File);
                }
                Step::SeatEnds { seat } => open[seat] = None,
            }
            let map = store.lock();
            for (q, last) in last_mark.iter().enumerate() {
                let Some(marked) = *last else { continue };
                if map.integrity_of(&p(PATHS[q])) == Some(Integrity::Trusted) {
                    let fresh = gestures.iter().any(|(g, directory, shown)| {
                        *shown > marked && covers(PATHS[*g], *directory, PATHS[q])
                    });
                    prop_assert!(
                        fresh,
                        "{} reads as trusted after its mark at step {marked} with no gesture shown after it (step {i})",
                        PATHS[q]
                    );
                }
            }
        }
        Ok(())
    }

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn yes(path: PathBuf, scope: Scope, shown_at: Moment) -> Gesture {
        Gesture::new(path, scope, shown_at, Approved::by_the_person())
    }

    // Verifies: TRUST-10
    #[test]
    fn no_interleaving_of_seats_raises_a_path_without_a_fresh_gesture() {
        let defaults = Config::default();
        let config = Config {
            rng_seed: match std::env::var_os("PROPTEST_RNG_SEED") {
                Some(_) => defaults.rng_seed,
                None => RngSeed::Fixed(0x0b7a_0e10),
            },
            failure_persistence: None,
            ..defaults
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&proptest::collection::vec(step(), 1..60), |steps| {
            run(&steps)
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}

/// The indexes answer what a scan of every rule answers (TRUST-21): the map as it was written
/// before it was indexed, kept here as the reference, and the indexed map are given the same
/// random rules, marks, denies, vouches and defaults over paths that share ancestors, and asked
/// the same questions after each step. A longer run is
/// `PROPTEST_CASES=20000 PROPTEST_RNG_SEED=$RANDOM cargo test -p bravebot-core --lib index_answers`.
#[cfg(test)]
mod index_answers_as_the_scan {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed, TestRunner};

    use super::*;

    /// Paths sharing ancestors, written in more than one way that names the same path.
    const PATHS: [&str; 12] = [
        "/w",
        "/w/",
        "/w/a",
        "/w/a/",
        "/w/a/x.txt",
        "/w/./a/x.txt",
        "/w/ab",
        "/w/a/b/y.rs",
        "/w/a/b",
        "/v/z",
        "/",
        "/w/a/b/c/d.md",
    ];

    /// The map as it was before its indexes: every lookup scans every rule.
    #[derive(Default)]
    struct Scan {
        entries: Vec<Entry>,
        clock: u64,
    }

    impl Scan {
        fn insert(&mut self, rule: TrustRule, file: Option<FileId>) {
            if rule.origin.is_deny() && self.entries.iter().any(|e| e.rule == rule) {
                return;
            }
            self.entries.retain(|e| {
                e.rule.origin.is_deny() || !(e.rule.path == rule.path && e.rule.scope == rule.scope)
            });
            self.clock += 1;
            let at = Moment(self.clock);
            self.entries.push(Entry { rule, at, file });
        }

        fn vouch(&mut self, path: PathBuf, scope: Scope, shown_at: Moment) -> bool {
            let overtaken = self.entries.iter().any(|e| {
                e.at > shown_at
                    && e.rule.origin.integrity() == Integrity::Untrusted
                    && !e.rule.origin.is_deny()
                    && e.rule.covers(&path)
            });
            if !overtaken {
                self.insert(
                    TrustRule {
                        path,
                        scope,
                        origin: RuleOrigin::Person,
                    },
                    None,
                );
            }
            !overtaken
        }

        fn add_default(&mut self, path: PathBuf, scope: Scope) -> bool {
            if self.entry_for(&path).is_some() {
                return false;
            }
            self.insert(
                TrustRule {
                    path,
                    scope,
                    origin: RuleOrigin::Instructions,
                },
                None,
            );
            true
        }

        fn entry_for(&self, path: &Path) -> Option<&Entry> {
            if let Some(deny) = self.denied_entry(path) {
                return Some(deny);
            }
            let narrowest =
                self.entries
                    .iter()
                    .filter(|e| e.rule.covers(path))
                    .max_by(|a, b| {
                        a.rule
                            .narrowness()
                            .cmp(&b.rule.narrowness())
                            .then_with(|| strictness(&a.rule).cmp(&strictness(&b.rule)))
                    })?;
            if narrowest.rule.origin.integrity() == Integrity::Trusted
                && let Some(mark) = self
                    .entries
                    .iter()
                    .filter(|e| {
                        e.at > narrowest.at
                            && e.rule.origin.integrity() == Integrity::Untrusted
                            && !e.rule.origin.is_deny()
                            && e.rule.covers(path)
                    })
                    .max_by_key(|e| e.at)
            {
                return Some(mark);
            }
            Some(narrowest)
        }

        fn integrity_of_file(&self, path: &Path, file: Option<FileId>) -> Option<Integrity> {
            let decided = self.entry_for(path);
            let Some(file) = file else {
                return decided.map(|e| e.rule.origin.integrity());
            };
            let since = decided.map(|e| e.at);
            let marked_later = self.entries.iter().any(|e| {
                e.file == Some(file)
                    && e.rule.origin == RuleOrigin::AgentWroteUntrusted
                    && since.is_none_or(|at| e.at > at)
            });
            if marked_later {
                return Some(Integrity::Untrusted);
            }
            decided.map(|e| e.rule.origin.integrity())
        }

        fn untrusted_within(&self, directory: &Path) -> bool {
            self.entries.iter().any(|e| {
                e.rule.origin.integrity() == Integrity::Untrusted
                    && (e.rule.path.starts_with(directory) || e.rule.covers(directory))
            })
        }

        fn denied_entry(&self, path: &Path) -> Option<&Entry> {
            self.entries
                .iter()
                .filter(|e| e.rule.origin.is_deny() && e.rule.covers(path))
                .max_by_key(|e| e.rule.narrowness())
        }

        fn denied_within(&self, directory: &Path) -> Option<&TrustRule> {
            self.entries.iter().map(|e| &e.rule).find(|r| {
                r.origin.is_deny() && (r.path.starts_with(directory) || r.covers(directory))
            })
        }
    }

    #[derive(Clone, Debug)]
    enum Step {
        Restore(usize, bool, RuleOrigin),
        Vouch(usize, bool, u64),
        Deny(usize, bool, bool),
        Default(usize, bool),
        Mark(usize, bool, Option<u64>),
    }

    fn origin() -> impl Strategy<Value = RuleOrigin> {
        prop_oneof![
            Just(RuleOrigin::Person),
            Just(RuleOrigin::Instructions),
            Just(RuleOrigin::AgentWroteUntrusted),
            Just(RuleOrigin::Unrecognised),
            Just(RuleOrigin::Denied),
            Just(RuleOrigin::DeniedBySettings),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        let path = 0..PATHS.len();
        prop_oneof![
            (path.clone(), any::<bool>(), origin()).prop_map(|(p, d, o)| Step::Restore(p, d, o)),
            (path.clone(), any::<bool>(), 0..4u64).prop_map(|(p, d, back)| Step::Vouch(p, d, back)),
            (path.clone(), any::<bool>(), any::<bool>())
                .prop_map(|(p, d, settings)| Step::Deny(p, d, settings)),
            (path.clone(), any::<bool>()).prop_map(|(p, d)| Step::Default(p, d)),
            (path, any::<bool>(), proptest::option::of(0..3u64))
                .prop_map(|(p, d, f)| Step::Mark(p, d, f)),
        ]
    }

    fn scope(directory: bool) -> Scope {
        if directory {
            Scope::Directory
        } else {
            Scope::File
        }
    }

    fn id(n: u64) -> FileId {
        FileId {
            device: 1,
            inode: n,
        }
    }

    fn run(steps: &[Step]) -> Result<(), TestCaseError> {
        let mut map = TrustMap::default();
        let mut scan = Scan::default();
        for s in steps {
            match s.clone() {
                Step::Restore(p, d, origin) => {
                    let rule = TrustRule {
                        path: PathBuf::from(PATHS[p]),
                        scope: scope(d),
                        origin,
                    };
                    map.restore(rule.clone());
                    scan.insert(rule, None);
                }
                Step::Vouch(p, d, back) => {
                    let shown = Moment(map.now().0.saturating_sub(back));
                    let path = PathBuf::from(PATHS[p]);
                    let g = Gesture::new(path.clone(), scope(d), shown, Approved::by_the_person());
                    prop_assert_eq!(map.vouch(g).is_ok(), scan.vouch(path, scope(d), shown));
                }
                Step::Deny(p, d, settings) => {
                    let origin = if settings {
                        RuleOrigin::DeniedBySettings
                    } else {
                        RuleOrigin::Denied
                    };
                    map.deny(PathBuf::from(PATHS[p]), scope(d), origin);
                    scan.insert(
                        TrustRule {
                            path: PathBuf::from(PATHS[p]),
                            scope: scope(d),
                            origin,
                        },
                        None,
                    );
                }
                Step::Default(p, d) => {
                    prop_assert_eq!(
                        map.add_default(PathBuf::from(PATHS[p]), scope(d)),
                        scan.add_default(PathBuf::from(PATHS[p]), scope(d))
                    );
                }
                Step::Mark(p, d, f) => {
                    map.mark(PathBuf::from(PATHS[p]), scope(d), f.map(id));
                    scan.insert(
                        TrustRule {
                            path: PathBuf::from(PATHS[p]),
                            scope: scope(d),
                            origin: RuleOrigin::AgentWroteUntrusted,
                        },
                        f.map(id),
                    );
                }
            }
            prop_assert_eq!(map.now(), Moment(scan.clock));
            prop_assert!(map.rules().eq(scan.entries.iter().map(|e| &e.rule)));
            let named: Vec<&PathBuf> = scan
                .entries
                .iter()
                .filter(|e| e.rule.origin == RuleOrigin::Person)
                .map(|e| &e.rule.path)
                .collect();
            for q in PATHS.iter().map(Path::new) {
                prop_assert_eq!(
                    map.rule_for(q),
                    scan.entry_for(q).map(|e| &e.rule),
                    "{}",
                    q.display()
                );
                prop_assert_eq!(map.denied(q), scan.denied_entry(q).map(|e| &e.rule));
                prop_assert_eq!(map.denied_within(q), scan.denied_within(q));
                prop_assert_eq!(map.untrusted_within(q), scan.untrusted_within(q));
                for f in [None, Some(id(0)), Some(id(1)), Some(id(2))] {
                    prop_assert_eq!(map.integrity_of_file(q, f), scan.integrity_of_file(q, f));
                }
                prop_assert_eq!(
                    map.named.contains(q),
                    named.iter().any(|n| n.as_path() == q)
                );
            }
        }
        Ok(())
    }

    // Verifies: TRUST-21
    #[test]
    fn the_indexed_map_answers_what_a_scan_of_every_rule_answers() {
        let defaults = Config::default();
        let config = Config {
            rng_seed: match std::env::var_os("PROPTEST_RNG_SEED") {
                Some(_) => defaults.rng_seed,
                None => RngSeed::Fixed(0x7a05_0021),
            },
            failure_persistence: None,
            ..defaults
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&proptest::collection::vec(step(), 1..80), |steps| {
            run(&steps)
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
