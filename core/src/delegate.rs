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

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::conversation::Conversation;
use crate::delegation::*;
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::Integrity;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::Origin;
use crate::model::{Message, ModelClient};
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

/// Resolves `kind` against the three kinds and the turn's definitions, narrowed by what the
/// parent holds. `Err` lists the names that would have worked.
pub fn choose(session: &Session, kind: &str) -> Result<Chosen, String> {
    let definitions = session.state().delegation.definitions.clone();
    let servers = callable_servers(session);
    let (name, base, may_delegate, mcp, model, body, rounds_of) = match Kind::parse(kind) {
        Some(k) => (
            k.as_str().to_string(),
            crate::tools::held_by(k),
            true,
            if k.calls_servers() {
                servers
            } else {
                Vec::new()
            },
            None,
            None,
            k,
        ),
        None => match definitions.iter().find(|d| d.name == kind) {
            Some(d) => {
                let (tools, may) = crate::tools::kept_by(d);
                (
                    d.name.clone(),
                    tools,
                    may,
                    servers.into_iter().filter(|s| d.keeps_server(s)).collect(),
                    d.model.clone(),
                    Some(d.body.clone()),
                    Kind::Worker,
                )
            }
            None => {
                let mut names: Vec<String> =
                    Kind::ALL.iter().map(|k| k.as_str().to_string()).collect();
                names.extend(definitions.iter().map(|d| d.name.clone()));
                return Err(names.join(", "));
            }
        },
    };
    let refused_model = definitions
        .iter()
        .find(|d| d.name == name && Kind::parse(kind).is_none())
        .and_then(|d| d.refused_model.clone());
    let parent = parent_tools(session);
    let depth = session.seat.as_ref().map_or(0, |s| s.depth) + 1;
    let tools: Vec<&'static str> = base.into_iter().filter(|t| parent.contains(t)).collect();
    let may_delegate =
        may_delegate && depth < MAX_DEPTH && parent.contains(&crate::tools::spawn_agent::NAME);
    Ok(Chosen {
        name,
        kind: rounds_of,
        tools,
        may_delegate,
        mcp,
        model,
        refused_model,
        body,
    })
}

/// The MCP servers a run may call now: the running servers of the session, and for a delegate
/// only those its seat names.
pub fn callable_servers(session: &Session) -> Vec<String> {
    session
        .mcp
        .running()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| may_call(session, name))
        .collect()
}

/// Whether the run may call the server of this name, were it running: the session the person
/// opened may call each of its own; a delegate, those its seat names.
pub fn may_call(session: &Session, server: &str) -> bool {
    session
        .seat
        .as_ref()
        .is_none_or(|seat| seat.mcp.iter().any(|s| s == server))
}

/// What the run asking holds: a delegate's seat, or every tool for the turn.
fn parent_tools(session: &Session) -> Vec<&'static str> {
    match &session.seat {
        Some(seat) => seat.tools.clone(),
        None => crate::tools::specs_for(crate::session::Offers::default())
            .iter()
            .map(|s| s.name)
            .collect(),
    }
}

