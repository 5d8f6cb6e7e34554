//! The tools offered to the planner, each with its arguments split into routing (where an effect
//! lands) and content (what it carries), and the path handling they share.
//!
//! A tool that is not built is not offered. This build offers every tool of seed 004 (CONTRACT
//! §4.1); `watch_file` and `schedule_next` only where they mean something ([`Offers`]),
//! `load_skill` only where the turn was listed a skill, and a delegate only the tools its seat
//! holds ([`offered`]). Each tool is declared once, in [`table`]'s one entry for it.

mod args;
mod ask_user;
pub mod content_trust;
mod diagnostics;
pub(crate) mod edit_file;
mod fetch_url;
mod job_output;
mod land;
mod list_files;
pub(crate) mod load_skill;
mod lsp;
pub mod mcp;
pub(crate) mod questions;
pub(crate) mod read_file;
mod read_git;
mod read_output;
pub mod release;
pub(crate) mod run;
mod schedule_next;
pub mod search;
pub(crate) mod spawn_agent;
mod spawn_processor;
mod table;
mod todo_write;
mod vet_content;
mod watch_file;
pub(crate) mod write_file;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::delegation::{Definition, Holders, Kind};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::context::Routing;
use crate::kernel::policy::PlannerText;
use crate::model::ToolSchema;
use crate::paths::{absolute, control_pictures};
use crate::screen::ToolStatus;
use crate::session::{Offers, Session};

/// Whether an argument decides where an effect lands or is merely carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgRole {
    Routing,
    Content,
}

pub struct ArgSpec {
    pub name: &'static str,
    pub role: ArgRole,
    pub required: bool,
    pub schema: Value,
}

pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub args: Vec<ArgSpec>,
}

impl ToolSpec {
    /// The function-tool schema offered to the planner, `why` included on every tool. What `why`
    /// is for is said once, in the system prompt, rather than in each of these (TOOL-8).
    pub fn schema(&self) -> ToolSchema {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for arg in &self.args {
            properties.insert(arg.name.to_string(), arg.schema.clone());
            if arg.required {
                required.push(Value::String(arg.name.to_string()));
            }
        }
        properties.insert("why".into(), json!({"type": "string"}));
        required.push(Value::String("why".into()));
        ToolSchema {
            name: self.name.to_string(),
            description: self.description.to_string(),
            parameters: json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false}),
        }
    }

    fn role_of(&self, name: &str) -> Option<ArgRole> {
        match name {
            "why" => Some(ArgRole::Content),
            _ => self.args.iter().find(|a| a.name == name).map(|a| a.role),
        }
    }
}

pub use job_output::finished_unreported;

/// The tools offered to one turn: [`specs`], and the two of [`Offers`] where they are offered.
pub fn specs_for(offers: Offers) -> Vec<&'static ToolSpec> {
    table::all()
        .iter()
        .filter(|t| t.def.offered.by(offers))
        .map(|t| &t.spec)
        .collect()
}

/// Every tool this build offers every turn, in the order the planner is shown them.
pub fn specs() -> Vec<ToolSpec> {
    table::all()
        .iter()
        .filter(|t| t.def.offered.by(Offers::default()))
        .map(|t| (t.def.spec)())
        .collect()
}

/// The tools this session's planner is offered in the turn running now: [`specs_for`] its
/// offers, less `load_skill` where no skill was listed and `diagnostics` where the editor does not
/// answer for them, and for a delegate only those its seat holds (DELEG-2). Whether the editor
/// answers is a fact of the session, fixed when it starts (TOOL-7), so it never changes the list
/// between two rounds.
pub fn offered(session: &Session) -> Vec<&'static ToolSpec> {
    let (offers, skills) = {
        let state = session.state();
        (state.offers, !state.skills.is_empty())
    };
    let diagnostics = session.files.answers_diagnostics();
    table::all()
        .iter()
        .filter(|t| t.def.offered.by(offers))
        .filter(|t| match t.def.offered {
            table::Offered::SkillListed => skills,
            table::Offered::EditorDiagnostics => diagnostics,
            _ => true,
        })
        .filter(|t| {
            session
                .seat
                .as_ref()
                .is_none_or(|seat| seat.tools.contains(&t.spec.name))
        })
        .map(|t| &t.spec)
        .collect()
}

/// The tools a delegate of this kind holds before its parent narrows them, `spawn_agent` aside:
/// a reader's, then what a checker adds, then what a worker adds (DELEG-2).
pub fn held_by(kind: Kind) -> Vec<&'static str> {
    let mut out = Vec::new();
    for least in Kind::ALL.into_iter().filter(|k| *k <= kind) {
        out.extend(
            table::all()
                .iter()
                .filter(|t| t.def.held_by == Holders::From(least))
                .map(|t| t.spec.name),
        );
    }
    out
}

