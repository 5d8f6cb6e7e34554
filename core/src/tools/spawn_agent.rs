//! `spawn_agent`: hands a sub-task to a delegate, a second planner with a context of its own and
//! a narrower set of tools, and gets back one report later.
//!
//! The call is refused whole where the run's context met content nobody vouched for (CTX-1),
//! where `each` names none or more than eight, an `mcp_servers` name the run holds no grant for,
//! where nobody is watching to approve a delegate, or a kind that is neither one of the three
//! nor a definition of this turn. A worker keeps the MCP servers the run may call, narrowed by
//! `mcp_servers`; a reader and a checker keep none. Otherwise each
//! delegate is put to the person as a `delegate` question of its own and starts on their yes,
//! numbered in the turn's tree, until the turn's ceiling; the call answers once every one was
//! asked, and the reports arrive on their own ([`crate::delegate::hand_over`]).

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::args::{self, Arg, ArgValue, NotStrings, tool_args};
use super::{Call, ToolOutput, ToolSpec};
use crate::delegate::DelegateScreen;
use crate::delegation::{CEILING, Chosen, Kind, MAX_DEPTH, MAX_EACH, Queued, Running, Seat};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::context::Capability;
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::PlannerText;
use crate::model::ModelClient;
use crate::screen::{Question, QuestionKind, Subject};
use crate::screen::{Screen, Update};
use crate::session::Session;

tool_args! {
    /// The arguments of `spawn_agent`, as the planner is shown them and as a call is read.
    pub struct Arguments {
        kind: required String as Routing = json!({"type": "string", "description": "reader, checker, worker, or a definition's name"});
        task: required String as Content = json!({"type": "string", "description": "the whole of what the delegate is told"});
        each: optional Entries as Content = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_EACH, "description": "one delegate per entry, each told task followed by the entry"});
        mcp_servers: optional ServerNames as Routing = json!({"type": "array", "items": {"type": "string"}, "description": "the MCP servers a worker keeps, out of those this run may call; [] keeps none"});
    }
}

/// `each`: one entry per delegate, each a string.
pub struct Entries(Vec<String>);

impl ArgValue for Entries {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        match arg.given().map(args::strings) {
            None => Ok(None),
            Some(Ok(entries)) => Ok(Some(Entries(entries))),
            Some(Err(NotStrings::Entry)) => Err("every entry of `each` must be a string".into()),
            Some(Err(NotStrings::NotAList)) => Err("`each` must be a list of strings".into()),
        }
    }
}

/// `mcp_servers`: the names of the servers a worker keeps.
pub struct ServerNames(Vec<String>);

