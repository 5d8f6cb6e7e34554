//! A session: one conversation in one workspace, with its trust map, quarantine, audit trail and
//! history, and the two things it talks to: the person's [`Screen`] and the editor's [`Files`].
//!
//! The server owns sessions and turns protocol messages into calls here; `bravebot exec` owns one
//! with a screen that nobody is watching. Everything a session shows the person goes out as an
//! [`Update`](crate::screen::Update); everything it asks goes out as a
//! [`Question`](crate::screen::Question) and comes back as an [`Answer`](crate::screen::Answer).
//! What starts a turn on a session (a prompt, a watch, a loop's tick) is in `driver.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use crate::conversation::Conversation;
use crate::files::Files;
use crate::kernel::audit::{AuditRecord, AuditTrail, Decision, Gate};
use crate::kernel::context::PlannerContext;
use crate::kernel::policy::Verdict;
use crate::kernel::slot::Quarantine;
use crate::kernel::trust::{Approved, Gesture, RuleOrigin, Scope, TrustMap, TrustRule, TrustStore};
use crate::model::ModelClient;
use crate::record::{HistoryEntry, Restored, SessionRecord, StateDir};
use crate::screen::{Screen, Todo, Update};
use crate::settings::{Mode, Settings};

/// The two tools offered only where they mean something (seed 004).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offers {
    /// The session keeps watches: not a one-shot run.
    pub watch_file: bool,
    /// This turn will be asked again: a self-paced loop's tick, or a line the person typed in a
    /// session that keeps loops and runs none.
    pub schedule_next: bool,
}

/// Facts about the machine that go into the system prompt (seed 003: six of them).
#[derive(Clone, Debug)]
pub struct SystemFacts {
    pub is_git: bool,
    pub platform: String,
    pub os_version: String,
    pub shell: String,
    pub date: String,
}

pub struct SessionConfig {
    pub id: String,
    pub cwd: PathBuf,
    pub settings: Settings,
    pub facts: SystemFacts,
    /// Where the audit trail is appended as JSON lines, if anywhere.
    pub audit_log: Option<PathBuf>,
}

/// The mutable state of a session, behind one lock held only for short, non-async sections.
pub struct SessionState {
    pub quarantine: Quarantine,
    pub audit: AuditTrail,
    pub context: PlannerContext,
    /// The planner's conversation: the only thing a session record takes as its conversation.
    pub conversation: Conversation,
    /// What the session is listed as: the first line of its first prompt, bounded.
    pub title: Option<String>,
    /// When the session was made (seconds since the epoch); a resumed session keeps its own.
    pub created: u64,
    pub todos: Vec<Todo>,
    pub mode: Mode,
    /// Directories the person added (`bravebot/session/trust` with scope directory): reachable.
    pub added_dirs: Vec<PathBuf>,
    /// The person's standing approvals: files edited, plans run, outputs that may allow their
    /// plan, `ask_user` answers, and the paths offered a `trustRead` question this turn.
    pub approvals: crate::kernel::approvals::Approvals,
    /// Background runs of this session.
    pub jobs: Vec<crate::jobs::Job>,
    /// The session's standing watches on files (`watch_file`).
    pub watches: crate::watch::Watches,
    /// The loop this session is running, if any (`bravebot/session/loop`, `schedule_next`).
    pub looping: Option<crate::looping::LoopState>,
    /// What `schedule_next` asked for in the turn running now.
    pub scheduled: Option<crate::looping::Schedule>,
    /// The optional tools the turn running now was offered.
    pub offers: Offers,
    /// The delegates this run started and the tree they count against (`spawn_agent`).
    pub delegation: crate::delegation::Delegation,
    /// The skills listed to the planner at the start of the turn running now (`load_skill`).
    pub skills: Vec<crate::skills::Skill>,
    pub(crate) audit_written: usize,
}