/// The tools a definition's delegate holds before its parent narrows them: a worker's, less
/// those it does not name; and whether it may start delegates, which it may only where it names
/// `spawn_agent` or names no tool at all.
pub fn kept_by(definition: &Definition) -> (Vec<&'static str>, bool) {
    let all = held_by(Kind::Worker);
    match &definition.tools {
        None => (all, true),
        Some(named) => (
            all.into_iter()
                .filter(|t| named.iter().any(|n| n == t))
                .collect(),
            table::all().iter().any(|t| {
                t.def.held_by == Holders::Delegating && named.iter().any(|n| n == t.spec.name)
            }),
        ),
    }
}

/// What a tool call gave back.
pub struct ToolOutput {
    pub status: ToolStatus,
    /// What the planner reads in the tool message.
    pub text: PlannerText,
    /// One line for the person.
    pub summary: String,
    /// Pictures released to the planner, sent in a message of their own after the round's
    /// results (CONTRACT §4.10), never as text.
    pub attachments: Vec<(PlannerText, crate::model::Part)>,
}

/// A program's stream (`stdout`, `stderr`) in the words of a line a person reads.
pub(crate) fn output_words(stream: &str) -> &'static str {
    match stream {
        "stderr" => "error output",
        _ => "output",
    }
}

impl ToolOutput {
    pub fn ok(text: PlannerText, summary: impl Into<String>) -> ToolOutput {
        ToolOutput {
            status: ToolStatus::Ok,
            text,
            summary: summary.into(),
            attachments: Vec::new(),
        }
    }

    pub fn error(message: impl Into<String>) -> ToolOutput {
        let message = message.into();
        ToolOutput {
            status: ToolStatus::Error,
            text: PlannerText::driver(format!("error: {message}")),
            summary: message,
            attachments: Vec::new(),
        }
    }

    pub fn refused(message: impl Into<String>) -> ToolOutput {
        let message = message.into();
        ToolOutput {
            status: ToolStatus::Refused,
            text: PlannerText::driver(format!("refused: {message}")),
            summary: message,
            attachments: Vec::new(),
        }
    }
}

/// A tool call whose arguments parsed and matched the tool's declaration.
pub struct Call<'a> {
    pub session: &'a Session,
    pub tool: &'static str,
    pub args: Map<String, Value>,
    pub why: String,
    pub cancel: &'a CancellationToken,
}