impl ArgValue for ServerNames {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        arg.given()
            .map(|v| {
                args::strings(v)
                    .map(ServerNames)
                    .map_err(|_| "`mcp_servers` must be a list of server names".to_string())
            })
            .transpose()
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "spawn_agent";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Hand a sub-task to a delegate: a second planner with its own context and fewer tools, which \
answers with one short report. Use it for work that would otherwise fill this conversation with reading. `kind` is \
reader (reads), checker (reads, runs programs, asks a language server) or worker (also writes files and calls the \
MCP servers you may call, or only those `mcp_servers` names), or the name of a definition you were listed. The \
delegate sees nothing of this conversation: `task` is the whole of what it is told. `each` starts one delegate per \
entry (at most 8), each told `task` followed by its entry. The call returns once the person approved them; each \
report arrives later, numbered in start order.",
        args: Arguments::specs(),
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let session = call.session;
    // A task composed by a context that met untrusted bytes is a function of them (CTX-1).
    let permitted = session.state().context.permits(Capability::Delegate);
    if let Err(cap) = permitted {
        call.record(
            Gate::Context,
            Decision::Refused,
            format!("spawn_agent: a tainted context may not {}", cap.as_str()),
        );
        return ToolOutput::refused(
            "this conversation has met content nobody vouched for, so it cannot start a delegate; nothing was started",
        );
    }
    let Arguments {
        kind,
        task,
        each,
        mcp_servers,
    } = match Arguments::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    if task.trim().is_empty() {
        return ToolOutput::error("spawn_agent needs a `task`");
    }
    let each = each.map(|Entries(entries)| entries);
    if let Some(entries) = &each
        && (entries.is_empty() || entries.len() > MAX_EACH)
    {
        call.record(
            Gate::Routing,
            Decision::Refused,
            format!("spawn_agent.each names {} entries", entries.len()),
        );
        return ToolOutput::refused(format!(
            "`each` must name between 1 and {MAX_EACH} entries; it named {}, so nothing was started",
            entries.len()
        ));
    }
    // `mcp_servers` only narrows: every name must be a server this run may call now (DELEG-21).
    let narrowed: Option<Vec<String>> = match mcp_servers {
        None => None,
        Some(ServerNames(names)) => {
            let held = session.callable_servers();
            if let Some(unheld) = names.iter().find(|n| !held.contains(n)) {
                call.record(
                    Gate::Routing,
                    Decision::Refused,
                    format!(
                        "spawn_agent.mcp_servers names `{}`, a server this run holds no grant for",
                        crate::paths::control_pictures(unheld)
                    ),
                );
                return ToolOutput::refused(format!(
                    "this run holds no grant for the MCP server `{}`, so nothing was started; {}",
                    crate::paths::control_pictures(unheld),
                    if held.is_empty() {
                        "it holds none".to_string()
                    } else {
                        format!("the servers it holds are {}", held.join(", "))
                    }
                ));
            }
            Some(names)
        }
    };
    // Nobody can approve a delegate where nobody is watching: refused before anything is put,
    // as `ask_user` is there (DELEG-22).
    if !session.screen.interactive() {
        call.record(
            Gate::Question,
            Decision::Refused,
            "spawn_agent: nobody is watching to approve a delegate",
        );
        return ToolOutput::refused(
            "nobody is watching this run to approve a delegate, so none was started; do the work with the tools you hold",
        );
    }
    let mut chosen = match choose(session, &kind) {
        Ok(c) => c,
        Err(names) => {
            call.record(
                Gate::Routing,
                Decision::Refused,
                "spawn_agent.kind names neither a kind nor a definition".to_string(),
            );
            return ToolOutput::refused(format!(
                "`{}` is neither a kind nor a definition; the names that would have worked are {names}",
                crate::paths::control_pictures(&kind)
            ));
        }
    };
    let asked_for_servers = narrowed.as_ref().is_some_and(|n| !n.is_empty());
    if let Some(names) = &narrowed {
        chosen.mcp.retain(|s| names.contains(s));
    }
    let entries: Vec<(String, String)> = match &each {
        None => vec![(task.clone(), first_line(&task))],
        Some(entries) => entries
            .iter()
            .map(|e| (format!("{task}\n\n{e}"), first_line(e)))
            .collect(),
    };
    let room = session.state().delegation.tree().map_or(0, |t| t.room());
    let mut started = Vec::new();
    let mut declined = 0;
    let (fits, over) = entries.split_at(entries.len().min(room));
    for (told, about) in fits {
        let question = Question::approve(
            QuestionKind::Delegate,
            format!("Start a {} delegate?", chosen.name),
        )
        .why(&call.why)
        .subject(Subject {
            content: Some(Labelled::new(
                told.clone(),
                session.state().context.label().join(Label::TRUSTED_PUBLIC),
            )),
            ..Subject::default()
        })
        .notice(format!(
            "It may use: {}{}. Each of its writes and runs is put to you on its own.{}",
            chosen.tools.join(", "),
            if chosen.mcp.is_empty() {
                String::new()
            } else {
                format!(
                    "; and the tools of the MCP servers {}, each call asked unless your mcp.allow names it",
                    chosen.mcp.join(", ")
                )
            },
            chosen.refused_model.as_ref().map_or(String::new(), |m| format!(
                " Its definition in the workspace names the model {}, which only a definition in ~/.bravebot/agents may choose: it talks to this session's model instead.",
                crate::cmdline::masked(m)
            ))
        ))
        .allow_once("allow", "Start it")
        .reject("reject", "Do not start it");
        let said = format!("delegate: start a {} delegate", chosen.name);
        let yes = call
            .ask_recorded(question, |a| a.said(said.clone(), said))
            .await
            .approved();
        if !yes {
            declined += 1;
            continue;
        }
        match start(session, &chosen, told.clone(), about.clone(), call.cancel) {
            Some(number) => {
                // It starts working now, beside the turn, while the person is asked about the
                // next (DELEG-9).
                if let Some(launch) = session.launch_delegates.get() {
                    launch(session);
                }
                started.push(number);
            }
            None => declined += 1,
        }
    }
    if !over.is_empty() {
        call.record(
            Gate::Routing,
            Decision::Refused,
            format!(
                "spawn_agent: {} delegates over the turn's ceiling of {CEILING}",
                over.len()
            ),
        );
    }
    let mut text = match started.as_slice() {
        [] => format!("no {} delegate was started", chosen.name),
        [one] => format!(
            "started delegate {one} ({}); its report will arrive on its own, after a later round",
            chosen.name
        ),
        many => format!(
            "started delegates {} ({}); their reports will arrive on their own, in this order",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            chosen.name
        ),
    };
    if declined > 0 {
        text.push_str(&format!(
            "; {declined} the person did not approve, so they did not start"
        ));
    }
    if !over.is_empty() {
        text.push_str(&format!(
            "; {} did not start: the turn reached its ceiling of {CEILING} delegates",
            over.len()
        ));
    }
    if asked_for_servers && !started.is_empty() && chosen.mcp.is_empty() {
        text.push_str(&format!(
            "; a {} delegate holds none of the MCP servers `mcp_servers` named, so it calls none",
            chosen.name
        ));
    }
    let summary = text.clone();
    let status_ok = !started.is_empty();
    let mut output = if status_ok {
        ToolOutput::ok(PlannerText::driver(text), summary)
    } else {
        ToolOutput::refused(text)
    };
    output.summary = output.summary.replace("; ", ", ");
    output
}