pub struct Session {
    pub id: String,
    pub cwd: PathBuf,
    pub settings: Settings,
    pub facts: SystemFacts,
    pub model: ModelClient,
    /// The session's one trust map, shared with every delegate and job it starts: every seat
    /// writes its marks and denies here at once (TRUST-10).
    pub trust: Arc<TrustStore>,
    /// The checks' verdicts, by the bytes they judged, and what checking has cost: shared like
    /// the trust map, so an unsafe verdict reached in a delegate holds the same bytes back here.
    pub verdicts: Arc<Mutex<crate::kernel::verdicts::Verdicts>>,
    /// Verdicts kept across sessions in `~/.bravebot/verdicts` (CHECK-8): only a session that
    /// keeps records has it, so an incognito one neither reads nor writes it (CHECK-11).
    pub verdict_store: Option<Arc<crate::verdict_store::VerdictStore>>,
    /// The check's own model (`vetting.model`, CHECK-12), shared with every delegate; `None`
    /// sends checks to the planner's.
    pub check_model: Option<Arc<ModelClient>>,
    /// The workspace before each turn and restore, as far as each changed it: shared like the
    /// trust map, so a delegate's or a job's changes are kept in the turn's checkpoint.
    pub checkpoints: Arc<crate::checkpoint::Checkpoints>,
    /// What the session's model calls cost: shared like the trust map, so a delegate's calls
    /// count in the session's totals (USAGE-4).
    pub usage: Arc<Mutex<crate::usage::Ledger>>,
    pub screen: Arc<dyn Screen>,
    pub files: Arc<dyn Files>,
    /// The session's language servers: one per language, started on approval, stopped with it.
    pub language_servers: Arc<crate::language::LanguageServers>,
    /// The inherited variables no program of this session is handed (runs and language servers
    /// alike): the fixed list and the session's credential variables.
    pub withheld: crate::process::Withheld,
    /// Where this session sits when it is a delegate's: its number, kind, depth, the tools it
    /// holds and the tree it belongs to. `None` for a session the person opened.
    pub seat: Option<crate::delegation::Seat>,
    /// The MCP servers the person declared: started on approval, stopped with the session. A
    /// delegate shares its session's (the same processes, pins and approvals) and calls only the
    /// ones its seat names; it never starts or stops one.
    pub mcp: Arc<crate::mcp::Servers>,
    /// Whether a clean check answers at a vetting prompt in the person's place, and which switch
    /// said so: shared with every delegate, so turning it off reaches them at once (VET-24).
    pub auto_vetting: Arc<crate::vetting::AutoVetting>,
    audit_log: Option<PathBuf>,
    /// Where the session's record and the prompt history are kept; `None` keeps neither (an
    /// incognito session, a headless run).
    keep: Option<StateDir>,
    /// The context a planner request is held to, in tokens, and where that came from, once known.
    pub(crate) resolved_context_tokens: std::sync::OnceLock<(u64, crate::settings::ContextSource)>,
    /// What the model takes besides text, once known (`model.inputs`, else the listing).
    resolved_inputs: std::sync::OnceLock<crate::model::Inputs>,
    /// Whether turns of this session may arm watches and run loops: a session somebody keeps open
    /// (the editor's), not a one-shot run.
    keeps_watches: bool,
    /// Counts turns that ended, so a firing or a tick waiting for the session can wait for one.
    turn_done: tokio::sync::watch::Sender<u64>,
    ended: std::sync::atomic::AtomicBool,
    /// What runs the delegates `spawn_agent` queued, the moment it queues them: the turn's own
    /// launcher, handed down when the turn starts, so a tool starts a delegate's task without
    /// naming the turn that runs it.
    pub(crate) launch_delegates: std::sync::OnceLock<fn(&Session)>,
    /// Where this session's capped searches stopped, for the pages they name.
    pub(crate) search_pages: crate::search::Pages,
    state: Mutex<SessionState>,
    turn: Mutex<Option<CancellationToken>>,
}

/// Ends a turn's claim on its session when the turn finishes or is dropped.
pub(crate) struct TurnGuard<'a> {
    session: &'a Session,
    token: CancellationToken,
}

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        self.token.cancel();
        *self.session.turn.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.session.turn_done.send_modify(|n| *n += 1);
    }
}

/// A turn is already running in this session.
#[derive(Debug, thiserror::Error)]
#[error("a turn is already running in this session")]
pub struct Busy;

