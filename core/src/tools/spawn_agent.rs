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

use serde_json::{Value, json};

use super::{ArgRole, ArgSpec, Call, ToolOutput, ToolSpec};
use crate::delegate;
use crate::delegation::{CEILING, MAX_EACH};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::context::Capability;
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::PlannerText;
use crate::screen::{OptionKind, Question, QuestionKind, QuestionOption, Subject};

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
        args: vec![
            ArgSpec {
                name: "kind",
                role: ArgRole::Routing,
                required: true,
                schema: json!({"type": "string", "description": "reader, checker, worker, or a definition's name"}),
            },
            ArgSpec {
                name: "task",
                role: ArgRole::Content,
                required: true,
                schema: json!({"type": "string", "description": "the whole of what the delegate is told"}),
            },
            ArgSpec {
                name: "each",
                role: ArgRole::Content,
                required: false,
                schema: json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_EACH, "description": "one delegate per entry, each told task followed by the entry"}),
            },
            ArgSpec {
                name: "mcp_servers",
                role: ArgRole::Routing,
                required: false,
                schema: json!({"type": "array", "items": {"type": "string"}, "description": "the MCP servers a worker keeps, out of those this run may call; [] keeps none"}),
            },
        ],
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
    let kind = match call.str_arg("kind") {
        Ok(Some(k)) => k.to_string(),
        Ok(None) => return ToolOutput::error("spawn_agent needs `kind`"),
        Err(e) => return ToolOutput::error(e),
    };
    let task = match call.str_arg("task") {
        Ok(Some(t)) if !t.trim().is_empty() => t.to_string(),
        Ok(_) => return ToolOutput::error("spawn_agent needs a `task`"),
        Err(e) => return ToolOutput::error(e),
    };
    let each: Option<Vec<String>> = match call.args.get("each") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let entries: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect();
            match entries {
                Some(e) => Some(e),
                None => return ToolOutput::error("every entry of `each` must be a string"),
            }
        }
        Some(_) => return ToolOutput::error("`each` must be a list of strings"),
    };
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
    let narrowed: Option<Vec<String>> = match call.args.get("mcp_servers") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => {
            let names: Option<Vec<String>> = names
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect();
            let Some(names) = names else {
                return ToolOutput::error("`mcp_servers` must be a list of server names");
            };
            let held = delegate::callable_servers(session);
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
        Some(_) => return ToolOutput::error("`mcp_servers` must be a list of server names"),
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
    let mut chosen = match delegate::choose(session, &kind) {
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
        let question = Question {
            asker: None,
            kind: QuestionKind::Delegate,
            title: format!("Start a {} delegate?", chosen.name),
            why: Some(call.why.clone()).filter(|w| !w.is_empty()),
            subject: Subject {
                content: Some(Labelled::new(
                    told.clone(),
                    session.state().context.label().join(Label::TRUSTED_PUBLIC),
                )),
                notice: Some(format!(
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
                        crate::run::masked(m)
                    ))
                )),
                ..Subject::default()
            },
            options: vec![
                QuestionOption {
                    id: "allow".into(),
                    name: "Start it".into(),
                    kind: OptionKind::AllowOnce,
                },
                QuestionOption {
                    id: "reject".into(),
                    name: "Do not start it".into(),
                    kind: OptionKind::RejectOnce,
                },
            ],
        };
        let answer = call.ask(question.clone()).await;
        let yes = answer.approves(&question);
        call.record(
            Gate::Question,
            if yes {
                Decision::Allowed
            } else {
                Decision::Refused
            },
            format!("delegate: start a {} delegate", chosen.name),
        );
        if !yes {
            declined += 1;
            continue;
        }
        match delegate::start(session, &chosen, told.clone(), about.clone(), call.cancel) {
            Some(number) => started.push(number),
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
