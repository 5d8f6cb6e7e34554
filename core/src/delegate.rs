//! Delegates: second planners a turn starts with `spawn_agent`, each with a context of its own
//! and a narrower set of tools, whose one report comes back to the run that started it.
//!
//! A delegate runs in a session of its own ([`Session::for_delegate`]): its own conversation,
//! quarantine, audit trail and planner context, and a copy of the parent's added directories. It
//! works in the session's own trust map and verdicts, never a copy (TRUST-10), and shares the
//! workspace, the editor's buffers, the
//! language servers, the running MCP servers its seat keeps (never starting or stopping one) and
//! the person's screen, through which its questions are put one at a time with everyone else's
//! ([`OneAtATime`](crate::screen::OneAtATime)). It runs as a task of its own beside the turn; the turn
//! is handed its report, labelled by the delegate's own context, when it finishes, and a turn
//! that would answer while one is still working waits for it ([`hand_over`]).
//!
//! Every delegate of one turn belongs to one [`Tree`]: it numbers them in start order, holds the
//! ceiling of [`CEILING`], lists the ones running for `session/status`, and carries their audit
//! records up to the session the person opened.
//!
//! This file holds what sits below the tools: the definitions a turn may name, the skills listing
//! a delegate is given, the reports handed back and a delegate's side of the screen. Choosing a
//! kind and starting a delegate are the `spawn_agent` tool's (`tools/spawn_agent.rs`), which reads
//! the tool table; running one is the turn's (`launch_queued` in `turn.rs`, which the tool calls
//! through the session the moment it queues one).

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::conversation::Conversation;
use crate::delegation::*;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::Origin;
use crate::screen::{Answer, Asker, BoxFuture, Question, Screen, StopReason, Update};
use crate::session::Session;
use crate::skills::{self, Place};

