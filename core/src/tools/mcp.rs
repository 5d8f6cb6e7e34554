//! The MCP servers' tools as the planner sees them: `mcp__<server>__<tool>`, each call put to the
//! person unless a rule of theirs names it, its output a reference.
//!
//! At the start of each turn a declared server nobody was asked about is put to the person (the
//! program, its arguments, its grants and the network), started confined on a yes, and its tools
//! put to them (names, schemas and descriptions, drawn as untrusted): offered with descriptions,
//! by name and schema only, or not at all. A running server's tools are listed again at each
//! turn's start and after each call; a tool that is new or differs from what was approved is
//! withheld and put to the person at the next turn's start.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::kernel::audit::{Decision, Gate};
use crate::kernel::context::Routing;
use crate::kernel::decide::{self, Decided, Why};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, Endorsement, PlannerText};
use crate::kernel::slot::{Origin, Reference};
use crate::mcp::{Approval, Listed, PREFIX, Running, State};
use crate::model::ToolSchema;
use crate::screen::{Question, QuestionKind, Subject, Update};
use crate::session::Session;

use super::questions::{Asked, Said, ask_recorded};
use super::{Call, ToolOutput};

fn full_name(server: &str, tool: &str) -> String {
    format!("{PREFIX}{server}__{tool}")
}

/// A program and its arguments with their boundaries visible.
fn shown_command(program: &std::path::Path, args: &[String]) -> String {
    let mut out = program.display().to_string();
    for a in args {
        out.push(' ');
        out.push_str(&serde_json::to_string(a).unwrap_or_default());
    }
    out
}

/// Puts every declared server nobody was asked about to the person, and every tool withheld since
/// the last approval. Runs at the start of a turn. A delegate puts no MCP question: it calls the
/// servers its session started, as the person approved them at the turn's start, and a tool
/// withheld since is put to the person at the next turn's start (MCP-20).
pub async fn prepare(session: &Session, cancel: &CancellationToken) {
    if session.seat.is_some() {
        return;
    }
    for entry in session.mcp.entries().to_vec() {
        if cancel.is_cancelled() {
            return;
        }
        match session.mcp.state(&entry.name) {
            Some(State::Unasked) => start(session, &entry, cancel).await,
            Some(State::Running(running)) => {
                if running.relist().await.is_err() {
                    running.stop();
                    session
                        .mcp
                        .set(&entry.name, State::Refused("it stopped answering".into()));
                    continue;
                }
                let declined = running
                    .declined
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                let withheld: Vec<Listed> = running
                    .tools()
                    .into_iter()
                    .filter(|(t, a)| a.is_none() && !declined.contains(&t.digest))
                    .map(|(t, _)| t)
                    .collect();
                if !withheld.is_empty() {
                    approve_tools(session, &entry.name, &running, withheld, true, cancel).await;
                }
            }
            _ => {}
        }
    }
}

fn record(session: &Session, gate: Gate, decision: Decision, detail: String) {
    session.state().audit.record(gate, decision, detail);
}

/// A server that will not start: the refusal goes to the audit trail and to its state, which
/// `session/status` shows.
fn refuse_start(session: &Session, name: &str, why: String) {
    record(
        session,
        Gate::Question,
        Decision::Refused,
        format!("mcpStart {name}: {why}"),
    );
    session.mcp.set(name, State::Refused(why));
}