impl Session {
    pub fn new(
        config: SessionConfig,
        model: ModelClient,
        screen: Arc<dyn Screen>,
        files: Arc<dyn Files>,
    ) -> Session {
        let mut trust = TrustMap::default();
        let mut audit = AuditTrail::new(std::time::SystemTime::now);
        // The files a person writes in order to be obeyed are trusted from the start (CONTRACT
        // §4.3). They are defaults: a path already covered stays as it was. One that leads out of
        // the workspace, or is not what the default is for, is not trusted at all (TRUST-6).
        for (path, scope) in [
            (config.cwd.join("AGENTS.md"), Scope::File),
            (
                config.cwd.join(".bravebot").join("skills"),
                Scope::Directory,
            ),
        ] {
            let shown = crate::paths::display_path(&config.cwd, &path);
            let directory = scope == Scope::Directory;
            if let Some(refusal) =
                crate::workspace_file::default_refusal(&config.cwd, &path, directory)
            {
                audit.record(
                    Gate::Trust,
                    Decision::Refused,
                    format!("{shown} not trusted by default: {}", refusal.reason()),
                );
                continue;
            }
            if trust.add_default(path.clone(), scope) {
                audit.record(
                    Gate::Trust,
                    Decision::Allowed,
                    format!("{shown} trusted by default (origin instructions)"),
                );
            }
        }
        // The person's `read.deny` (and any the workspace's file added): nothing there is read,
        // whatever the defaults above said (TRUST-8).
        for denied in &config.settings.read_deny {
            let path = crate::paths::absolute(&config.cwd, Path::new(denied));
            let shown = crate::paths::display_path(&config.cwd, &path);
            trust.deny(path, Scope::Directory, RuleOrigin::DeniedBySettings);
            audit.record(
                Gate::Trust,
                Decision::Refused,
                format!("{shown} denied by read.deny (origin settingsDeny)"),
            );
        }
        let mode = config.settings.mode;
        let question_timeout = config.settings.question_timeout_seconds;
        let auto_vetting = Arc::new(crate::vetting::AutoVetting::new(
            config.settings.vetting_auto,
            config.settings.vetting_auto_source,
        ));
        let checkpoints_on = config.settings.checkpoints;
        let withheld = crate::process::Withheld::with_credentials(
            config
                .settings
                .model
                .credential_variables
                .iter()
                .map(String::as_str),
        );
        let language_servers = Arc::new(
            crate::language::LanguageServers::for_session(&config.cwd, withheld.clone())
                .confining(config.settings.run_confined),
        );
        let mcp = Arc::new(crate::mcp::Servers::new(
            config.settings.mcp_servers.clone(),
        ));
        Session {
            id: config.id,
            cwd: config.cwd,
            settings: config.settings,
            facts: config.facts,
            model,
            trust: Arc::new(TrustStore::new(trust)),
            verdicts: Default::default(),
            usage: Default::default(),
            checkpoints: Arc::new(if checkpoints_on {
                crate::checkpoint::Checkpoints::in_memory()
            } else {
                crate::checkpoint::Checkpoints::off()
            }),
            // Delegates run beside the turn, and every question of the session's is put one at a
            // time (DELEG-9),
            // and one nobody answers in time is refused (ATTN-1).
            screen: Arc::new(crate::screen::OneAtATime::new(screen).with_timeout(question_timeout)),
            files,
            language_servers,
            withheld,
            seat: None,
            mcp,
            auto_vetting,
            verdict_store: None,
            check_model: None,
            audit_log: config.audit_log,
            keep: None,
            resolved_context_tokens: std::sync::OnceLock::new(),
            resolved_inputs: std::sync::OnceLock::new(),
            keeps_watches: false,
            turn_done: tokio::sync::watch::Sender::new(0),
            ended: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(SessionState {
                quarantine: Quarantine::default(),
                audit,
                context: PlannerContext::default(),
                conversation: Conversation::default(),
                title: None,
                created: crate::record::now(),
                todos: Vec::new(),
                mode,
                added_dirs: Vec::new(),
                approvals: Default::default(),
                jobs: Vec::new(),
                watches: Default::default(),
                looping: None,
                scheduled: None,
                offers: Default::default(),
                delegation: Default::default(),
                skills: Vec::new(),
                audit_written: 0,
            }),
            turn: Mutex::new(None),
            launch_delegates: std::sync::OnceLock::new(),
            search_pages: crate::search::Pages::default(),
        }
    }