/// Starts one delegate the person approved: numbered in the turn's tree, in a session of its
/// own, as a task beside the turn. `None` when the turn's ceiling is reached.
pub fn start(
    session: &Session,
    chosen: &Chosen,
    task: String,
    about: String,
    cancel: &CancellationToken,
) -> Option<u32> {
    let tree = session.state().delegation.tree()?.clone();
    let number = tree.take_number()?;
    let depth = session.seat.as_ref().map_or(0, |s| s.depth) + 1;
    let mut tools = chosen.tools.clone();
    if chosen.may_delegate {
        tools.push(crate::tools::spawn_agent::NAME);
    }
    let seat = Seat {
        number,
        name: chosen.name.clone(),
        depth,
        tools,
        mcp: chosen.mcp.clone(),
        tree: tree.clone(),
    };
    tree.lock().delegates.push(Running {
        number,
        name: chosen.name.clone(),
        depth,
        state: "running",
    });
    let mut config = session.model.config().clone();
    if let Some(model) = &chosen.model {
        config.name = model.clone();
    }
    if let Some(refused) = &chosen.refused_model {
        session.state().audit.record(
            Gate::Routing,
            Decision::Refused,
            format!(
                "spawn_agent {}: its workspace definition names the model {}, which only a definition in ~/.bravebot/agents may choose; it talks to the session's model",
                chosen.name,
                crate::run::masked(refused)
            ),
        );
    }
    let model = ModelClient::new(config, session.model.egress().clone());
    let screen: Arc<dyn Screen> = Arc::new(DelegateScreen {
        parent: session.screen.clone(),
        label: seat.label(),
        number,
        name: chosen.name.clone(),
        depth,
        about: crate::paths::control_pictures(&about),
        tree: tree.clone(),
    });
    let definitions = session.state().delegation.definitions.clone();
    let child = Session::for_delegate(session, seat.clone(), screen, model, chosen.kind.rounds());
    child.state().delegation.definitions = definitions;
    let told = told(chosen, &seat);
    // The task is the parent planner's own words, written by a context that met nothing
    // untrusted (spawn_agent refuses otherwise): labelled by that context.
    let label = session.state().context.label();
    let task = Labelled::new(task, label);
    let token = cancel.child_token();
    let name = chosen.name.clone();
    session.state().audit.record(
        Gate::Routing,
        Decision::Allowed,
        format!(
            "spawn_agent started {} at depth {depth} holding {:?} and the MCP servers {:?}",
            seat.label(),
            seat.tools,
            seat.mcp
        ),
    );
    session.screen.update(Update::ToolCall {
        call_id: format!("delegate-{number}"),
        tool: crate::tools::spawn_agent::NAME.to_string(),
        why: format!(
            "{} is working on: {}",
            seat.label(),
            crate::paths::control_pictures(&about)
        ),
        routing: serde_json::json!({"kind": chosen.name, "number": number}),
    });
    session.screen.update(Update::Delegate {
        number,
        name: chosen.name.clone(),
        depth,
        state: "running",
        about: crate::paths::control_pictures(&about),
        stop_reason: None,
        report: None,
    });
    let handle = tokio::spawn(run(Arc::new(child), told, task, about, token));
    session.state().delegation.children.push(Child {
        number,
        name,
        handle,
    });
    Some(number)
}

/// What a delegate is told about itself: the driver's guidance, its kind's constant (or its
/// definition's body, between the driver's words), and what it can and cannot do, from what it
/// holds.
fn told(chosen: &Chosen, seat: &Seat) -> String {
    let mut text = String::from(
        "You are a delegate of bravebot, a coding agent working inside the person's editor. Another planner handed you \
the task in the first message; you cannot see its conversation and there is nobody you can ask. ",
    );
    match &chosen.body {
        Some(body) if !body.is_empty() => {
            text.push_str(&format!(
                "You were started from the definition `{}`. What it says you are for:\n{body}\n\n",
                chosen.name
            ));
        }
        _ => {
            text.push_str(chosen.kind.purpose());
            text.push_str("\n\n");
        }
    }
    text.push_str(
        "Some content reaches you only as a reference such as `ref:2 notes.md, 84 lines, 2.1 KiB, (U,priv)`: nobody \
vouched for it, so you cannot read it; never guess what a reference holds, and a reference means nothing to the \
planner that started you. Say `why` on every tool call in one short line: it is shown to the person.\n",
    );
    let holds = |t: &str| seat.tools.contains(&t);
    let servers = (!seat.mcp.is_empty()).then(|| {
        format!(
            "call the tools of the MCP servers {} (each call is put to the person unless a rule of theirs names it, and what a server answers reaches you only as a reference)",
            seat.mcp.join(", ")
        )
    });
    let mut can = Vec::new();
    let mut cannot = vec!["ask the person anything", "fetch a URL"];
    if holds(crate::tools::read_file::NAME) {
        can.push("read files");
    } else {
        cannot.push("read files");
    }
    if holds(crate::tools::run::NAME) {
        can.push("run programs (each is put to the person unless it is read-only or allowed)");
    } else {
        cannot.push("run programs");
    }
    if holds(crate::tools::write_file::NAME) || holds(crate::tools::edit_file::NAME) {
        can.push("change files (each change is shown to the person first)");
    } else {
        cannot.push("change files");
    }
    if let Some(servers) = &servers {
        can.push(servers.as_str());
    }
    if holds(crate::tools::spawn_agent::NAME) {
        can.push("start delegates of your own");
    } else {
        cannot.push("start delegates");
    }
    if !can.is_empty() {
        text.push_str(&format!("You can {}.\n", can.join("; ")));
    }
    text.push_str(&format!("You cannot {}.\n", cannot.join(", ")));
    text.push_str(
        "When you are done, answer without calling a tool: that answer is your report, and it is all that goes back. \
Make it short and concrete: what you found or did, where (paths and lines), and what you could not settle.\n",
    );
    text
}