impl Call<'_> {
    /// The routing gate: routing comes from the planner's output, which is as trusted as the
    /// context that produced it (GATE-1). A context whose routing is its own routes as the session's
    /// rules allow. A context that met released content (CTX-2) may still choose what to read,
    /// since a read is confined and changes nothing, and may propose an effect only to a tool that
    /// puts that one effect to the person; everything else, and every effect where nobody is
    /// watching, is refused here.
    pub fn routing_gate(&self) -> Result<(), ToolOutput> {
        let mut state = self.session.state();
        let label = state.context.label();
        let routing = state.context.routing();
        let names: Vec<&str> = self
            .args
            .keys()
            .map(String::as_str)
            .filter(|k| self.spec_role(k) == Some(ArgRole::Routing))
            .collect();
        let detail = format!(
            "{}.{:?} [routing] from a planner context labelled {label}",
            self.tool, names
        );
        let effects = effects_of(self.tool, &self.args);
        let refusal = match (routing, effects) {
            (Routing::Own, _) | (Routing::PersonOnly, Effects::None) => None,
            (Routing::PersonOnly, Effects::EachAsked) if self.session.screen.interactive() => None,
            (Routing::PersonOnly, Effects::EachAsked) => Some(
                "this conversation has met content nobody vouched for, so each of its effects needs the person's yes, and nobody is watching to give it; nothing was done",
            ),
            (Routing::PersonOnly, Effects::Unasked) => Some(
                "this conversation has met content nobody vouched for, so it may only propose effects the person approves one at a time, and this one is never put to them; nothing was done",
            ),
        };
        match refusal {
            Some(message) => {
                state.audit.record(Gate::Routing, Decision::Refused, detail);
                Err(ToolOutput::refused(message))
            }
            None => {
                let decision = match routing {
                    Routing::Own => Decision::Allowed,
                    Routing::PersonOnly => Decision::Observed,
                };
                let detail = match (routing, effects) {
                    (Routing::Own, _) => detail,
                    (Routing::PersonOnly, Effects::None) => {
                        format!(
                            "{detail}: a confined read, chosen by a context that met released content"
                        )
                    }
                    (Routing::PersonOnly, _) => {
                        format!(
                            "{detail}: routing not its own, so the person answers for this one effect"
                        )
                    }
                };
                state.audit.record(Gate::Routing, decision, detail);
                Ok(())
            }
        }
    }

    /// Whether the planner's routing needs the person for every effect, so no mode, remembered
    /// approval or allow rule may answer for them (CTX-2).
    pub fn person_only(&self) -> bool {
        self.session.state().context.routing() == Routing::PersonOnly
    }

    fn spec_role(&self, name: &str) -> Option<ArgRole> {
        table::find(self.tool).and_then(|t| t.spec.role_of(name))
    }

    /// The context gate for naming a reference in argument `arg`: a context that met content nobody
    /// vouched for names none (CTX-1), and the refusal is recorded.
    pub fn may_name_reference(&self, arg: &str) -> Result<(), ToolOutput> {
        // Bound first: the state lock must be released before the refusal is recorded.
        let permitted = self
            .session
            .state()
            .context
            .permits(crate::kernel::context::Capability::NameReference);
        permitted.map_err(|cap| {
            self.record(
                Gate::Context,
                Decision::Refused,
                format!(
                    "{}.{arg}: a tainted context may not {}",
                    self.tool,
                    cap.as_str()
                ),
            );
            ToolOutput::refused(
                "this conversation has met content nobody vouched for, so it can name no reference",
            )
        })
    }

    /// A reference named in argument `arg`, through the context gate and parsed.
    pub fn reference(
        &self,
        arg: &str,
        raw: &str,
    ) -> Result<crate::kernel::slot::SlotId, ToolOutput> {
        self.may_name_reference(arg)?;
        crate::kernel::slot::SlotId::parse(raw).ok_or_else(|| {
            ToolOutput::error(format!(
                "`{}` is not a reference; references look like ref:2",
                control_pictures(raw)
            ))
        })
    }

    /// Puts a question to the person and waits; a cancelled turn refuses it.
    pub async fn ask(&self, question: crate::screen::Question) -> crate::screen::Answer {
        questions::put(self.session, self.cancel, question).await
    }

    /// Puts `question` and writes its record at the question gate, as
    /// `questions::ask_recorded` does, for this call (REL-7).
    pub async fn ask_recorded(
        &self,
        question: crate::screen::Question,
        said: impl FnOnce(&questions::Asked) -> questions::Said,
    ) -> questions::Asked {
        questions::ask_recorded(self.session, self.cancel, question, said).await
    }

    /// Puts untrusted content into a new slot, records that it was withheld from the planner
    /// (`what` names it for the trail), and tells the person's screen where it came from
    /// (`seen_as`, in plain words). The planner gets the reference only.
    pub fn quarantine(
        &self,
        content: crate::kernel::labelled::Labelled<Vec<u8>>,
        origin: crate::kernel::slot::Origin,
        what: &str,
        seen_as: String,
    ) -> crate::kernel::slot::Reference {
        let label = content.label();
        let reference = {
            let mut state = self.session.state();
            let state = &mut *state;
            let reference = state.quarantine.put(content, origin);
            crate::kernel::policy::withhold(
                what,
                label,
                &reference.id.to_string(),
                &mut state.audit,
            );
            reference
        };
        self.session
            .screen
            .update(crate::screen::Update::Quarantined {
                reference: reference.clone(),
                origin: seen_as,
            });
        reference
    }

    pub fn record(&self, gate: Gate, decision: Decision, detail: impl Into<String>) {
        self.session.state().audit.record(gate, decision, detail);
    }
}

/// What a tool's routing can do to the world, which decides what a context that met released
/// content may still call (CTX-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effects {
    /// Reads inside the places the person opened, or draws on the person's screen: changes
    /// nothing. (A language server's start is an effect, and `lsp` puts it to the person.)
    None,
    /// Every effect is put to the person as a question of its own before it happens.
    EachAsked,
    /// An effect that happens without a question of its own.
    Unasked,
}

/// What a call can do to the world, as its tool's entry in the table says; a tool the table
/// does not hold is treated as one whose effects nobody is asked about.
fn effects_of(tool: &str, args: &Map<String, Value>) -> Effects {
    table::find(tool).map_or(Effects::Unasked, |t| (t.def.effects)(args))
}

