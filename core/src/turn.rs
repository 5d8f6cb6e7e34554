//! The turn loop: ask the planner, run the tools it calls, hand back what the gates let through,
//! until it answers without calling a tool, the round limit is reached, or the turn is cancelled.
//!
//! Every message the planner is sent is built from [`PlannerText`]: the person's prompt, the
//! planner's own earlier output, and tool results that passed the present gate or are references
//! the driver described. Nothing else has a way in.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::conversation::{Conversation, Fit, estimate_tokens};
use crate::delegation::{Child, Report, Said};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::model::{Message, ModelRequest, Part, Role, StreamEvent};
use crate::screen::{StopReason, Update};
use crate::session::Session;
use crate::tools::{self, ToolOutput};
use crate::workspace_file::{self, Refusal};

const PREAMBLE: &str = "You are bravebot, a coding agent working inside the person's editor. You act only through \
the tools you are given. Some content reaches you only as a reference such as `ref:2 notes.md, 84 lines, 2.1 KiB, \
(U,priv)`: nobody vouched for it, so you cannot read it; you may pass the reference to a tool that takes one. Never \
guess what a reference holds. Say `why` on every tool call in one short line: it is shown to the person. For a \
GitHub pull request or issue, where the GitHub CLI is installed, use run with `gh pr view`, `gh pr diff`, \
`gh pr checks`, `gh issue view` or `gh api` rather than fetch_url. Keep answers short and concrete.";

/// Most tokens a planner reply may take.
const MAX_REPLY_TOKENS: u32 = 8192;

/// What starts a turn.
#[derive(Clone, Debug)]
pub enum Start {
    /// The person's prompt, the pictures they put in it, and what they pointed at: files (an
    /// `@`-mention, PROTO-30) and ranges of files (a review comment, REVIEW-3), told to the
    /// planner by location and never vouched for.
    Prompt(String, Vec<PromptPicture>, Pointed),
    /// A watch fired: the driver's fixed sentence naming the path.
    Watch(PlannerText),
    /// A loop's tick: the person's line sent again unchanged. A self-paced loop's tick is offered
    /// `schedule_next`; a tick of a loop with an interval is not.
    Tick { prompt: String, self_paced: bool },
}

/// A picture the person put in a prompt: base64 as their editor sent it, of a media type the
/// front checked. Trusted by provenance like the prompt's words; private when the editor says it
/// came from a file (what came off the machine is private), public when it was pasted.
#[derive(Clone, Debug)]
pub struct PromptPicture {
    pub media_type: String,
    pub base64: String,
    pub from_file: bool,
}

/// What the person pointed at in a prompt: told to the planner by name and place only. The bytes
/// there are read like any other file's, under the file's own label, since pointing vouches for
/// nothing (PROTO-30, REVIEW-3).
#[derive(Clone, Debug, Default)]
pub struct Pointed {
    /// Whole files (`@`-mentions), absolute.
    pub mentions: Vec<std::path::PathBuf>,
    /// Ranges of lines the person selected, each with the file it is in (absolute).
    pub ranges: Vec<PromptRange>,
}

/// A range of lines the person selected in a file (1-based, both ends included), which their words
/// are about: a review comment (REVIEW-3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptRange {
    pub path: std::path::PathBuf,
    pub start_line: u32,
    pub end_line: u32,
}

impl PromptRange {
    /// The driver's words for where this range is, e.g. `lines 3-7 of src/a.rs`: the path with its
    /// control characters shown as pictures, so a file's name cannot break the sentence.
    fn located(&self, cwd: &std::path::Path) -> String {
        let shown = crate::paths::control_pictures(&crate::paths::display_path(cwd, &self.path));
        if self.start_line == self.end_line {
            format!("line {} of {shown}", self.start_line)
        } else {
            format!("lines {}-{} of {shown}", self.start_line, self.end_line)
        }
    }
}