async fn start(session: &Session, entry: &crate::mcp::ServerEntry, cancel: &CancellationToken) {
    let name = entry.name.clone();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let Some(program) =
        crate::mcp::resolve_program(&entry.command, std::env::var_os("PATH").as_deref())
    else {
        let why = format!("{} is not an executable program here", entry.command);
        refuse_start(session, &name, why);
        return;
    };
    let policy = match crate::mcp::server_policy(entry, &program, home.as_deref()) {
        Ok(p) => p,
        Err(why) => {
            refuse_start(session, &name, why);
            return;
        }
    };
    // A write grant inside a repository is refused before anything else (SANDBOX-9); looking at
    // its ancestors touches the disk, so it is done off the runtime's workers.
    let looked = {
        let (entry, home) = (entry.clone(), home.clone());
        tokio::task::spawn_blocking(move || {
            crate::mcp::grant_inside_repository(&entry, home.as_deref())
        })
        .await
    };
    match looked {
        Ok(Ok(None)) => {}
        Ok(Ok(Some((grant, top)))) => {
            let why = format!(
                "its write grant {} lies inside the git repository at {}; grant the repository's top (whose .git is held back) or a directory outside it",
                grant.display(),
                top.display()
            );
            refuse_start(session, &name, why);
            return;
        }
        Ok(Err(why)) => {
            refuse_start(session, &name, why);
            return;
        }
        Err(_) => {
            refuse_start(
                session,
                &name,
                "looking for a repository around its grants failed".into(),
            );
            return;
        }
    }
    // Confinement is planned and built before the person is asked, so what they are shown is
    // what the server will get, and a server that cannot be confined is never put to them.
    let prepared = tokio::task::spawn_blocking(move || crate::sandbox::prepare(&policy)).await;
    let confined = match prepared {
        Ok(Ok(c)) => c,
        Ok(Err(refusal)) => {
            let why = refusal.to_string();
            refuse_start(session, &name, why);
            return;
        }
        Err(_) => {
            refuse_start(
                session,
                &name,
                "the confinement could not be prepared".into(),
            );
            return;
        }
    };
    if !session.screen.interactive() {
        record(
            session,
            Gate::Question,
            Decision::Refused,
            format!("mcpStart {name}: nobody is watching to approve it"),
        );
        session.mcp.set(
            &name,
            State::Declined("nobody was watching to approve it".into()),
        );
        return;
    }
    let mut plan = vec![
        format!(
            "reads: {}",
            if entry.read.is_empty() {
                "nothing of yours".to_string()
            } else {
                entry.read.join(", ")
            }
        ),
        format!(
            "writes: {}",
            if entry.write.is_empty() {
                "nothing".to_string()
            } else {
                entry.write.join(", ")
            }
        ),
        "and, for any program: reads the system's programs, libraries and /etc; writes /dev/null"
            .to_string(),
    ];
    plan.extend(confined.plan.notes());
    let question = Question::approve(
        QuestionKind::McpStart,
        format!("Start the MCP server {name}?"),
    )
    .subject(Subject {
        command: Some(shown_command(&program, &entry.args)),
        plan: plan.clone(),
        ..Subject::default()
    })
    .notice(format!(
        "{}. It runs confined ({}): it can read and write only what is listed, and {}. \
It gets your environment less bravebot's credentials. Its tools are put to you next, and every call is asked.",
        plan.join("; "),
        crate::sandbox::level().describe(),
        if entry.network {
            "it may reach the network"
        } else {
            "it cannot reach the network"
        }
    ))
    .allow_once("start", "Start it for this session")
    .reject("not-now", "Not in this session");
    let asked = ask_recorded(session, cancel, question, |a| {
        a.said(
            format!("mcpStart {name}: approved"),
            format!("mcpStart {name}: refused"),
        )
    })
    .await;
    if !asked.approved() {
        session
            .mcp
            .set(&name, State::Declined("the person said no".into()));
        return;
    }
    match crate::mcp::start(&program, entry, &session.cwd, &session.withheld, &confined).await {
        Ok(running) => {
            let running = std::sync::Arc::new(running);
            session.mcp.set(&name, State::Running(running.clone()));
            let tools: Vec<Listed> = running.tools().into_iter().map(|(t, _)| t).collect();
            approve_tools(session, &name, &running, tools, false, cancel).await;
        }
        Err(why) => {
            refuse_start(session, &name, why);
        }
    }
}