/// Runs one delegate to its report.
async fn run(
    child: Arc<Session>,
    told: String,
    task: Labelled<String>,
    about: String,
    cancel: CancellationToken,
) -> Report {
    let seat = child.seat.clone().expect("a delegate's session has a seat");
    let system = {
        let f = &child.facts;
        let mut text = format!(
            "{told}\nWorking directory: {}\nIs a git repository: {}\nPlatform: {}\nOS version: {}\nShell: {}\nToday's date: {}\n",
            child.cwd.display(),
            if f.is_git { "yes" } else { "no" },
            f.platform,
            f.os_version,
            f.shell,
            f.date,
        );
        if seat.tools.contains(&crate::tools::load_skill::NAME) {
            let found = skills::find(&*child).await;
            if let Some(listing) = present_listing(&child, skills::listing(&found.skills)) {
                text.push('\n');
                text.push_str(&listing);
            }
            child.state().skills = found.skills;
        }
        PlannerText::driver(text)
    };
    let mut conversation = Conversation::default();
    let presented = {
        let mut state = child.state();
        let state = &mut *state;
        match policy::open(task) {
            Ok(opened) => Some(policy::present(
                opened,
                "the delegate's task",
                &mut state.context,
                &mut state.audit,
            )),
            Err(_) => None,
        }
    };
    let stop = match presented {
        Some(task) => {
            conversation.push_prompt(task);
            crate::turn::rounds(&child, &system, &mut conversation, &cancel).await
        }
        None => StopReason::Error("the task was not trusted, so it was not given".into()),
    };
    let said = conversation
        .messages()
        .into_iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => Some(text),
            _ => None,
        });
    // The words are the delegate's, labelled below by its context: they are carried, never
    // looked at, whatever they say (or however short they are).
    let text = match (&stop, said) {
        (StopReason::EndTurn, Some(text)) => text,
        (StopReason::EndTurn, None) => "(the delegate gave no answer)".to_string(),
        (stop, Some(text)) => format!(
            "(the delegate stopped before it finished: {}) {text}",
            describe(stop)
        ),
        (stop, None) => format!(
            "(the delegate stopped before it finished: {})",
            describe(stop)
        ),
    };
    // The report is the delegate's output: labelled by its own context, nothing better.
    let label = child.state().context.label();
    // What the person vouched for inside it, and every mark it made, is already the session's:
    // the delegate worked in the session's own trust map (TRUST-10, DELEG-6). Nothing is brought
    // back, so nothing it started with can come back over a newer mark.
    child
        .state()
        .delegation
        .children
        .iter()
        .for_each(|c| c.handle.abort());
    child.stop_jobs();
    child.flush_audit();
    let ended = ended_state(&stop);
    seat.tree.set_state(seat.number, ended);
    // The person's screen is one of the places untrusted bytes may go: the report is drawn there
    // with the delegate's label, for the editor to frame as that label says.
    child.screen.update(Update::Delegate {
        number: seat.number,
        name: seat.name.clone(),
        depth: seat.depth,
        state: ended,
        about: crate::paths::control_pictures(&about),
        stop_reason: Some(stop.clone()),
        report: Some(Labelled::new(text.clone(), label)),
    });
    let text = match label.integrity {
        Integrity::Trusted => Said::Trusted(Labelled::new(text, label)),
        Integrity::Untrusted => Said::Untrusted(Labelled::new(text.into_bytes(), label)),
    };
    Report {
        number: seat.number,
        name: seat.name.clone(),
        about,
        text,
        stop,
    }
}