    /// The session a delegate runs in: the parent's workspace, settings (less the round limit
    /// its seat sets), files, language servers, MCP servers and screen (through `screen`), with a state of its
    /// own: a fresh conversation, quarantine, audit trail and context, and a copy of the parent's
    /// added directories. The trust map and the verdicts are the session's own, shared, not
    /// copied: a mark or a vouch made inside the delegate is the session's at once (TRUST-10). No
    /// standing approval is copied: every write and run of a delegate is asked for on its own
    /// (DELEG-5).
    pub(crate) fn for_delegate(
        &self,
        seat: crate::delegation::Seat,
        screen: Arc<dyn Screen>,
        model: ModelClient,
        max_rounds: u32,
    ) -> Session {
        let state = self.state();
        let mut settings = self.settings.clone();
        settings.max_rounds = max_rounds;
        let mode = match state.mode {
            Mode::Plan => Mode::Plan,
            _ => Mode::Ask,
        };
        let child = SessionState {
            quarantine: Quarantine::default(),
            audit: AuditTrail::new(std::time::SystemTime::now),
            context: PlannerContext::default(),
            conversation: Conversation::default(),
            title: None,
            created: crate::record::now(),
            todos: Vec::new(),
            mode,
            added_dirs: state.added_dirs.clone(),
            approvals: Default::default(),
            jobs: Vec::new(),
            watches: Default::default(),
            looping: None,
            scheduled: None,
            offers: Default::default(),
            delegation: crate::delegation::Delegation::within(seat.tree.clone()),
            skills: Vec::new(),
            audit_written: 0,
        };
        drop(state);
        Session {
            id: format!("{}/delegate-{}", self.id, seat.number),
            cwd: self.cwd.clone(),
            settings,
            facts: self.facts.clone(),
            model,
            trust: self.trust.clone(),
            verdicts: self.verdicts.clone(),
            verdict_store: self.verdict_store.clone(),
            check_model: self.check_model.clone(),
            checkpoints: self.checkpoints.clone(),
            usage: self.usage.clone(),
            screen,
            files: self.files.clone(),
            language_servers: self.language_servers.clone(),
            withheld: self.withheld.clone(),
            seat: Some(seat),
            // The session's own servers, running as they are: the seat says which of them this
            // delegate may call (DELEG-20), and it starts and stops none (MCP-20).
            mcp: self.mcp.clone(),
            auto_vetting: self.auto_vetting.clone(),
            launch_delegates: std::sync::OnceLock::new(),
            search_pages: crate::search::Pages::default(),
            audit_log: None,
            keep: None,
            resolved_context_tokens: std::sync::OnceLock::new(),
            resolved_inputs: std::sync::OnceLock::new(),
            keeps_watches: false,
            turn_done: tokio::sync::watch::Sender::new(0),
            ended: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(child),
            turn: Mutex::new(None),
        }
    }

    /// Keeps this session's record, and the prompts it is sent, under `state` (SESS-1, SESS-8).
    pub fn keeping_records(mut self, state: StateDir) -> Session {
        // Checkpoints' contents go beside the record; an id that names no directory keeps them
        // in memory, as it keeps no record.
        if let Ok(dir) = state.session_dir(&self.id)
            && self.settings.checkpoints
        {
            self.checkpoints = Arc::new(crate::checkpoint::Checkpoints::on_disk(
                dir.join("checkpoints"),
            ));
        }
        self.verdict_store = Some(Arc::new(crate::verdict_store::VerdictStore::open(
            state.verdicts_path(),
        )));
        self.keep = Some(state);
        self
    }

    /// The client a check is sent through: the check's own model where `vetting.model` names
    /// one, else the planner's.
    pub fn checker(&self) -> &ModelClient {
        self.check_model.as_deref().unwrap_or(&self.model)
    }

    /// Leaves nothing behind (SESS-10): no record, no history, the audit trail in memory only, and
    /// language servers started with no index cache under `~/.bravebot`.
    pub fn incognito(mut self) -> Session {
        self.keep = None;
        self.verdict_store = None;
        if self.settings.checkpoints {
            self.checkpoints = Arc::new(crate::checkpoint::Checkpoints::in_memory());
        }
        self.audit_log = None;
        self.language_servers = Arc::new(
            crate::language::LanguageServers::new(
                self.cwd.clone(),
                None,
                std::env::var_os("PATH"),
                crate::language::Limits::default(),
            )
            .withholding(self.withheld.clone())
            .confining(self.settings.run_confined),
        );
        self
    }

    /// Where the audit trail is appended, if anywhere.
    pub fn audit_log(&self) -> Option<&Path> {
        self.audit_log.as_deref()
    }

    /// Lets this session's turns arm watches and run loops (WATCH-1, LOOP-1): a session an
    /// editor keeps open. A one-shot run is not offered either.
    pub fn keeping_watches(mut self) -> Session {
        self.keeps_watches = true;
        self
    }

    /// Whether `watch_file` and loops are this session's to use.
    pub fn keeps_watches(&self) -> bool {
        self.keeps_watches
    }