/// Runs one turn. The caller has already applied the prompt's `files` gestures.
pub async fn run(session: &Session, start: Start, cancel: CancellationToken) -> StopReason {
    let mut conversation = {
        let mut state = session.state();
        state.approvals.new_turn();
        let keeps = session.keeps_watches();
        // Offered only where the turn will be asked again (seed 004): a self-paced tick, or a
        // line the person typed where somebody is watching and no loop runs yet.
        let again = match &start {
            Start::Prompt(..) => session.screen.interactive() && state.looping.is_none(),
            Start::Tick { self_paced, .. } => *self_paced,
            Start::Watch(_) => false,
        };
        state.offers = crate::session::Offers {
            watch_file: keeps,
            schedule_next: keeps && again,
        };
        state.conversation.clone()
    };
    let system = system_prompt(session).await;
    let system = listings(session, system).await;
    let (text, pictures, pointed) = match start {
        Start::Watch(sentence) => {
            conversation.push_driver(sentence);
            (None, Vec::new(), Pointed::default())
        }
        Start::Prompt(text, pictures, pointed) => (Some(text), pictures, pointed),
        Start::Tick { prompt: text, .. } => (Some(text), Vec::new(), Pointed::default()),
    };
    if let Some(text) = text {
        let prompt = {
            let mut state = session.state();
            let state = &mut *state;
            // The person's own prompt: trusted by provenance, and public: the person's own words
            // are theirs to send, so they may decide where something goes. Private is what came
            // off the machine: files, listings, program output, language-server answers (GATE-4).
            match policy::open(Labelled::new(text, Label::TRUSTED_PUBLIC)) {
                Ok(opened) => policy::present(
                    opened,
                    "the person's prompt",
                    &mut state.context,
                    &mut state.audit,
                ),
                Err(_) => return StopReason::Error("internal: the prompt did not open".into()),
            }
        };
        conversation.push_prompt(prompt);
    }
    // The files the person pointed at, in the driver's words: their names are the person's own
    // input; their contents are read like any other file's, through the check unless a rule
    // trusts them, since pointing at a file vouches for nothing (PROTO-30).
    if !pointed.mentions.is_empty() {
        let named: Vec<String> = pointed
            .mentions
            .iter()
            .map(|p| crate::paths::control_pictures(&crate::paths::display_path(&session.cwd, p)))
            .collect();
        conversation.push_driver(PlannerText::driver(format!(
            "[bravebot: the person pointed at {}. Pointing at a file does not vouch for it: read it with read_file, which shows it to you once a check or a rule allows.]",
            named.join(", ")
        )));
    }
    // The ranges the person's words are about (a review comment, a selection), by place only, in the driver's
    // words: the lines' text is not pasted as the person's, since it is the file's and carries the
    // file's label; the planner reads it with read_file, through the check unless a rule trusts
    // the file (REVIEW-3).
    if !pointed.ranges.is_empty() {
        let places: Vec<String> = pointed
            .ranges
            .iter()
            .map(|r| {
                format!(
                    "{} (read_file offset {}, limit {})",
                    r.located(&session.cwd),
                    r.start_line,
                    r.end_line.saturating_sub(r.start_line).saturating_add(1)
                )
            })
            .collect();
        conversation.push_driver(PlannerText::driver(format!(
            "[bravebot: the person's words above are about {}, lines they selected in their editor. The lines' text is not in their words: read it with read_file, which shows it to you once a check or a rule allows. Selecting a range does not vouch for it.]",
            places.join("; ")
        )));
    }
    // Each picture follows the prompt as a picture part (ACP-30), its first label from where the
    // person's editor says it came from.
    for picture in pictures {
        let label = if picture.from_file {
            Label::TRUSTED_PRIVATE
        } else {
            Label::TRUSTED_PUBLIC
        };
        let base64 = {
            let mut state = session.state();
            let state = &mut *state;
            match policy::open(Labelled::new(picture.base64, label)) {
                Ok(opened) => policy::present(
                    opened,
                    "a picture in the person's prompt",
                    &mut state.context,
                    &mut state.audit,
                ),
                Err(_) => return StopReason::Error("internal: a picture did not open".into()),
            }
        };
        conversation.push_picture(
            PlannerText::driver(format!(
                "[bravebot: a picture ({}) the person put in their prompt{}]",
                picture.media_type,
                if picture.from_file {
                    ", from a file"
                } else {
                    ""
                }
            )),
            Part::EncodedImage {
                media_type: picture.media_type,
                base64: base64.into_string(),
            },
        );
    }
    let stop = rounds(session, &system, &mut conversation, &cancel).await;
    session.state().conversation = conversation;
    stop
}