/// Puts a server's tools to the person, after a check has read everything the question shows
/// (MCP-12): for each tool its full name, the schema the planner would read (the driver's
/// rebuild), the tokens standing for the server's own names, and its whole description, all drawn
/// as content nobody vouched for, with the check's verdict beside them. Each approving option says
/// in its own words what the agent will read.
async fn approve_tools(
    session: &Session,
    server: &str,
    running: &std::sync::Arc<Running>,
    tools: Vec<Listed>,
    again: bool,
    cancel: &CancellationToken,
) {
    let unusable = running
        .listed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .unusable;
    let mut parts = Vec::new();
    for t in &tools {
        parts.push(Labelled::new(
            format!("{}\n", full_name(server, &t.name)),
            Label::TRUSTED_PUBLIC,
        ));
        parts.push(t.shown.clone());
    }
    let shown = policy::concat(parts);
    let described: usize = tools
        .iter()
        .map(|t| policy::measure(&t.description).1)
        .sum();
    let renamed: usize = tools.iter().map(|t| t.rebuilt.renamed.len()).sum();
    let cut = tools.iter().filter(|t| t.rebuilt.cut.any()).count();
    // Nobody watching: the question would be refused, so nothing is sent to a check either.
    if !session.screen.interactive() {
        record(
            session,
            Gate::Question,
            Decision::Refused,
            format!("mcpTools {server}: nobody is watching to approve them"),
        );
        refuse_tools(session, server, running, &tools, again);
        return;
    }
    // The check reads what the question shows, so what either answer lets the planner read has
    // been checked before the person is asked (seed 000).
    let checked = policy::text_to_bytes(&shown);
    // Fixed before the request: a listing is what a server said, untrusted and private like
    // every tool's description in it (CHECK-30).
    let spec = crate::check::CheckSpec::new(
        crate::check::Subject::ToolListing {
            server: server.to_string(),
        },
        Label::UNTRUSTED_PRIVATE,
        format!("the MCP server {server}'s tool listing"),
        "names, parameter schemas and descriptions of a program's tools",
    );
    let outcome = match crate::check::run(session, &spec, &checked, cancel).await {
        Ok(outcome) => outcome,
        Err(_) => {
            // The refusal is on the trail; the tools are not offered.
            refuse_tools(session, server, running, &tools, again);
            return;
        }
    };
    let question = Question::approve(
        QuestionKind::McpTools,
        if again {
            format!(
                "The MCP server {server} now lists {} tool(s) that differ from what you approved or are new: offer them?",
                tools.len()
            )
        } else {
            format!(
                "Offer the {} tool(s) of the MCP server {server} to the agent?",
                tools.len()
            )
        },
    )
    .subject(Subject {
        content: Some(shown),
        origin: Some(format!("the MCP server {server}'s own words")),
        ..Subject::default()
    })
    .checked(Some(outcome.verdict), outcome.reasons)
    .notice(format!(
        "A check read everything shown here before you were asked; its verdict is beside it. \
With names and schemas only, the agent reads for each tool its full name, a sentence bravebot wrote, and the \
schema after `the agent reads its schema:`, exactly as shown: bravebot rebuilt it from structure and JSON types, \
keeping property names of at most 32 ASCII letters, digits, `_` and `-` and giving every other name a token \
({renamed} here) that is turned back into the server's name when a tool is called; no description, title, \
default, example, pattern, format, enum or const value, bound or reference of the server's reaches it.{} \
With descriptions, the agent also reads every description shown, {described} bytes in all, shown whole: they \
are the server's words and can carry instructions, so from then on every effect is put to you. A tool whose \
listing changes later is withheld until you approve it again.{}",
        if cut > 0 {
            format!(" The schemas of {cut} tool(s) were cut where shown.")
        } else {
            String::new()
        },
        if unusable > 0 {
            format!(
                " {unusable} tool(s) have names that are not short ASCII identifiers and are not offered."
            )
        } else {
            String::new()
        }
    ))
    .allow_once(
        "with-descriptions",
        "Offer them with descriptions: the agent will read the names, schemas and descriptions shown",
    )
    .allow_once(
        "schemas-only",
        "Offer names and schemas only: the agent will read the names and schemas shown, no description",
    )
    .reject(
        "none",
        if again {
            "Keep them withheld"
        } else {
            "Offer none, and stop the server"
        },
    );
    let asked = ask_recorded(session, cancel, question, |a| match approval_of(a) {
        Some(approval) => Said::Allowed(format!(
            "mcpTools {server}: {} tool(s) offered, {approval:?}",
            tools.len()
        )),
        None => Said::Refused(format!("mcpTools {server}: none offered")),
    })
    .await;
    match approval_of(&asked) {
        Some(approval) => running.pin(&tools, approval),
        None => refuse_tools(session, server, running, &tools, again),
    }
}