    /// Whether the session has ended.
    pub fn ended(&self) -> bool {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The firings of this session's watches, taken once by whoever turns them into turns.
    pub fn take_firings(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<PathBuf>> {
        self.state().watches.take_receiver()
    }

    /// Whether the session keeps a record.
    pub fn keeps_records(&self) -> bool {
        self.keep.is_some()
    }

    /// Where the person's auto-vetting choice is recorded for this session: the state directory
    /// of a session that keeps records, none for one that leaves nothing behind (an incognito
    /// session reads no recorded choice, so it is offered no key that writes one).
    pub fn vetting_record(&self) -> Option<&StateDir> {
        self.keep.as_ref()
    }

    /// Turns auto-vetting on or off for this session and its delegates, as `source` decided. A
    /// change is written to the audit trail and drawn in the chat at once (VET-23, VET-24);
    /// setting it to what it already is says nothing.
    pub fn set_auto_vetting(&self, on: bool, source: &'static str) {
        if !self.auto_vetting.set(on, source) {
            return;
        }
        self.state().audit.record(
            Gate::Trust,
            if on {
                Decision::Allowed
            } else {
                Decision::Refused
            },
            format!(
                "auto-vetting turned {} by {source}",
                crate::vetting::record_word(on)
            ),
        );
        self.screen.update(Update::AutoVetting { on, source });
    }

    /// Takes up a recorded session where it stopped (SESS-6, SESS-7): its conversation, with a
    /// sentence of the driver's saying the references it names are gone; its trust rules and their
    /// origins, except the start-of-session defaults, which this session worked out afresh; the
    /// directories added; the mode; and what the planner's context had met, so a context that had
    /// met untrusted content still has. Slots, standing approvals and verdicts do not survive.
    pub fn restore(&self, restored: Restored) {
        if let Some(index) = &restored.checkpoints {
            self.checkpoints.load_index(index);
        }
        let mut state = self.state();
        let state = &mut *state;
        let mut trust = self.trust.lock();
        for rule in restored.trust {
            // The defaults and the settings' denies were worked out afresh for this session.
            if matches!(
                rule.origin,
                RuleOrigin::Instructions | RuleOrigin::DeniedBySettings
            ) {
                continue;
            }
            let shown = crate::paths::display_path(&self.cwd, &rule.path);
            state.audit.record(
                Gate::Trust,
                Decision::Allowed,
                format!(
                    "{shown} rule restored from the session record (origin {})",
                    rule.origin.as_str()
                ),
            );
            trust.restore(rule);
        }
        drop(trust);
        for dir in restored.added_dirs {
            if !state.added_dirs.contains(&dir) {
                state.added_dirs.push(dir);
            }
        }
        state.mode = restored.mode;
        // Labels only degrade: the restored context starts clean and is shown what it had met.
        state.context.observe(restored.context.0);
        if let Some(released) = restored.context.1 {
            state.context.observe_release(released);
        }
        state.quarantine =
            Quarantine::numbered_from(u32::try_from(restored.next_slot).unwrap_or(u32::MAX));
        state.conversation = restored.conversation;
        if !state.conversation.is_empty() {
            state.conversation.push_driver(crate::kernel::policy::PlannerText::driver(
                "[bravebot: this conversation was resumed from its session record. The references (ref:N) named above are gone: their contents were never kept, so naming one finds nothing. Read again what you need.]",
            ));
        }
        state.title = Some(restored.listed.title);
        state.created = restored.listed.created;
        if let Some(kept) = restored.usage {
            self.usage
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .restore(kept);
        }
    }

    /// Writes the session's record, where it keeps one. A failure is logged: the session goes on.
    pub fn save_record(&self) {
        let Some(keep) = &self.keep else { return };
        let state = self.state();
        let rules: Vec<TrustRule> = self.trust.lock().rules().cloned().collect();
        let Some(title) = state.title.as_deref() else {
            // Nothing was asked yet: there is nothing to resume.
            return;
        };
        let record = SessionRecord {
            id: &self.id,
            cwd: &self.cwd,
            title,
            created: state.created,
            updated: crate::record::now(),
            mode: state.mode,
            model: self.settings.model.name.clone(),
            conversation: &state.conversation,
            trust: &rules,
            added_dirs: &state.added_dirs,
            context: (state.context.presented(), state.context.released()),
            next_slot: state.quarantine.next_number() as usize,
            usage: self.usage.lock().unwrap_or_else(|p| p.into_inner()).kept(),
        };
        if let Err(e) = keep.save_later(&record) {
            tracing::warn!("session record not written: {e}");
        }
    }

    /// Claims the session for one turn: the token that cancels it and the guard that ends the
    /// claim when the turn finishes or its caller stops waiting. [`Busy`] while a turn runs.
    pub(crate) fn claim_turn(&self) -> Result<(TurnGuard<'_>, CancellationToken), Busy> {
        let mut slot = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return Err(Busy);
        }
        let token = CancellationToken::new();
        *slot = Some(token.clone());
        self.usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .begin_turn();
        Ok((
            TurnGuard {
                session: self,
                token: token.clone(),
            },
            token,
        ))
    }

    /// Counts one finished model call by `role` whose endpoint reported `usage` (`None`: it said
    /// nothing), and shows the person the call and the meter after it (USAGE-4). The price is the
    /// one the person gave for the model this session's client asks.
    pub(crate) fn count_usage(&self, role: crate::model::Role, usage: Option<crate::model::Usage>) {
        // A check's tokens are priced as its own model's (CHECK-12).
        let model = if role == crate::model::Role::Check {
            self.checker()
        } else {
            &self.model
        };
        let price = self.settings.price_of(&model.config().name);
        let limit = self.context_limit();
        let (call, meter) = self
            .usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(role, usage, price, limit);
        self.screen.update(crate::screen::Update::Usage {
            role: role.as_str(),
            call,
            meter: Box::new(meter),
        });
    }

    /// The planner's conversation was compacted to fit its budget, `messages` of it folded into
    /// the summary: counted on the meter, which the next `usage` update and `session/status`
    /// carry, and logged, since the provider's cached prefix is lost with it (MODEL-11). A
    /// delegate shares its session's meter, so its compactions are counted there too.
    pub(crate) fn note_compaction(&self, messages: usize) {
        tracing::info!(
            messages,
            "the conversation was compacted to fit the context budget; the provider's cached prefix is lost"
        );
        self.usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .compacted();
    }

    /// The meter as it stands, for `session/status` (USAGE-7).
    pub fn usage_meter(&self) -> crate::screen::Meter {
        let limit = self.context_limit();
        self.usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .meter(limit)
    }

    /// The context a planner request is held to, where a setting names it or it was resolved.
    fn context_limit(&self) -> Option<u64> {
        self.context_budget().map(|(n, _)| n)
    }

    /// The context a planner request is held to and where it came from (MODEL-10), where a
    /// setting names it or a turn resolved it; `None` before the first turn asked the endpoint.
    pub fn context_budget(&self) -> Option<(u64, crate::settings::ContextSource)> {
        match self.settings.model.context_tokens {
            Some(n) => Some((n, crate::settings::ContextSource::Setting)),
            None => self.resolved_context_tokens.get().copied(),
        }
    }

    /// Told each time a turn's claim ends, for whoever waits for the session to be free.
    pub(crate) fn turn_ended_watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.turn_done.subscribe()
    }