/// The first line of an entry, bounded, for naming whose report is whose.
fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}

/// Resolves `kind` against the three kinds and the turn's definitions, narrowed by what the
/// parent holds. `Err` lists the names that would have worked.
pub fn choose(session: &Session, kind: &str) -> Result<Chosen, String> {
    let definitions = session.state().delegation.definitions.clone();
    let servers = session.callable_servers();
    let (name, base, may_delegate, mcp, model, body, rounds_of) = match Kind::parse(kind) {
        Some(k) => (
            k.as_str().to_string(),
            super::held_by(k),
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
                let (tools, may) = super::kept_by(d);
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
        may_delegate && depth < MAX_DEPTH && parent.contains(&super::spawn_agent::NAME);
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

/// What the run asking holds: a delegate's seat, or every tool for the turn.
fn parent_tools(session: &Session) -> Vec<&'static str> {
    match &session.seat {
        Some(seat) => seat.tools.clone(),
        None => super::specs_for(crate::session::Offers::default())
            .iter()
            .map(|s| s.name)
            .collect(),
    }
}

/// Starts one delegate the person approved: numbered in the turn's tree, seated, announced and
/// queued for the turn to run beside it in a session of its own. `None` when the turn's ceiling
/// is reached.
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
        tools.push(super::spawn_agent::NAME);
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
                crate::cmdline::masked(refused)
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
        tool: super::spawn_agent::NAME.to_string(),
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
    // The turn's launcher (`launch_queued` in `turn.rs`, handed down through the session) starts
    // it as a task of its own: this file names no turn.
    session.state().delegation.queued.push(Queued {
        seat,
        name,
        screen,
        model,
        round_limit: chosen.kind.round_limit(),
        told,
        task,
        about,
        cancel: token,
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
    if holds(super::read_file::NAME) {
        can.push("read files");
    } else {
        cannot.push("read files");
    }
    if holds(super::run::NAME) {
        can.push("run programs (each is put to the person unless it is read-only or allowed)");
    } else {
        cannot.push("run programs");
    }
    if holds(super::write_file::NAME) || holds(super::edit_file::NAME) {
        can.push("change files (each change is shown to the person first)");
    } else {
        cannot.push("change files");
    }
    if let Some(servers) = &servers {
        can.push(servers.as_str());
    }
    if holds(super::spawn_agent::NAME) {
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