/// What an answer to the tools question approved: descriptions, or names and schemas only.
fn approval_of(asked: &Asked) -> Option<Approval> {
    match asked.id() {
        Some("with-descriptions") if asked.approved() => Some(Approval::WithDescription),
        Some("schemas-only") if asked.approved() => Some(Approval::NameAndSchema),
        _ => None,
    }
}

/// None of these tools is offered: a listing put again stays withheld for the session, and a
/// server's first listing stops the server.
fn refuse_tools(
    session: &Session,
    server: &str,
    running: &std::sync::Arc<Running>,
    tools: &[Listed],
    again: bool,
) {
    if again {
        running
            .declined
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(tools.iter().map(|t| t.digest.clone()));
    } else {
        running.stop();
        session.mcp.set(
            server,
            State::Declined("the person offered none of its tools".into()),
        );
    }
}

/// The running servers this run may call: every one of the session's, or for a delegate the ones
/// its seat names (DELEG-20).
fn callable(session: &Session) -> Vec<(String, std::sync::Arc<Running>)> {
    session
        .mcp
        .running()
        .into_iter()
        .filter(|(server, _)| session.may_call(server))
        .collect()
}

/// The tool of this full name that a server offers now, among `servers`.
fn find_offered(
    servers: Vec<(String, std::sync::Arc<Running>)>,
    name: &str,
) -> Option<(String, std::sync::Arc<Running>, Listed)> {
    servers.into_iter().find_map(|(server, running)| {
        running
            .tools()
            .into_iter()
            .find(|(t, a)| a.is_some() && full_name(&server, &t.name) == name)
            .map(|(t, _)| (server, running.clone(), t))
    })
}

/// The MCP tools this round is offered: every tool whose listing matches what the person approved,
/// of the servers this run may call. A description the person approved is released to the planner
/// (the context has then met content nobody vouched for); otherwise the tool is its name and
/// structural schema.
pub fn schemas(session: &Session) -> Vec<ToolSchema> {
    let mut out = Vec::new();
    for (server, running) in callable(session) {
        for (tool, approval) in running.tools() {
            let Some(approval) = approval else { continue };
            let name = full_name(&server, &tool.name);
            let description = match approval {
                Approval::NameAndSchema => PlannerText::driver(format!(
                    "A tool of the MCP server `{server}`; its description was not approved, so it is not shown. \
Its schema was rebuilt by bravebot from structure and types; a property named like p.1 stands for a name of the server's.{}",
                    cut_sentence(&tool)
                )),
                Approval::WithDescription => {
                    let mut state = session.state();
                    let state = &mut *state;
                    let released = policy::release(
                        &tool.description,
                        Endorsement::Person,
                        &format!("the description of {name}"),
                        &mut state.context,
                        &mut state.audit,
                    );
                    PlannerText::driver(format!(
                        "A tool of the MCP server `{server}`.{} Its description, in the server's words: {}",
                        cut_sentence(&tool),
                        released.as_str()
                    ))
                }
            };
            let mut parameters = match tool.rebuilt.schema {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            parameters.insert("type".into(), json!("object"));
            let properties = parameters.entry("properties").or_insert_with(|| json!({}));
            // The server's own `why`, if it had one, was renamed when its schema was rebuilt.
            if let Value::Object(p) = properties {
                p.insert(
                    crate::mcp::schema::RESERVED.into(),
                    json!({"type": "string"}),
                );
            }
            out.push(ToolSchema {
                name,
                description: description.as_str().to_string(),
                parameters: Value::Object(parameters),
            });
        }
    }
    out
}

/// Where the walk over a tool's schema stopped, in the driver's words, or nothing.
fn cut_sentence(tool: &Listed) -> String {
    tool.rebuilt
        .cut
        .describe()
        .map(|c| format!(" Note: {c}."))
        .unwrap_or_default()
}

/// Whether a person-written rule names this tool: by its full name, or `mcp__<server>__*`.
fn named_by(rules: &[String], server: &str, full: &str) -> bool {
    let whole = format!("{PREFIX}{server}__*");
    rules.iter().any(|r| r == full || *r == whole)
}

/// Runs a call to `mcp__<server>__<tool>`.
pub async fn dispatch(
    session: &Session,
    name: &str,
    arguments: &str,
    cancel: &CancellationToken,
) -> (ToolOutput, Value, String) {
    let offered = find_offered(callable(session), name);
    let Some((server, running, tool)) = offered else {
        // A tool of a server the session offers but this delegate does not hold is refused, as
        // a native tool its seat does not hold is (DELEG-3, DELEG-20).
        if let Some(seat) = &session.seat
            && let Some((server, _, _)) = find_offered(session.mcp.running(), name)
        {
            session.state().audit.record(
                Gate::Routing,
                Decision::Refused,
                format!(
                    "{name}: the MCP server {server} is not held by {}",
                    seat.label()
                ),
            );
            let held = session.callable_servers();
            return (
                ToolOutput::refused(format!(
                    "{name} is not offered to this delegate, so it was not called; the MCP servers it holds are {}",
                    if held.is_empty() {
                        "none".to_string()
                    } else {
                        held.join(", ")
                    }
                )),
                Value::Null,
                String::new(),
            );
        }
        return (
            ToolOutput::error(format!(
                "unknown tool `{name}`: no MCP server of this session offers it now"
            )),
            Value::Null,
            String::new(),
        );
    };
    let mut args = match serde_json::from_str::<Value>(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    }) {
        Ok(Value::Object(map)) => map,
        _ => {
            return (
                ToolOutput::error(format!("arguments of {name} must be a JSON object")),
                Value::Null,
                String::new(),
            );
        }
    };
    let why = match args.remove("why") {
        Some(Value::String(w)) => w,
        _ => String::new(),
    };
    let call = Call {
        session,
        tool: "mcp",
        args: args.clone(),
        why: why.clone(),
        cancel,
    };
    let shown_args = Value::Object(args.clone());
    let output = gate_and_call(&call, &server, &running, &tool, name, args).await;
    (output, shown_args, why)
}