    /// A prompt the person typed: it titles the session when nothing did yet, and goes into the
    /// prompt history where the session keeps one.
    pub(crate) fn remember_prompt(&self, text: &str) {
        let titled = {
            let mut state = self.state();
            match state.title {
                Some(_) => None,
                None => {
                    let title = crate::record::title_of(text);
                    state.title = Some(title.clone());
                    Some(title)
                }
            }
        };
        // Told once the lock is let go: a screen may take its own locks.
        if let Some(title) = titled {
            self.screen.titled(&title);
        }
        if let Some(keep) = &self.keep {
            keep.remember_prompt_later(HistoryEntry {
                text: text.to_string(),
                time: crate::record::now(),
                session_id: self.id.clone(),
                cwd: self.cwd.display().to_string(),
            });
        }
    }

    /// The session's state. Never held across an await.
    pub fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Ends the session: the running turn, its background jobs and its language servers.
    pub fn end(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
        {
            let mut state = self.state();
            state.watches.clear();
            if let Some(l) = state.looping.take() {
                l.stop.cancel();
            }
        }
        self.turn_done.send_modify(|n| *n += 1);
        self.cancel();
        self.stop_jobs();
        self.stop_language_servers();
        // A delegate's servers are its session's, which stops them when it ends (MCP-20).
        if self.seat.is_none() {
            self.mcp.stop_all();
        }
    }

    /// Stops every background job of the session (the session is ending).
    pub fn stop_jobs(&self) {
        for job in &self.state().jobs {
            job.stop.cancel();
        }
    }

    /// Stops the session's language servers (the session is ending): politely, then for good.
    pub fn stop_language_servers(&self) {
        self.language_servers.stop_all();
    }