/// Parses a call's arguments against the tool's declaration and runs it. An unknown tool or
/// argument is an error naming it (CONTRACT §4.1).
pub async fn dispatch(
    session: &Session,
    name: &str,
    arguments: &str,
    cancel: &CancellationToken,
) -> (ToolOutput, Value, String) {
    if name.starts_with(crate::mcp::PREFIX) {
        return mcp::dispatch(session, name, arguments, cancel).await;
    }
    // A tool this turn was not offered is answered as any unknown name is; a delegate naming a
    // tool its seat does not hold is refused, and the refusal recorded (DELEG-3).
    let specs = offered(session);
    let Some(spec) = specs.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        if let Some(seat) = &session.seat
            && table::find(name).is_some()
        {
            session.state().audit.record(
                Gate::Routing,
                Decision::Refused,
                format!("{name}: not held by {}", seat.label()),
            );
            return (
                ToolOutput::refused(format!(
                    "{name} is not offered to this delegate, so it was not run; its tools are {}",
                    names.join(", ")
                )),
                Value::Null,
                String::new(),
            );
        }
        return (
            ToolOutput::error(format!(
                "unknown tool `{name}`; the tools are {}",
                names.join(", ")
            )),
            Value::Null,
            String::new(),
        );
    };
    let args = match serde_json::from_str::<Value>(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    }) {
        Ok(Value::Object(map)) => map,
        Ok(_) => {
            return (
                ToolOutput::error(format!("arguments of {name} must be a JSON object")),
                Value::Null,
                String::new(),
            );
        }
        Err(e) => {
            return (
                ToolOutput::error(format!("arguments of {name} are not valid JSON: {e}")),
                Value::Null,
                String::new(),
            );
        }
    };
    let why = why_of(args.get("why"));
    let routing: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| spec.role_of(k) == Some(ArgRole::Routing))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(unknown) = args.keys().find(|k| spec.role_of(k).is_none()) {
        let known: Vec<&str> = spec.args.iter().map(|a| a.name).chain(["why"]).collect();
        return (
            ToolOutput::error(format!(
                "unknown argument `{unknown}` for {name}; it takes {}",
                known.join(", ")
            )),
            Value::Object(routing),
            why,
        );
    }
    if let Some(missing) = spec
        .args
        .iter()
        .find(|a| a.required && args.get(a.name).is_none_or(Value::is_null))
    {
        return (
            ToolOutput::error(format!("{name} needs the argument `{}`", missing.name)),
            Value::Object(routing),
            why,
        );
    }
    let call = Call {
        session,
        tool: spec.name,
        args,
        why: why.clone(),
        cancel,
    };
    if let Err(refusal) = call.routing_gate() {
        return (refusal, Value::Object(routing), why);
    }
    let output = match table::find(spec.name) {
        Some(tool) => (tool.def.run)(&call).await,
        None => ToolOutput::error(format!("tool `{}` is declared but not wired", spec.name)),
    };
    (output, Value::Object(routing), why)
}

/// Why a path may not be used.
#[derive(Debug)]
pub enum Confinement {
    Outside,
}

/// Resolves a planner-named path and checks it is reachable: inside the workspace, inside a
/// directory the person added, or a file the person named. Symbolic links are resolved first, so
/// a link inside the workspace pointing out of it is outside. The rule itself is
/// [`Reach::admits`](crate::workspace_file::Reach::admits), which every read applies again when it
/// opens the file.
pub fn confine(session: &Session, raw: &str) -> Result<PathBuf, Confinement> {
    let lexical = absolute(&session.cwd, Path::new(raw));
    match crate::workspace_file::Reach::of(session).admits(&lexical) {
        Some(_) => Ok(lexical),
        None => Err(Confinement::Outside),
    }
}

/// The longest `why` shown, in characters; the rest is cut with an ellipsis.
pub const WHY_MAX_CHARS: usize = 240;

/// A call's `why` as a person is shown it (TOOL-5): one line, whatever the planner wrote. A line
/// break or another control character is drawn as its picture and a character that reorders or
/// hides text (bidirectional controls, zero-width marks) as U+FFFD, so a `why` cannot start a line
/// of its own under the driver's facts or reorder them, and it is cut at `WHY_MAX_CHARS`.
pub fn why_of(value: Option<&Value>) -> String {
    let text = value.and_then(Value::as_str).unwrap_or_default();
    let mut shown: String = control_pictures(text)
        .chars()
        .map(|c| match c {
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{061c}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{85}' => '\u{fffd}',
            other => other,
        })
        .take(WHY_MAX_CHARS + 1)
        .collect();
    if shown.chars().count() > WHY_MAX_CHARS {
        shown = shown.chars().take(WHY_MAX_CHARS - 1).collect();
        shown.push('…');
    }
    shown
}

/// A short opaque token that changes when a file is written: from its size, modification time
/// and inode, or from an open buffer's version.
pub fn change_token(path: &Path, buffer_version: Option<i32>) -> String {
    match buffer_version {
        Some(v) => crate::workspace_file::buffer_token(path, v),
        None => crate::workspace_file::metadata_token(std::fs::metadata(path).ok().as_ref()),
    }
}