/// Asks the planner round after round until it answers without a tool call (and nothing it
/// started is still working), the round limit, a cancel or an error. A delegate's run is this too.
pub(crate) async fn rounds(
    session: &Session,
    system: &PlannerText,
    conversation: &mut Conversation,
    cancel: &CancellationToken,
) -> StopReason {
    let _ = session.launch_delegates.set(launch_queued);
    let offers = session.state().offers;
    // Declared MCP servers nobody was asked about, and tools withheld since, are put first.
    tools::mcp::prepare(session, cancel).await;
    let mut tools: Vec<_> = tools::offered(session)
        .iter()
        .map(|spec| {
            let mut schema = spec.schema();
            // Where watches are kept, the change token's note points at the better answer.
            if offers.watch_file && spec.name == tools::read_file::NAME {
                schema.description.push_str(
                    " To be told when a file changes, watch_file is the better answer in this session.",
                );
            }
            schema
        })
        .collect();
    let native = tools.len();
    tools.extend(tools::mcp::schemas(session));
    let budget = context_budget(session).await;
    // What the request holds besides the conversation: the reply's room, the system prompt and
    // the tool list, each counted by the same estimate (SESS-12).
    let reply_tokens = MAX_REPLY_TOKENS.min(u32::try_from(budget / 4).unwrap_or(u32::MAX));
    let fixed = estimate_tokens(system.as_str())
        + tools
            .iter()
            .map(|t| {
                estimate_tokens(&t.name)
                    + estimate_tokens(&t.description)
                    + estimate_tokens(&t.parameters.to_string())
            })
            .sum::<usize>();
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let Some(room) = budget.checked_sub(reply_tokens as usize + fixed) else {
        return StopReason::Error(format!(
            "the system prompt and the tool list alone take about {fixed} tokens, more than the model's context of {budget} leaves room for beside a reply; raise model.contextTokens if the model takes more"
        ));
    };
    for round in 0..session.settings.max_rounds {
        // Background jobs that ended since the last round are reported without being asked
        // about, once each.
        if round > 0 {
            for account in tools::finished_unreported(session) {
                conversation.push_driver(PlannerText::driver(format!(
                    "[bravebot: a background job ended]\n{}",
                    account.as_str()
                )));
            }
            // Reports of delegates that finished, in start order (DELEG-7).
            crate::delegate::hand_over(session, conversation, cancel, false).await;
        }
        // A server's tools as they stand this round: one that changed since it was approved is
        // withheld from here on.
        if round > 0 {
            tools.truncate(native);
            tools.extend(tools::mcp::schemas(session));
        }
        match conversation.fit(room) {
            Ok(Fit::Fits) => {}
            Ok(Fit::Compacted { messages }) => session.note_compaction(messages),
            Err(too_long) => return StopReason::Error(too_long.to_string()),
        }
        let request = ModelRequest {
            // A delegate's planner says so on every request (DELEG-4).
            role: if session.seat.is_some() {
                Role::Delegate
            } else {
                Role::Planner
            },
            system: system.as_str().to_string(),
            messages: conversation.messages(),
            tools: Some(tools.clone()),
            max_tokens: reply_tokens,
        };
        let screen = session.screen.clone();
        let mut on_event = move |event: StreamEvent| match event {
            StreamEvent::TextDelta(delta) => screen.update(Update::AgentText { delta }),
        };
        let reply = tokio::select! {
            r = session.model.complete(&request, &mut on_event) => r,
            () = cancel.cancelled() => return StopReason::Cancelled,
        };
        // A call that failed reported nothing and is not counted: its endpoint said no usage.
        if let Ok(reply) = &reply {
            session.count_usage(request.role, reply.usage);
        }
        let reply = match reply {
            Ok(r) => r,
            // Sending the same request again cannot help: say what happened and what to change.
            Err(e) if e.context_too_long() => {
                return StopReason::Error(format!(
                    "the model refused the conversation as longer than its context ({e}); the driver held it to about {budget} tokens: set model.contextTokens to what the model takes"
                ));
            }
            Err(e) => return StopReason::Error(e.to_string()),
        };
        let calls = reply.tool_calls.clone();
        let tainted = session.state().context.met_untrusted();
        conversation.push_reply(reply.text, reply.tool_calls, tainted);
        if calls.is_empty() {
            // A turn does not answer while a delegate it started is working: the reports are
            // waited for and handed to it, and it is asked again (DELEG-7).
            if crate::delegate::hand_over(session, conversation, cancel, true).await {
                session.flush_audit();
                continue;
            }
            if cancel.is_cancelled() {
                return StopReason::Cancelled;
            }
            return StopReason::EndTurn;
        }
        let mut attachments = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            if cancel.is_cancelled() {
                for skipped in &calls[i..] {
                    conversation.push_tool_result(
                        &skipped.id,
                        ToolOutput::refused("the person cancelled the turn").text,
                    );
                }
                return StopReason::Cancelled;
            }
            let (why, routing) = describe(&call.arguments);
            session.screen.update(Update::ToolCall {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                why,
                routing,
            });
            let releases = session.state().context.releases();
            let (output, _, _) =
                tools::dispatch(session, &call.name, &call.arguments, cancel).await;
            launch_queued(session);
            let released = session.state().context.releases() != releases;
            session.screen.update(Update::ToolResult {
                call_id: call.id.clone(),
                status: output.status,
                summary: output.summary.clone(),
            });
            conversation.push_tool_result(&call.id, output.text);
            if released {
                conversation.mark_released();
            }
            attachments.extend(output.attachments);
            session.flush_audit();
        }
        // A picture let through goes in a message of its own after the round's results, with the
        // driver's words saying where it came from.
        for (said, picture) in attachments.drain(..) {
            conversation.push_picture(said, picture);
            // A picture is only ever let through by a release.
            conversation.mark_released();
        }
        if cancel.is_cancelled() {
            return StopReason::Cancelled;
        }
    }
    StopReason::MaxRounds
}