    /// Stops the running turn, if any; every question it waits on is refused.
    pub fn cancel(&self) {
        if let Some(token) = self.turn.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            token.cancel();
        }
    }

    /// The person's gesture of vouching for a file, or adding a directory (which makes it
    /// reachable; its files are then read through a check like the workspace's).
    pub fn trust_path(&self, path: &Path, scope: Scope) {
        let path = crate::paths::absolute(&self.cwd, path);
        let shown = crate::paths::display_path(&self.cwd, &path);
        let mut state = self.state();
        // The request is the gesture, made now: after every mark the store holds.
        let gesture = |path: PathBuf, trust: &TrustMap| {
            Gesture::new(path, scope, trust.now(), Approved::by_the_person())
        };
        match scope {
            Scope::File => {
                let mut trust = self.trust.lock();
                let made = gesture(path, &trust);
                let vouched = trust.vouch(made);
                drop(trust);
                match vouched {
                    Ok(()) => state.audit.record(
                        Gate::Trust,
                        Decision::Allowed,
                        format!("{shown} trusted by the person (origin person)"),
                    ),
                    Err(e) => state.audit.record(
                        Gate::Trust,
                        Decision::Refused,
                        format!("{shown} not trusted: {e}"),
                    ),
                }
            }
            Scope::Directory => {
                // A repository's .git holds its history, not files to edit: trusting it is the
                // person vouching for that history, so `read_git` may read it (GIT-2, TRUST-20).
                if path.file_name().is_some_and(|n| n == ".git") {
                    let mut trust = self.trust.lock();
                    let made = gesture(path.clone(), &trust);
                    let vouched = trust.vouch(made);
                    drop(trust);
                    state.audit.record(
                        Gate::Trust,
                        if vouched.is_ok() {
                            Decision::Allowed
                        } else {
                            Decision::Refused
                        },
                        match vouched {
                            Ok(()) => format!("{shown} trusted by the person as a repository's history, which read_git may read (origin person)"),
                            Err(e) => format!("{shown} not trusted: {e}"),
                        },
                    );
                }
                if !state.added_dirs.contains(&path) {
                    state.added_dirs.push(path);
                }
                state.audit.record(
                    Gate::Trust,
                    Decision::Allowed,
                    format!("{shown} added as a place to work by the person"),
                );
            }
        }
        drop(state);
        self.flush_audit();
        self.save_record();
    }

    /// The person's gesture of saying do not look here: a deny rule on a file, or on a directory
    /// and everything beneath it, that no later rule replaces (TRUST-7).
    pub fn deny_path(&self, path: &Path, scope: Scope) {
        let path = crate::paths::absolute(&self.cwd, path);
        let shown = crate::paths::display_path(&self.cwd, &path);
        let mut state = self.state();
        self.trust.lock().deny(path, scope, RuleOrigin::Denied);
        state.audit.record(
            Gate::Trust,
            Decision::Refused,
            format!("{shown} denied by the person (origin personDeny)"),
        );
        drop(state);
        self.flush_audit();
        self.save_record();
    }

    pub fn set_mode(&self, mode: Mode) {
        self.state().mode = mode;
        self.save_record();
    }

    pub fn audit_records(&self) -> Vec<AuditRecord> {
        self.gather_audit();
        self.state().audit.records().to_vec()
    }

    /// Appends the records not yet written to the session's audit file, as JSON lines. A
    /// failure is logged and the records are kept in memory. A delegate's records go up to the
    /// session the person opened, named by the delegate (DELEG-11).
    pub fn flush_audit(&self) {
        if self.forward_audit() {
            return;
        }
        self.gather_audit();
        let Some(path) = &self.audit_log else { return };
        let mut state = self.state();
        let fresh: Vec<String> = state
            .audit
            .since(state.audit_written)
            .iter()
            .map(|r| {
                serde_json::json!({"gate": r.gate.as_str(), "decision": r.decision.as_str(), "detail": r.detail})
                    .to_string()
            })
            .collect();
        if fresh.is_empty() {
            return;
        }
        let made = path
            .parent()
            .map_or(Ok(()), crate::record::create_private_dir);
        if let Err(e) = made {
            tracing::warn!("audit trail not written: {e}");
            return;
        }
        let written = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
        }
        .and_then(|mut f| f.write_all((fresh.join("\n") + "\n").as_bytes()));
        match written {
            Ok(()) => state.audit_written += fresh.len(),
            Err(e) => tracing::warn!("audit trail not written to {}: {e}", path.display()),
        }
    }
}