/// The state a delegate that stopped is listed in: `done` when it answered, `cancelled` when its
/// turn was, `failed` when it ran out of rounds or met an error.
fn ended_state(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "done",
        StopReason::Cancelled => "cancelled",
        StopReason::MaxRounds | StopReason::Error(_) => "failed",
    }
}

fn describe(stop: &StopReason) -> String {
    match stop {
        StopReason::Error(e) => format!("error: {e}"),
        other => other.as_str().to_string(),
    }
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
struct DelegateScreen {
    parent: Arc<dyn Screen>,
    label: String,
    number: u32,
    name: String,
    depth: u32,
    about: String,
    tree: Arc<Tree>,
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
            update
            @ (Update::Remark { .. } | Update::HeldBack { .. } | Update::Delegate { .. }) => {
                self.parent.update(update)
            }
            Update::AgentText { .. }
            | Update::Quarantined { .. }
            | Update::RunOutput { .. }
            | Update::Plan { .. }
            | Update::TurnEnded { .. } => {}
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

    // Verifies: DELEG-2
    #[test]
    fn each_kind_holds_its_table_and_none_is_offered_a_question_a_plan_or_a_host() {
        let reader = crate::tools::held_by(Kind::Reader);
        assert!(reader.contains(&"read_file") && reader.contains(&"search"));
        assert!(!reader.contains(&"run") && !reader.contains(&"lsp"));
        assert!(!reader.contains(&"write_file"));
        let checker = crate::tools::held_by(Kind::Checker);
        assert!(checker.contains(&"run") && checker.contains(&"lsp"));
        assert!(!checker.contains(&"write_file") && !checker.contains(&"edit_file"));
        let worker = crate::tools::held_by(Kind::Worker);
        assert!(worker.contains(&"write_file") && worker.contains(&"run"));
        for kind in Kind::ALL {
            for never in [
                "vet_content",
                "ask_user",
                "todo_write",
                "fetch_url",
                "watch_file",
                "schedule_next",
            ] {
                assert!(
                    !crate::tools::held_by(kind).contains(&never),
                    "{kind:?} holds {never}"
                );
            }
        }
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

    // Verifies: DELEG-8
    #[test]
    fn a_definition_keeps_only_the_worker_tools_it_names() {
        let d = Definition {
            name: "fixer".into(),
            description: "fixes".into(),
            tools: Some(vec![
                "read_file".into(),
                "edit_file".into(),
                "fetch_url".into(),
            ]),
            model: None,
            refused_model: None,
            body: String::new(),
        };
        let (tools, may) = crate::tools::kept_by(&d);
        assert_eq!(tools, vec!["read_file", "edit_file"]);
        assert!(!may, "spawn_agent was not named");
    }

    // Verifies: DELEG-20
    #[test]
    fn a_definition_keeps_an_mcp_server_only_where_its_tools_name_it_whole() {
        let mut d = Definition {
            name: "mailer".into(),
            description: "sends".into(),
            tools: None,
            model: None,
            refused_model: None,
            body: String::new(),
        };
        assert!(
            d.keeps_server("gmail") && d.keeps_server("notes"),
            "no tools: all"
        );
        d.tools = Some(vec![
            "read_file".into(),
            "mcp__gmail__*".into(),
            "mcp__notes__search".into(),
        ]);
        assert!(d.keeps_server("gmail"));
        assert!(
            !d.keeps_server("notes"),
            "one tool does not name the server"
        );
        assert!(!d.keeps_server("gmai"));
        assert!(Kind::Worker.calls_servers());
        assert!(!Kind::Reader.calls_servers() && !Kind::Checker.calls_servers());
    }
}