/// Runs the delegates `spawn_agent` queued, each as a task of its own beside the turn, in a
/// session of its own made now ([`Session::for_delegate`]). `spawn_agent` calls it through the
/// session the moment it queues one (the turn hands it down as `rounds` starts), so a delegate
/// starts working while the person is asked about the next; the turn calls it again after every
/// dispatch, for anything left queued.
fn launch_queued(session: &Session) {
    let (queued, definitions) = {
        let mut state = session.state();
        let queued = std::mem::take(&mut state.delegation.queued);
        (queued, state.delegation.definitions.clone())
    };
    for q in queued {
        let number = q.seat.number;
        let child = session.for_delegate(q.seat, q.screen, q.model, q.round_limit);
        child.state().delegation.definitions = definitions.clone();
        let handle = tokio::spawn(run_delegate(
            Arc::new(child),
            q.told,
            q.task,
            q.about,
            q.cancel,
        ));
        session.state().delegation.children.push(Child {
            number,
            name: q.name,
            handle,
        });
    }
}

/// Runs one delegate to its report: every caller of [`rounds`] is in this file.
async fn run_delegate(
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
            let found = crate::skills::find(&*child).await;
            if let Some(listing) =
                crate::delegate::present_listing(&child, crate::skills::listing(&found.skills))
            {
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
            rounds(&child, &system, &mut conversation, &cancel).await
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
            describe_stop(stop)
        ),
        (stop, None) => format!(
            "(the delegate stopped before it finished: {})",
            describe_stop(stop)
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

fn describe_stop(stop: &StopReason) -> String {
    match stop {
        StopReason::Error(e) => format!("error: {e}"),
        other => other.as_str().to_string(),
    }
}

/// The turn's fixed sets, found afresh at its start: the skills (listed by name and description)
/// and the delegate definitions the planner may name, each presented as trusted configuration.
async fn listings(session: &Session, system: PlannerText) -> PlannerText {
    let found = crate::skills::find(session).await;
    let definitions = crate::delegate::definitions(session).await;
    let mut text = system.into_string();
    if let Some(listing) =
        crate::delegate::present_listing(session, crate::skills::listing(&found.skills))
    {
        text.push('\n');
        text.push_str(&listing);
    }
    if found.left_out > 0 {
        text.push_str(&format!(
            "\n{} skill folder(s) were left out: not trusted, not a regular file inside the workspace, too large, or without a name and a description.\n",
            found.left_out
        ));
    }
    if !definitions.is_empty() {
        let mut listing = String::from(
            "Delegate definitions you may name as spawn_agent's kind, besides reader, checker and worker:\n",
        );
        for d in &definitions {
            listing.push_str(&format!("- {}: {}\n", d.name, d.description));
        }
        if let Some(shown) = crate::delegate::present_listing(session, Some(listing)) {
            text.push('\n');
            text.push_str(&shown);
        }
    }
    {
        let mut state = session.state();
        state.skills = found.skills;
        state.delegation.begin_turn(definitions);
    }
    PlannerText::driver(text)
}

/// The context a planner request is held to: `model.contextTokens`, else what the endpoint's
/// model listing says (asked once a session), else what the model's name says, else
/// [`crate::settings::DEFAULT_CONTEXT_TOKENS`] (MODEL-10).
async fn context_budget(session: &Session) -> u64 {
    if let Some((n, _)) = session.context_budget() {
        return n;
    }
    let listed = session.model.listed_context_tokens().await;
    let resolved = crate::settings::context_budget(None, listed, &session.model.config().name);
    session.resolved_context_tokens.get_or_init(|| resolved).0
}

/// The `why` and the routing arguments of a call, for drawing it before it runs.
fn describe(arguments: &str) -> (String, Value) {
    let parsed: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let why = crate::tools::why_of(parsed.get("why"));
    let routing = match parsed {
        Value::Object(mut map) => {
            map.remove("why");
            // A command is drawn wherever the call is shown: under the one mask (RUN-31).
            if let Some(Value::String(command)) = map.get_mut("command") {
                *command = crate::cmdline::masked(command);
            }
            Value::Object(map)
        }
        _ => Value::Object(Default::default()),
    };
    (why, routing)
}

/// The system prompt: what bravebot is, the six facts about the machine (seed 003), and the
/// workspace's `AGENTS.md` when it is trusted and is a regular file inside the workspace of at most
/// [`workspace_file::INSTRUCTIONS_LIMIT`] bytes.
async fn system_prompt(session: &Session) -> PlannerText {
    let f = &session.facts;
    let mut text = format!(
        "{PREAMBLE}\n\nWorking directory: {}\nIs a git repository: {}\nPlatform: {}\nOS version: {}\nShell: {}\nToday's date: {}\n",
        session.cwd.display(),
        if f.is_git { "yes" } else { "no" },
        f.platform,
        f.os_version,
        f.shell,
        f.date,
    );
    let agents = session.cwd.join("AGENTS.md");
    let integrity = session.trust.lock().integrity_of(&agents);
    if integrity != Some(Integrity::Trusted) {
        // What is there is told from metadata alone, off the runtime's workers; nothing is read.
        let (cwd, path) = (session.cwd.clone(), agents.clone());
        let looked = tokio::task::spawn_blocking(move || {
            let present = std::fs::symlink_metadata(&path).is_ok();
            (present, workspace_file::default_refusal(&cwd, &path, false))
        })
        .await
        .unwrap_or((false, None));
        match looked {
            (true, Some(refusal)) => text.push_str(&format!(
                "\nAGENTS.md was not read, so it is not shown to you: {}.\n",
                refusal.reason()
            )),
            (true, None) => {
                text.push_str("\nAGENTS.md exists but is not trusted, so it is not shown to you.\n")
            }
            (false, _) if session.files.version(&agents).is_some() => {
                text.push_str("\nAGENTS.md exists but is not trusted, so it is not shown to you.\n")
            }
            (false, _) => {}
        }
        return PlannerText::driver(text);
    }
    // Trusted by path, read only as a regular file inside the workspace and within its bound; a
    // file that fails that is named in one sentence of the driver's and not read at all.
    let body = match workspace_file::read_instructions(session, &agents).await {
        Ok(file)
            if workspace_file::integrity_through_links(
                &session.trust.lock(),
                &agents,
                &file.real,
                file.file,
            ) != Some(Integrity::Trusted) =>
        {
            Err("it leads to a file marked untrusted".to_string())
        }
        Ok(file) => String::from_utf8(file.bytes).map_err(|_| "it is not UTF-8 text".to_string()),
        Err(Refusal::Missing) => return PlannerText::driver(text),
        Err(refusal) => Err(refusal.reason()),
    };
    match body {
        Ok(body) => {
            let mut state = session.state();
            let state = &mut *state;
            if let Ok(opened) = policy::open(Labelled::new(body, Label::TRUSTED_PRIVATE)) {
                let shown =
                    policy::present(opened, "AGENTS.md", &mut state.context, &mut state.audit);
                text.push_str("\nThe person's standing instructions, from AGENTS.md:\n");
                text.push_str(shown.as_str());
                text.push('\n');
            }
        }
        Err(reason) => {
            session.state().audit.record(
                Gate::FileRead,
                Decision::Refused,
                format!("AGENTS.md left out of the system prompt: {reason}"),
            );
            text.push_str(&format!(
                "\nAGENTS.md was not read, so it is not shown to you: {reason}.\n"
            ));
        }
    }
    PlannerText::driver(text)
}