impl Session {
    /// What the model takes besides text: `model.inputs` where a setting names it, else what
    /// the endpoint's model listing says (asked once a session), else text only (CONTRACT §5).
    pub async fn model_inputs(&self) -> crate::model::Inputs {
        if let Some(inputs) = self.settings.model.inputs {
            return inputs;
        }
        if let Some(inputs) = self.resolved_inputs.get() {
            return *inputs;
        }
        // A listing that could not be had is asked again next time rather than remembered as
        // text only.
        match self.model.listed_inputs().await {
            Some(listed) => *self.resolved_inputs.get_or_init(|| listed),
            None => crate::model::Inputs::default(),
        }
    }

    /// For a delegate's session: moves its new audit records up to its tree, named by the delegate.
    /// Returns whether the session is a delegate's.
    pub(crate) fn forward_audit(&self) -> bool {
        let session = self;
        let Some(seat) = &session.seat else {
            return false;
        };
        let fresh: Vec<AuditRecord> = {
            let mut state = session.state();
            let from = state.audit_written;
            let fresh: Vec<AuditRecord> = state.audit.since(from).to_vec();
            state.audit_written += fresh.len();
            fresh
        };
        let label = seat.label();
        let mut inner = seat.tree.lock();
        inner.audit.extend(fresh.into_iter().map(|mut record| {
            record.detail = format!("{label}: {}", record.detail);
            record
        }));
        true
    }

    /// For the session the person opened: carries its delegates' audit records into its own trail.
    /// (Their marks and vouches need no carrying: they were written to the session's trust map.)
    pub(crate) fn gather_audit(&self) {
        let session = self;
        if session.seat.is_some() {
            return;
        }
        let Some(tree) = session.state().delegation.tree().cloned() else {
            return;
        };
        let records = std::mem::take(&mut tree.lock().audit);
        if records.is_empty() {
            return;
        }
        let mut state = session.state();
        for record in records {
            state.audit.carry(record);
        }
    }
}

impl crate::workspace_file::ReadScope for Session {
    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn reach(&self) -> crate::workspace_file::Reach {
        // The trust store is read after the state's lock is let go: lock order is state, then
        // trust, and neither is held while the other is taken here.
        let roots = std::iter::once(self.cwd.clone())
            .chain(self.state().added_dirs.iter().cloned())
            .collect();
        crate::workspace_file::Reach::with_rules(roots, &self.trust)
    }

    fn trust(&self) -> &TrustStore {
        &self.trust
    }

    fn files(&self) -> &dyn Files {
        &*self.files
    }
}

/// A check's unsafe verdict on the bytes a file holds now: what a gesture vouching for it must
/// carry (PROTO-29).
pub struct UnsafeNow {
    /// The file as the person's screen shows it.
    pub shown: String,
    pub verdict: Verdict,
    /// The check's own sentence (untrusted), if it completed with one.
    pub reasons: Option<crate::kernel::labelled::Labelled<String>>,
}

/// Whether a check judged the bytes `path` holds now (the editor's buffer or the disk, read as a
/// read would) unsafe this session. Sends no check: a file no check judged, or whose bytes have
/// changed since, has no verdict to show. `None` when it cannot be read.
impl Session {
    pub async fn unsafe_now(&self, path: &Path) -> Option<UnsafeNow> {
        let session = self;
        let path = crate::paths::absolute(&session.cwd, path);
        let file = crate::workspace_file::read(session, &path, crate::workspace_file::READ_LIMIT)
            .await
            .ok()?;
        let bytes = crate::kernel::labelled::Labelled::new(
            file.bytes,
            crate::kernel::label::Label::UNTRUSTED_PRIVATE,
        );
        let fingerprint = crate::kernel::policy::fingerprint(&bytes);
        let verdicts = session.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        if verdicts.recall(&file.real, &fingerprint)? != Verdict::Unsafe {
            return None;
        }
        Some(UnsafeNow {
            shown: crate::paths::display_path(&session.cwd, &path),
            verdict: Verdict::Unsafe,
            reasons: verdicts.reasons(&file.real, &fingerprint),
        })
    }
}

impl Session {
    /// The MCP servers this run may call now: the running servers of the session, and for a
    /// delegate only those its seat names.
    pub fn callable_servers(&self) -> Vec<String> {
        self.mcp
            .running()
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| self.may_call(name))
            .collect()
    }

    /// Whether this run may call the server of this name, were it running: the session the person
    /// opened may call each of its own; a delegate, those its seat names.
    pub fn may_call(&self, server: &str) -> bool {
        self.seat
            .as_ref()
            .is_none_or(|seat| seat.mcp.iter().any(|s| s == server))
    }
}