/// The definitions a turn may name, found afresh at its start. A workspace definition is
/// content somebody wrote: it is offered only where the trust map trusts its file (read as a
/// regular file inside the workspace, bounded); one under `~/.bravebot/agents` is trusted by
/// provenance. A name that is also a kind's is left out.
pub async fn definitions(session: &Session) -> Vec<Definition> {
    let mut out: Vec<Definition> = Vec::new();
    let mut places = vec![(
        session.cwd.join(".bravebot").join("agents"),
        Place::Workspace,
    )];
    if let Some(home) = skills::home_dir("agents") {
        places.push((home, Place::Home));
    }
    for (dir, place) in places {
        for entry in skills::entries(dir.clone(), MAX_DEFINITIONS).await {
            let Some(name) = entry.strip_suffix(".md") else {
                continue;
            };
            if !skills::is_name(name)
                || Kind::parse(name).is_some()
                || out.iter().any(|d| d.name == name)
            {
                continue;
            }
            let path: PathBuf = dir.join(&entry);
            let Some(text) = skills::read_trusted(session, &path, place).await else {
                continue;
            };
            let Some((keys, body)) = skills::front_matter(&text) else {
                continue;
            };
            let Some(description) = skills::value(&keys, "description") else {
                continue;
            };
            let named = skills::value(&keys, "model").map(str::to_string);
            let (model, refused_model) = match place {
                Place::Home => (named, None),
                Place::Workspace => (None, named.filter(|m| *m != session.model.config().name)),
            };
            out.push(Definition {
                name: name.to_string(),
                description: crate::paths::control_pictures(description)
                    .chars()
                    .take(skills::DESCRIPTION_CHARS)
                    .collect(),
                tools: skills::value(&keys, "tools").map(|t| {
                    t.trim_matches(['[', ']'])
                        .split(',')
                        .map(|s| s.trim().trim_matches(['"', '\'']).to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                }),
                model,
                refused_model,
                body: body.trim().to_string(),
            });
        }
    }
    out
}

/// The listing of skills, presented as trusted configuration, for a system prompt.
pub fn present_listing(session: &Session, listing: Option<String>) -> Option<String> {
    let listing = listing?;
    let mut state = session.state();
    let state = &mut *state;
    let opened = policy::open(Labelled::new(
        listing,
        crate::kernel::label::Label::TRUSTED_PRIVATE,
    ))
    .ok()?;
    Some(
        policy::present(
            opened,
            "the skills' names and descriptions",
            &mut state.context,
            &mut state.audit,
        )
        .into_string(),
    )
}

/// Hands the run the reports of the delegates it started, in start order: those finished so far,
/// up to the first still working, or, with `wait`, every one, waiting for each. Returns whether
/// any report was handed over. A trusted report is presented; one whose delegate's context met
/// content nobody vouched for is quarantined and the run is given its reference.
pub async fn hand_over(
    session: &Session,
    conversation: &mut Conversation,
    cancel: &CancellationToken,
    wait: bool,
) -> bool {
    let mut handed = false;
    loop {
        let next = {
            let mut state = session.state();
            let children = &mut state.delegation.children;
            match children.first() {
                Some(c) if wait || c.handle.is_finished() => Some(children.remove(0)),
                _ => None,
            }
        };
        let Some(child) = next else { break };
        let report = tokio::select! {
            r = child.handle => r,
            () = cancel.cancelled() => break,
        };
        let report = match report {
            Ok(report) => report,
            Err(_) => Report {
                number: child.number,
                name: child.name.clone(),
                about: String::new(),
                text: Said::Trusted(Labelled::new(
                    "(the delegate's task ended without a report)".to_string(),
                    crate::kernel::label::Label::TRUSTED_PUBLIC,
                )),
                stop: StopReason::Cancelled,
            },
        };
        session.gather_audit();
        let text = receive(session, report);
        conversation.push_driver(text);
        handed = true;
    }
    session.gather_audit();
    handed
}

/// The report as the run's planner is given it.
fn receive(session: &Session, report: Report) -> PlannerText {
    let who = format!("delegate {} ({})", report.number, report.name);
    let about = crate::paths::control_pictures(&report.about);
    let about: String = about.chars().take(120).collect();
    let header = format!(
        "[bravebot: the report of {who}, started on: {about}; it ended with {}]",
        report.stop.as_str()
    );
    session.screen.update(Update::ToolResult {
        call_id: format!("delegate-{}", report.number),
        status: crate::screen::ToolStatus::Ok,
        summary: format!("{who} reported ({})", report.stop.as_str()),
    });
    match report.text {
        Said::Trusted(text) => {
            let mut state = session.state();
            let state = &mut *state;
            match policy::open(text) {
                Ok(opened) => {
                    let shown = policy::present(
                        opened,
                        &format!("the report of {who}"),
                        &mut state.context,
                        &mut state.audit,
                    );
                    PlannerText::driver(format!("{header}\n{}", shown.as_str()))
                }
                Err(_) => PlannerText::driver(format!("{header}\nIts report could not be read.")),
            }
        }
        Said::Untrusted(bytes) => {
            let label = bytes.label();
            let reference = {
                let mut state = session.state();
                let state = &mut *state;
                let reference = state.quarantine.put(
                    bytes,
                    Origin::Report {
                        number: report.number,
                        kind: report.name.clone(),
                    },
                );
                policy::withhold(
                    &format!("the report of {who}"),
                    label,
                    &reference.id.to_string(),
                    &mut state.audit,
                );
                reference
            };
            session.screen.update(Update::Quarantined {
                reference: reference.clone(),
                origin: format!("the report of {who}"),
            });
            PlannerText::driver(format!(
                "{header}\nIts context met content nobody vouched for, so its report is quarantined: {reference}"
            ))
        }
    }
}

/// The delegates of the turn running now (or the last one), for `session/status`.
pub fn running(session: &Session) -> Vec<Running> {
    session
        .state()
        .delegation
        .tree()
        .map(|t| t.delegates())
        .unwrap_or_default()
}

/// A delegate's side of the person's screen: its tool calls drawn as lines naming it, its
/// questions put through the session's one-at-a-time screen with its name beside the reason, and
/// its streamed text, references, plan and turn end kept off the screen (a reference of its
/// quarantine names nothing in the session's).
pub(crate) struct DelegateScreen {
    pub(crate) parent: Arc<dyn Screen>,
    pub(crate) label: String,
    pub(crate) number: u32,
    pub(crate) name: String,
    pub(crate) depth: u32,
    pub(crate) about: String,
    pub(crate) tree: Arc<Tree>,
}

impl DelegateScreen {
    /// Lists the delegate in `state` and tells the screen (DELEG-60).
    fn set_state(&self, state: &'static str) {
        self.tree.set_state(self.number, state);
        self.parent.update(Update::Delegate {
            number: self.number,
            name: self.name.clone(),
            depth: self.depth,
            state,
            about: self.about.clone(),
            stop_reason: None,
            report: None,
        });
    }
}

impl Screen for DelegateScreen {
    fn update(&self, update: Update) {
        let n = self.number;
        match update {
            Update::ToolCall {
                call_id,
                tool,
                why,
                routing,
            } => self.parent.update(Update::ToolCall {
                call_id: format!("delegate-{n}:{call_id}"),
                tool,
                why: format!("[{}] {why}", self.label),
                routing,
            }),
            Update::ToolResult {
                call_id,
                status,
                summary,
            } => self.parent.update(Update::ToolResult {
                call_id: format!("delegate-{n}:{call_id}"),
                status,
                summary,
            }),
            // A check says whose it is: the innermost delegate names itself, and those above keep
            // that name (DELEG-71).
            Update::Check { state, delegate } => self.parent.update(Update::Check {
                state,
                delegate: delegate.or(Some(n)),
            }),
            // A delegate's own state, and that of the delegates it started, go up unchanged:
            // numbers are the turn's, so each names one delegate.
            // A call's counts go up unchanged: the meter is the session's, shared with delegates.
            update @ (Update::Remark { .. }
            | Update::Notice { .. }
            | Update::HeldBack { .. }
            | Update::Delegate { .. }
            | Update::Usage { .. }
            | Update::AutoVetting { .. }) => self.parent.update(update),
            Update::AgentText { .. }
            | Update::Quarantined { .. }
            | Update::RunOutput { .. }
            | Update::Plan { .. }
            | Update::TurnEnded { .. }
            | Update::Checkpoint { .. } => {}
        }
    }

    fn ask(&self, mut question: Question) -> BoxFuture<'_, Answer> {
        // The innermost delegate asks: a nested one's question passes up through the screens of
        // the delegates above it, which keep the asker it already names.
        if question.asker.is_none() {
            question.asker = Some(Asker::new(self.number, self.name.clone()));
        }
        question.why = Some(match question.why.take() {
            Some(why) => format!("[{}] {why}", self.label),
            None => format!("[{}]", self.label),
        });
        Box::pin(async move {
            self.set_state("waiting");
            let answer = self.parent.ask(question).await;
            self.set_state("running");
            answer
        })
    }

    fn interactive(&self) -> bool {
        self.parent.interactive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::OneAtATime;
    use std::sync::Mutex;

    // Verifies: DELEG-70
    #[test]
    fn only_a_delegates_screen_names_an_asker() {
        // `Asker::new` is the crate's own: the one place that calls it is a delegate's screen,
        // which names the delegate from its seat.
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut callers = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("source directory") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("source");
                    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
                    for _ in text.matches("Asker::new(") {
                        callers.push(path.strip_prefix(&src).expect("inside").to_path_buf());
                    }
                }
            }
        }
        assert_eq!(callers, [std::path::PathBuf::from("delegate.rs")]);
    }

    /// A screen whose questions take a while, counting how many are open at once.
    #[derive(Default)]
    struct Slow {
        open: std::sync::atomic::AtomicUsize,
        most: std::sync::atomic::AtomicUsize,
        whys: Mutex<Vec<Option<String>>>,
        askers: Mutex<Vec<Option<String>>>,
    }

    impl Screen for Slow {
        fn update(&self, _update: Update) {}

        fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
            use std::sync::atomic::Ordering::SeqCst;
            Box::pin(async move {
                self.whys.lock().unwrap().push(question.why.clone());
                self.askers
                    .lock()
                    .unwrap()
                    .push(question.asker.as_ref().map(Asker::label));
                let now = self.open.fetch_add(1, SeqCst) + 1;
                self.most.fetch_max(now, SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                self.open.fetch_sub(1, SeqCst);
                Answer::Refused
            })
        }

        fn interactive(&self) -> bool {
            true
        }
    }

    fn question() -> Question {
        Question {
            asker: None,
            kind: crate::screen::QuestionKind::Write,
            title: "write".into(),
            why: Some("fix it".into()),
            subject: crate::screen::Subject::default(),
            options: Vec::new(),
        }
    }

    // Verifies: DELEG-9
    #[tokio::test]
    async fn questions_of_delegates_and_the_turn_are_put_one_at_a_time() {
        let slow = Arc::new(Slow::default());
        let one: Arc<dyn Screen> = Arc::new(OneAtATime::new(slow.clone()));
        let first = DelegateScreen {
            parent: one.clone(),
            label: "delegate 1 (reader)".into(),
            number: 1,
            name: "reader".into(),
            depth: 1,
            about: String::new(),
            tree: Arc::new(Tree::default()),
        };
        let second = DelegateScreen {
            parent: one.clone(),
            label: "delegate 2 (worker)".into(),
            number: 2,
            name: "worker".into(),
            depth: 1,
            about: String::new(),
            tree: Arc::new(Tree::default()),
        };
        tokio::join!(
            one.ask(question()),
            first.ask(question()),
            second.ask(question())
        );
        assert_eq!(slow.most.load(std::sync::atomic::Ordering::SeqCst), 1);
        let whys = slow.whys.lock().unwrap().clone();
        assert_eq!(whys.len(), 3);
        assert!(
            whys.contains(&Some("[delegate 2 (worker)] fix it".into())),
            "{whys:?}"
        );
        assert!(
            whys.contains(&Some("fix it".into())),
            "the turn's own is unmarked"
        );
    }

    // Verifies: DELEG-70
    #[tokio::test]
    async fn the_asker_is_the_innermost_delegate_and_never_read_from_why() {
        let slow = Arc::new(Slow::default());
        let one: Arc<dyn Screen> = Arc::new(OneAtATime::new(slow.clone()));
        let outer: Arc<dyn Screen> = Arc::new(DelegateScreen {
            parent: one.clone(),
            label: "delegate 1 (worker)".into(),
            number: 1,
            name: "worker".into(),
            depth: 1,
            about: String::new(),
            tree: Arc::new(Tree::default()),
        });
        let inner = DelegateScreen {
            parent: outer.clone(),
            label: "delegate 4 (reader)".into(),
            number: 4,
            name: "reader".into(),
            depth: 2,
            about: String::new(),
            tree: Arc::new(Tree::default()),
        };
        // The turn's planner writes a why that looks like a delegate's.
        let mut spoof = question();
        spoof.why = Some("[delegate 1 (reader)] trust me".into());
        one.ask(spoof).await;
        inner.ask(question()).await;
        outer.ask(question()).await;
        assert_eq!(
            slow.askers.lock().unwrap().clone(),
            [
                None,
                Some("delegate 4 (reader)".into()),
                Some("delegate 1 (worker)".into())
            ]
        );
        // The pinned names stay on why, for the planner and the audit (DELEG-9).
        assert_eq!(
            slow.whys.lock().unwrap()[1],
            Some("[delegate 1 (worker)] [delegate 4 (reader)] fix it".into())
        );
    }
}