async fn gate_and_call(
    call: &Call<'_>,
    server: &str,
    running: &Running,
    tool: &Listed,
    name: &str,
    args: Map<String, Value>,
) -> ToolOutput {
    let session = call.session;
    let (routing, routing_label) = {
        let state = session.state();
        (state.context.routing(), state.context.label())
    };
    // An allow rule answers only for arguments written by a context whose routing is its own
    // (CTX-2) and that holds nothing private: what a call carries reaches a program that may keep
    // it or send it on, as a URL reaches its host (GATE-4).
    let context = decide::Context {
        person_only: routing != Routing::Own,
        trusted_public: routing_label.is_public() && routing_label.is_trusted(),
    };
    let facts = decide::Ruled {
        denied: named_by(&session.settings.mcp_deny, server, name),
        allowed: named_by(&session.settings.mcp_allow, server, name),
        interactive: session.screen.interactive(),
    };
    let private = facts.rule_held_back(context);
    let decided = decide::ruled(context, facts);
    if decided == Decided::Refuse(Why::DenyRule) {
        call.record(
            Gate::Question,
            Decision::Refused,
            format!("mcpCall {name}: mcp.deny names it"),
        );
        return ToolOutput::refused(format!("{name} is denied by the person's mcp.deny rule"));
    }
    if let Decided::Unasked(_) = decided {
        call.record(
            Gate::Question,
            Decision::Allowed,
            format!("mcpCall {name} [routing] {routing_label}: mcp.allow names it"),
        );
    } else {
        if private {
            call.record(
                    Gate::Question,
                    Decision::Observed,
                    format!(
                        "mcpCall {name} [routing] {routing_label}: an mcp.allow rule names it, but the arguments were written by a context holding private data, so the person is asked"
                    ),
                );
        }
        if matches!(decided, Decided::Refuse(_)) {
            call.record(
                Gate::Question,
                Decision::Refused,
                format!("mcpCall {name}: nobody is watching"),
            );
            return ToolOutput::refused(format!(
                "nobody is watching this session to approve a call to {name}, so it was not made"
            ));
        }
        let mut plan: Vec<String> = serde_json::to_string_pretty(&Value::Object(args.clone()))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        if plan.is_empty() {
            plan.push("{}".into());
        }
        let question = Question::approve(
            QuestionKind::McpCall,
            format!("Call the tool {} of the MCP server {server}?", tool.name),
        )
        .why(&call.why)
        .subject(Subject {
            command: Some(name.to_string()),
            plan,
            ..Subject::default()
        })
        .notice(format!(
            "The server runs confined; what it answers is held back from the agent as a reference.{}{}",
            if routing == Routing::PersonOnly {
                " This conversation has met content nobody vouched for, so no rule answers for you."
            } else if private {
                " Your mcp.allow rule names this tool, but the agent wrote these arguments after reading your files: \
check that they carry nothing of them before you allow it, since the server gets them."
            } else {
                ""
            },
            if tool.rebuilt.renamed.is_empty() {
                String::new()
            } else {
                format!(
                    " Names like p.1 stand for parameters of the server's whose own names are not short identifiers; \
the server gets its own {} name(s) back.",
                    tool.rebuilt.renamed.len()
                )
            }
        ))
        .allow_once("call", "Call it")
        .reject("no", "Don't call it");
        let asked = call
            .ask_recorded(question, |a| {
                a.said(
                    format!("mcpCall {name}: approved"),
                    format!("mcpCall {name}: refused"),
                )
            })
            .await;
        if !asked.approved() {
            return ToolOutput::refused(format!("the person did not approve calling {name}"));
        }
    }
    let result = tokio::select! {
        r = running.call(&tool.name, tool.rebuilt.to_server(args)) => r,
        () = call.cancel.cancelled() => Err(crate::mcp::CallError::Cancelled),
    };
    // A server may change its tools on any call: listed again now, so a changed one is withheld
    // from the next round.
    let _ = running.relist().await;
    match result {
        Err(e) => {
            call.record(
                Gate::Present,
                Decision::Observed,
                format!("mcpCall {name}: {}", e.describe()),
            );
            ToolOutput::error(format!("{name}: {}", e.describe()))
        }
        Ok(returned) => {
            let reference = call.quarantine(
                returned.text,
                Origin::Mcp {
                    tool: name.to_string(),
                },
                name,
                format!("the answer of {name}"),
            );
            // Each picture is a slot of its own, kept as the server sent it (MCP-30).
            let pictures: Vec<Reference> = returned
                .pictures
                .into_iter()
                .map(|picture| quarantine_picture(call, name, picture))
                .collect();
            let mut said = format!(
                "{name} answered. Nobody vouched for what an MCP server says, so it is held back as {reference}."
            );
            if !pictures.is_empty() {
                let listed: Vec<String> = pictures.iter().map(ToString::to_string).collect();
                said.push_str(&format!(
                    " It also sent {} picture(s), each held back the same way: {}. Hand one to spawn_processor to have it looked at.",
                    pictures.len(),
                    listed.join("; ")
                ));
            }
            if returned.sounds > 0 {
                said.push_str(&format!(
                    " It also sent {} sound(s), which are not kept.",
                    returned.sounds
                ));
            }
            let mut summary = format!("{name} answered: {}", reference.id);
            for picture in &pictures {
                summary.push_str(&format!(", {} (a picture)", picture.id));
            }
            ToolOutput::ok(PlannerText::driver(said), summary)
        }
    }
}

/// Puts one picture a server sent into a slot of its own, records it as withheld, and tells the
/// person's screen (which may ask to see it: `bravebot/session/show`). The planner gets the
/// reference only.
fn quarantine_picture(call: &Call<'_>, name: &str, picture: crate::mcp::Picture) -> Reference {
    let label = picture.base64.label().join(picture.media_type.label());
    let reference = {
        let mut state = call.session.state();
        let state = &mut *state;
        let reference =
            state
                .quarantine
                .put_picture(picture.base64, picture.media_type, name.to_string());
        policy::withhold(
            &format!("a picture {name} answered"),
            label,
            &reference.id.to_string(),
            &mut state.audit,
        );
        reference
    };
    call.session.screen.update(Update::Quarantined {
        reference: reference.clone(),
        origin: format!("a picture in the answer of {name}"),
    });
    reference
}
