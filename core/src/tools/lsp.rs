//! `lsp`: asks the session's language server about a symbol (seed 004 `lsp`; `specs/lsp.md`).
//!
//! The operations are a closed list of reads. A position is two numbers the planner states, taken
//! from a line it was shown; one that no longer names a place in the file answers "nothing found"
//! before any server is asked. Starting a language's server is put to the person once per session
//! (`lspStart`); the server is kept in [`crate::language::LanguageServers`] and answers every later
//! question.
//!
//! What comes back is split by what it is. A location (path, line, column, symbol kind and name)
//! is structure: it reaches the planner whatever the trust map says about the file, with control
//! characters shown as pictures, one location a line, at most [`MAX_LOCATIONS`], and a location
//! outside the places the person opened marked so and not spelled as a path `read_file` would
//! open. Text at a location (a symbol's `detail`, such as a signature) reaches the planner only
//! from a file the trust map vouches for; the rest is quarantined in one slot. Hover text is
//! always quarantined: a hover answer never says which file wrote it. A missing server, a binary
//! not on PATH, a server that failed to start or crashed, and a real empty answer are five
//! different sentences.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::args::{Arg, ArgValue, tool_args};
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy;
use crate::kernel::slot::Origin;
use crate::language::position::{self, Encoding, ServerPosition, Stale};
use crate::language::{Approval, Language, Launch, RpcError, Server, State, Unavailable};
use crate::paths::{display_path, file_uri};
use crate::screen::{Question, QuestionKind, Subject, Update};

/// Most locations one answer lists; past it the answer says how many were left out.
pub const MAX_LOCATIONS: usize = 200;
/// Longest symbol name shown; a longer one is cut and marked.
pub const MAX_NAME_CHARS: usize = 120;

/// The closed list of operations, every one a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Definition,
    References,
    Hover,
    DocumentSymbol,
    WorkspaceSymbol,
    Implementation,
    IncomingCalls,
    OutgoingCalls,
}

impl Operation {
    pub const ALL: [Operation; 8] = [
        Operation::Definition,
        Operation::References,
        Operation::Hover,
        Operation::DocumentSymbol,
        Operation::WorkspaceSymbol,
        Operation::Implementation,
        Operation::IncomingCalls,
        Operation::OutgoingCalls,
    ];

    pub fn parse(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Operation::Definition => "goToDefinition",
            Operation::References => "findReferences",
            Operation::Hover => "hover",
            Operation::DocumentSymbol => "documentSymbol",
            Operation::WorkspaceSymbol => "workspaceSymbol",
            Operation::Implementation => "goToImplementation",
            Operation::IncomingCalls => "incomingCalls",
            Operation::OutgoingCalls => "outgoingCalls",
        }
    }

    /// The operation in the words of a person's summary line; [`Operation::name`] is the exact
    /// form, which the tool call's arguments carry.
    fn words(self) -> &'static str {
        match self {
            Operation::Definition => "definition",
            Operation::References => "references",
            Operation::Hover => "hover text",
            Operation::DocumentSymbol => "the file's symbols",
            Operation::WorkspaceSymbol => "the workspace's symbols",
            Operation::Implementation => "implementations",
            Operation::IncomingCalls => "callers",
            Operation::OutgoingCalls => "calls it makes",
        }
    }

    fn needs_position(self) -> bool {
        !matches!(self, Operation::DocumentSymbol | Operation::WorkspaceSymbol)
    }

    /// The LSP method that asks it (the call hierarchy asks `prepareCallHierarchy` first).
    fn method(self) -> &'static str {
        match self {
            Operation::Definition => "textDocument/definition",
            Operation::References => "textDocument/references",
            Operation::Hover => "textDocument/hover",
            Operation::DocumentSymbol => "textDocument/documentSymbol",
            Operation::WorkspaceSymbol => "workspace/symbol",
            Operation::Implementation => "textDocument/implementation",
            Operation::IncomingCalls | Operation::OutgoingCalls => {
                "textDocument/prepareCallHierarchy"
            }
        }
    }

    /// The server capability that offers it.
    fn provider(self) -> &'static str {
        match self {
            Operation::Definition => "definitionProvider",
            Operation::References => "referencesProvider",
            Operation::Hover => "hoverProvider",
            Operation::DocumentSymbol => "documentSymbolProvider",
            Operation::WorkspaceSymbol => "workspaceSymbolProvider",
            Operation::Implementation => "implementationProvider",
            Operation::IncomingCalls | Operation::OutgoingCalls => "callHierarchyProvider",
        }
    }
}

tool_args! {
    /// The arguments of `lsp`, as the planner is shown them and as a call is read.
    pub struct Arguments {
        operation: required Operation as Routing = json!({"type": "string", "enum": Operation::ALL.map(Operation::name)});
        path: optional String as Routing = json!({"type": "string", "description": "workspace-relative file holding the symbol; required for every operation but workspaceSymbol"});
        line: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "description": "1-based line of the symbol"});
        character: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "description": "1-based character of the symbol on that line"});
        query: optional String as Routing = json!({"type": "string", "description": "for workspaceSymbol: the name to look for"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "lsp";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Ask a language server about a symbol, where search cannot tell a declaration from a mention: \
goToDefinition, findReferences, goToImplementation, incomingCalls and outgoingCalls at a position; hover at a \
position (its text always comes back as a reference you cannot read); documentSymbol for a file; workspaceSymbol \
for a `query` (with `path`, the server of that file's language; without, every server already running). `line` and \
`character` are 1-based, as read_file or search reported them (a tab is one character). Locations come back one a \
line as path:line:column kind name. Languages: Rust, TypeScript, JavaScript, Python, Go, C and C++. Starting a \
server is put to the person once per session. An answer says when the server was still indexing.",
        args: Arguments::specs(),
    }
}

/// A call's arguments, checked against the operation.
struct Args {
    operation: Operation,
    path: Option<String>,
    position: Option<(u64, u64)>,
    query: Option<String>,
}

/// An operation is read as one of [`Operation::ALL`]'s names, and anything else is refused
/// before the other arguments are read.
impl ArgValue for Operation {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        let Some(raw) = String::read(arg)? else {
            return Ok(None);
        };
        let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
        Operation::parse(&raw).map(Some).ok_or_else(|| {
            format!(
                "`{}` is not an operation of lsp; the operations are {}",
                crate::paths::control_pictures(&raw),
                names.join(", ")
            )
        })
    }
}

fn args(call: &Call<'_>) -> Result<Args, String> {
    let Arguments {
        operation,
        path,
        line,
        character,
        query,
    } = Arguments::read(call)?;
    let position = match (operation.needs_position(), line, character) {
        (true, Some(l), Some(c)) if l >= 1 && c >= 1 => Some((l, c)),
        (true, Some(_), Some(_)) => {
            return Err("`line` and `character` are 1-based: the first is 1".into());
        }
        (true, ..) => {
            return Err(format!(
                "{} needs `line` and `character`, 1-based, as a read or a search reported them",
                operation.name()
            ));
        }
        (false, None, None) => None,
        (false, ..) => {
            return Err(format!(
                "{} takes no position; leave out `line` and `character`",
                operation.name()
            ));
        }
    };
    match (operation, &path, &query) {
        (Operation::WorkspaceSymbol, _, None) => {
            Err("workspaceSymbol needs `query`, the name to look for".into())
        }
        (Operation::WorkspaceSymbol, ..) => Ok(()),
        (_, None, _) => Err(format!("{} needs `path`", operation.name())),
        (_, _, Some(_)) => Err(format!(
            "`query` is for workspaceSymbol only, not {}",
            operation.name()
        )),
        _ => Ok(()),
    }?;
    Ok(Args {
        operation,
        path,
        position,
        query,
    })
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let args = match args(call) {
        Ok(a) => a,
        Err(e) => return ToolOutput::error(e),
    };
    tokio::select! {
        out = answer(call, args) => out,
        () = call.cancel.cancelled() => ToolOutput::error("cancelled before the language server answered"),
    }
}

/// The file a question is about, read as the server should see it.
struct Target {
    path: PathBuf,
    shown: String,
    text: String,
    language: Language,
}

async fn answer(call: &Call<'_>, args: Args) -> ToolOutput {
    let Some(raw) = args.path.as_deref() else {
        return workspace_symbol_everywhere(call, args.query.as_deref().unwrap_or_default()).await;
    };
    let target = match target(call, raw) {
        Ok(t) => t,
        Err(out) => return out,
    };
    // A stale position is ordinary: the file changed since it was read. Nothing is started or
    // asked for a place that is not there.
    if let Some((line, character)) = args.position
        && let Err(stale) = position::to_server(&target.text, line, character, Encoding::Utf32)
    {
        // How long the file or the line is now is a fact about its text: the planner is told it
        // only for a file it may read, and otherwise only that nothing is there.
        let vouched = call
            .session
            .trust
            .lock()
            .integrity_of(&crate::workspace_file::real_path(&target.path))
            == Some(Integrity::Trusted);
        let why = match (vouched, stale) {
            (true, Stale::NoSuchLine { lines }) => format!(" (it has {lines} lines now)"),
            (true, Stale::PastLineEnd { length }) => {
                format!(" (line {line} has {length} characters now)")
            }
            (false, _) => String::new(),
        };
        return ToolOutput::ok(
            policy::PlannerText::driver(format!(
                "nothing found: {}:{line}:{character} holds no symbol{why}; the file may have changed since it was read. No server was asked.",
                target.shown
            )),
            format!("{}: nothing at {line}:{character}", target.shown),
        );
    }
    let (server, mut notes) = match obtain(call, &target).await {
        Ok(s) => s,
        Err(out) => return out,
    };
    let limits = call.session.language_servers.limits().clone();
    server
        .show_document(
            &target.path,
            Language::document_id(&target.path),
            &target.text,
        )
        .await;
    if let Some(bound) = server.settle(&limits).await {
        notes.push(partial_note(&server, bound));
    }
    let asked = Asked {
        operation: args.operation,
        target: &target,
        position: args.position,
        query: args.query.as_deref(),
    };
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!(
            "lsp.{} {} sent to the {} server (pid {})",
            args.operation.name(),
            asked.place(),
            server.language.id(),
            server.pid()
        ),
    );
    let result = ask(&server, &asked, &limits).await;
    match result {
        Ok(value) if args.operation == Operation::Hover => {
            hover(call, &server, &asked, &value, notes)
        }
        Ok(value) => {
            let mut found = collect(args.operation, &value);
            if found.total == 0 && !server.offers(args.operation.provider()) {
                return not_implemented(&server, args.operation);
            }
            if server.language == Language::C
                && matches!(
                    args.operation,
                    Operation::References | Operation::IncomingCalls | Operation::WorkspaceSymbol
                )
            {
                notes.push("[clangd knows only the files asked about in this session: it runs without its background index, which it would write inside the tree, so places in other files may be missing]".into());
            }
            let encoding = server.encoding();
            let header = asked.header(&server);
            let body = render(call, &asked, &header, &mut found, encoding, &notes);
            present(call, &asked, body, found.total)
        }
        Err(e) => failure(call, &server, &asked, e).await,
    }
}

/// Resolves, confines and reads the file a question names.
fn target(call: &Call<'_>, raw: &str) -> Result<Target, ToolOutput> {
    let session = call.session;
    let Ok(path) = confine(session, raw) else {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!(
                "lsp.path {} is outside the places the person opened",
                crate::paths::control_pictures(raw)
            ),
        );
        return Err(ToolOutput::refused(format!(
            "{} is outside the workspace and the directories the person added",
            crate::paths::control_pictures(raw)
        )));
    };
    let shown = crate::paths::control_pictures(&display_path(&session.cwd, &path));
    if denied(call, &path) {
        call.record(
            Gate::FileRead,
            Decision::Refused,
            format!("lsp.path {shown}: a deny rule covers it"),
        );
        return Err(ToolOutput::refused(format!(
            "{shown} was not read: the person's deny rule covers it, so no server is asked about it"
        )));
    }
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!("lsp.path {shown} proposed by the model, confined and non-destructive"),
    );
    let text = match session.files.buffer(&path) {
        Some((text, _)) => text.to_string(),
        // Confined above by its real path, which is the one opened: without following a link or
        // waiting on a FIFO, and within the ordinary bound.
        None => match crate::workspace_file::read_regular(
            &crate::workspace_file::real_path(&path),
            crate::workspace_file::READ_LIMIT,
        ) {
            Ok(file) => String::from_utf8_lossy(&file.bytes).into_owned(),
            Err(crate::workspace_file::Refusal::Missing) => {
                return Err(ToolOutput::error(format!("no such file: {shown}")));
            }
            Err(crate::workspace_file::Refusal::Directory) => {
                return Err(ToolOutput::error(format!(
                    "{shown} is a directory; lsp asks about a file"
                )));
            }
            Err(refusal) => {
                return Err(ToolOutput::error(format!(
                    "{shown} was not read: {}",
                    refusal.reason()
                )));
            }
        },
    };
    let Some(language) = Language::of(&path) else {
        let extension = path
            .extension()
            .map(|e| crate::paths::control_pictures(&e.to_string_lossy()))
            .unwrap_or_default();
        return Err(unavailable(Unavailable::NoServer { extension }));
    };
    Ok(Target {
        path,
        shown,
        text,
        language,
    })
}

/// The notice an answer given before the server settled carries, in a truncated search's words.
fn partial_note(server: &Server, bound: std::time::Duration) -> String {
    format!(
        "[partial: the {} server was still indexing when the bound of {} s passed, so this answer may be short]",
        server.language.name(),
        bound.as_secs()
    )
}

fn unavailable(why: Unavailable) -> ToolOutput {
    ToolOutput::error(why.describe())
}

/// The running server for the target's language: started after the person's approval the first
/// time, restarted once after a crash. Notes say what happened on the way.
async fn obtain(
    call: &Call<'_>,
    target: &Target,
) -> Result<(Arc<Server>, Vec<String>), ToolOutput> {
    let servers = &call.session.language_servers;
    let language = target.language;
    let mut notes = Vec::new();
    let launch = servers.launch(language).map_err(unavailable)?;
    let _one_at_a_time = servers.start_lock().await;
    if servers.stopped() {
        return Err(unavailable(Unavailable::Stopped));
    }
    match servers.state(language) {
        State::Running(server) => return Ok((server, notes)),
        State::FailedToStart(reason) => {
            return Err(unavailable(Unavailable::FailedToStart {
                language,
                program: launch.shown,
                reason,
                earlier: true,
            }));
        }
        State::Crashed { server, restarts } => {
            let exit = server.exit_status().await;
            if restarts >= 1 {
                return Err(unavailable(Unavailable::Crashed {
                    language,
                    program: server.program.clone(),
                    exit,
                    restarted: true,
                }));
            }
            notes.push(format!(
                "[the {} server had crashed ({exit}) and was restarted: its one restart in this session]",
                language.name()
            ));
        }
        State::NotStarted => match servers.approval(language) {
            Approval::Approved => {}
            Approval::Declined => {
                call.record(
                    Gate::Question,
                    Decision::Refused,
                    format!(
                        "lspStart {}: the person refused it for the session",
                        language.id()
                    ),
                );
                return Err(ToolOutput::refused(format!(
                    "the person chose not to start the {} language server in this session; nothing was asked, so this is not an empty answer",
                    language.name()
                )));
            }
            Approval::Unasked => ask_to_start(call, target, &launch).await?,
        },
    }
    match servers.start(&launch).await {
        Ok(server) => {
            call.record(
                Gate::Promote,
                Decision::Allowed,
                format!(
                    "lsp: started the {} server {} (pid {})",
                    language.id(),
                    launch.program.display(),
                    server.pid()
                ),
            );
            Ok((server, notes))
        }
        Err(why) => {
            call.record(
                Gate::Promote,
                Decision::Refused,
                format!(
                    "lsp: the {} server {} did not start",
                    language.id(),
                    launch.program.display()
                ),
            );
            Err(unavailable(why))
        }
    }
}

/// Puts `lspStart` to the person; remembers an approval (and a refusal "for this session").
async fn ask_to_start(call: &Call<'_>, target: &Target, launch: &Launch) -> Result<(), ToolOutput> {
    let session = call.session;
    let language = launch.language;
    let binary = launch
        .program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !session.screen.interactive() {
        call.record(
            Gate::Question,
            Decision::Refused,
            format!(
                "lspStart {}: nobody is watching to approve it",
                language.id()
            ),
        );
        return Err(ToolOutput::refused(format!(
            "nobody is watching this session to approve starting the {} language server ({binary}), so it was not started; nothing was asked, so this is not an empty answer",
            language.name()
        )));
    }
    let cache = session
        .language_servers
        .cache_dir(language)
        .filter(|_| launch.cache.is_some())
        .map(|dir| {
            format!(
                " It keeps its index in {}, outside your project.",
                dir.display()
            )
        })
        .unwrap_or_default();
    let question = Question::approve(
        QuestionKind::LspStart,
        format!("Start the {} language server ({binary})?", language.name()),
    )
    .why(&call.why)
    .subject(Subject {
        path: Some(target.shown.clone()),
        uri: Some(file_uri(&target.path)),
        command: Some(launch.shown.clone()),
        ..Subject::default()
    })
    .notice(if session.language_servers.confined() {
        // run.confined: unasked starts servers confined too (LSP-20).
        format!(
            "{binary} runs confined: it reads the project, the system and your toolchains' caches, writes only its own \
cache, and reaches no network; it is handed no credential. It reads the whole project and its dependencies' \
sources, and {}: that is code from the project and its dependencies, held to that confinement. It keeps running \
for this session and answers every later question about {}.{cache}",
            language.what_it_runs(),
            language.name()
        )
    } else {
        format!(
            "{binary} runs with your access to your files, the network and your credentials, and is not confined. \
It reads the whole project and its dependencies' sources, and {}: that is code from the project and its \
dependencies running as you. It keeps running for this session and answers every later question about {}.{cache}",
            language.what_it_runs(),
            language.name()
        )
    })
    .allow_once("start", "Start it for this session")
    .reject("not-now", "Not now")
    .reject_always("never", "Not in this session");
    let asked = call
        .ask_recorded(question, |a| {
            let how = if a.approved() {
                "approved for the session"
            } else if a.refused_always() {
                "refused for the session"
            } else {
                "refused"
            };
            let said = format!("lspStart {}: {how}", language.id());
            a.said(said.clone(), said)
        })
        .await;
    let approved = asked.approved();
    if approved {
        session.language_servers.approve(language);
        return Ok(());
    }
    if asked.refused_always() {
        session.language_servers.decline(language);
    }
    Err(ToolOutput::refused(format!(
        "the person did not allow starting the {} language server, so nothing was asked; this is not an empty answer",
        language.name()
    )))
}

/// What was asked, for headers and the audit trail.
struct Asked<'a> {
    operation: Operation,
    target: &'a Target,
    position: Option<(u64, u64)>,
    query: Option<&'a str>,
}

impl Asked<'_> {
    fn place(&self) -> String {
        match (self.position, self.query) {
            (Some((l, c)), _) => format!("at {}:{l}:{c}", self.target.shown),
            (None, Some(q)) => format!(
                "for `{}` (from {})",
                crate::paths::control_pictures(q),
                self.target.shown
            ),
            (None, None) => format!("of {}", self.target.shown),
        }
    }

    fn header(&self, server: &Server) -> String {
        format!(
            "{} {} ({} server {})",
            self.operation.name(),
            self.place(),
            server.language.name(),
            server_binary(server)
        )
    }
}

fn server_binary(server: &Server) -> String {
    Path::new(server.program.split(' ').next().unwrap_or_default())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Sends the operation's request(s) and returns the raw answer. The call hierarchy prepares the
/// item first and asks for the calls of each item it names.
async fn ask(
    server: &Server,
    asked: &Asked<'_>,
    limits: &crate::language::Limits,
) -> Result<Value, RpcError> {
    let document = json!({"uri": file_uri(&asked.target.path)});
    let position = asked.position.and_then(|(l, c)| {
        position::to_server(&asked.target.text, l, c, server.encoding())
            .ok()
            .map(|p| json!({"line": p.line, "character": p.character}))
    });
    let params = match asked.operation {
        Operation::WorkspaceSymbol => json!({"query": asked.query.unwrap_or_default()}),
        Operation::DocumentSymbol => json!({"textDocument": document}),
        Operation::References => json!({
            "textDocument": document,
            "position": position,
            "context": {"includeDeclaration": true},
        }),
        _ => json!({"textDocument": document, "position": position}),
    };
    let first = server
        .request(asked.operation.method(), params, limits)
        .await?;
    let direction = match asked.operation {
        Operation::IncomingCalls => "callHierarchy/incomingCalls",
        Operation::OutgoingCalls => "callHierarchy/outgoingCalls",
        _ => return Ok(first),
    };
    let mut calls = Vec::new();
    for item in first.as_array().into_iter().flatten() {
        let answer = server
            .request(direction, json!({"item": item}), limits)
            .await?;
        calls.extend(answer.as_array().into_iter().flatten().cloned());
    }
    Ok(Value::Array(calls))
}

/// One place an answer names.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub uri: String,
    pub start: ServerPosition,
    pub kind: Option<u64>,
    pub name: Option<String>,
    pub container: Option<String>,
    /// Text at the place (a signature): content, shown only from a file someone vouched for.
    pub detail: Option<String>,
}

fn start_of(range: Option<&Value>) -> ServerPosition {
    let at = |k: &str| {
        range
            .and_then(|r| r.pointer(&format!("/start/{k}")))
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0)
    };
    ServerPosition {
        line: at("line"),
        character: at("character"),
    }
}

fn text_field(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The places of an answer: the first [`MAX_LOCATIONS`] in the server's order, and how many
/// there were in all.
#[derive(Debug, Default)]
pub struct Places {
    pub found: Vec<Found>,
    pub total: usize,
}

impl Places {
    fn push(&mut self, found: Found) {
        self.total += 1;
        if self.found.len() < MAX_LOCATIONS {
            self.found.push(found);
        }
    }
}

/// A `Location`, a `LocationLink`, a symbol (either shape) or a call hierarchy item. A document
/// symbol's children come after it, walked on a stack of this loop's own rather than by
/// recursion, so no nesting a server sends can exhaust the stack (LSP-13).
fn found_in(v: &Value, container: Option<String>, out: &mut Places) {
    let mut stack = vec![(v, container)];
    while let Some((v, container)) = stack.pop() {
        if let Some(uri) = v.get("targetUri").and_then(Value::as_str) {
            out.push(Found {
                uri: uri.to_string(),
                start: start_of(
                    v.get("targetSelectionRange")
                        .or_else(|| v.get("targetRange")),
                ),
                kind: None,
                name: None,
                container: None,
                detail: None,
            });
            continue;
        }
        let name = text_field(v, "name");
        let kind = v.get("kind").and_then(Value::as_u64);
        let detail = text_field(v, "detail");
        if let Some(uri) = v.get("uri").and_then(Value::as_str) {
            // A Location, or a call hierarchy item.
            out.push(Found {
                uri: uri.to_string(),
                start: start_of(v.get("selectionRange").or_else(|| v.get("range"))),
                kind,
                name,
                container,
                detail,
            });
            continue;
        }
        if let Some(location) = v.get("location") {
            // SymbolInformation, or a WorkspaceSymbol (whose location may have no range).
            out.push(Found {
                uri: location
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                start: start_of(location.get("range")),
                kind,
                name,
                container: text_field(v, "containerName").or(container),
                detail,
            });
            continue;
        }
        if v.get("selectionRange").is_some() || v.get("range").is_some() {
            // A DocumentSymbol: in the document asked about; its children follow it, in order.
            out.push(Found {
                uri: String::new(),
                start: start_of(v.get("selectionRange").or_else(|| v.get("range"))),
                kind,
                name: name.clone(),
                container,
                detail,
            });
            let children = v.get("children").and_then(Value::as_array);
            for child in children.into_iter().flatten().rev() {
                stack.push((child, name.clone()));
            }
        }
    }
}

/// Every place in an answer, in the order the server gave them: the first [`MAX_LOCATIONS`]
/// kept, the rest counted.
pub fn collect(operation: Operation, value: &Value) -> Places {
    let mut out = Places::default();
    let items: Vec<&Value> = match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for item in items {
        match operation {
            Operation::IncomingCalls => {
                if let Some(from) = item.get("from") {
                    found_in(from, None, &mut out);
                }
            }
            Operation::OutgoingCalls => {
                if let Some(to) = item.get("to") {
                    found_in(to, None, &mut out);
                }
            }
            _ => found_in(item, None, &mut out),
        }
    }
    out
}

/// The words for LSP's symbol kinds.
pub fn kind_name(kind: u64) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    usize::try_from(kind)
        .ok()
        .and_then(|k| k.checked_sub(1))
        .and_then(|k| NAMES.get(k))
        .copied()
        .unwrap_or("symbol")
}

/// A name as one line shows it: control characters and line separators as pictures, and cut
/// at [`MAX_NAME_CHARS`].
pub fn shown_name(name: &str) -> String {
    let pictured: String = crate::paths::control_pictures(name)
        .chars()
        .map(|c| match c {
            '\u{85}' | '\u{2028}' | '\u{2029}' => '\u{2424}',
            other => other,
        })
        .collect();
    match pictured.char_indices().nth(MAX_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &pictured[..cut]),
        None => pictured,
    }
}

/// Where a place is, as the planner may be told it.
enum Place {
    /// In a place the person opened: its workspace-relative (or added-directory) path.
    Inside { path: PathBuf, shown: String },
    /// Elsewhere: marked, and not spelled as a path `read_file` would open.
    Outside { shown: String },
}

fn place_of(call: &Call<'_>, uri: &str, asked: &Path) -> Place {
    if uri.is_empty() {
        let shown = crate::paths::control_pictures(&display_path(&call.session.cwd, asked));
        return Place::Inside {
            path: asked.to_path_buf(),
            shown,
        };
    }
    let parsed = url::Url::parse(uri).ok();
    let Some(path) = parsed
        .as_ref()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok())
    else {
        let scheme = parsed
            .map(|u| u.scheme().to_string())
            .unwrap_or_else(|| "unreadable".into());
        return Place::Outside {
            shown: format!("[outside the workspace] a {} document", shown_name(&scheme)),
        };
    };
    match confine(call.session, &path.to_string_lossy()) {
        Ok(path) => Place::Inside {
            shown: crate::paths::control_pictures(&display_path(&call.session.cwd, &path)),
            path,
        },
        Err(_) => {
            let tail: Vec<String> = path
                .components()
                .rev()
                .take(2)
                .map(|c| shown_name(&c.as_os_str().to_string_lossy()))
                .collect();
            let tail: Vec<&str> = tail.iter().rev().map(String::as_str).collect();
            Place::Outside {
                shown: format!("[outside the workspace] …/{}", tail.join("/")),
            }
        }
    }
}

/// The rendered answer: its text, whether it holds text from vouched-for files, and the text
/// from files nobody vouched for, which goes into a slot.
struct Rendered {
    text: String,
    withheld: Vec<String>,
    carries_text: bool,
}

fn render(
    call: &Call<'_>,
    asked: &Asked<'_>,
    header: &str,
    places: &mut Places,
    encoding: Encoding,
    notes: &[String],
) -> Rendered {
    let total = places.total;
    let found = &mut places.found;
    let asked = asked.target.path.clone();
    let mut texts: HashMap<PathBuf, Option<String>> = HashMap::new();
    let mut lines = Vec::new();
    let mut withheld = Vec::new();
    let mut carries_text = false;
    let mut denied_places = 0usize;
    for f in found.iter().take(MAX_LOCATIONS) {
        let place = place_of(call, &f.uri, &asked);
        // A location in a denied file is left out: not read for its columns, not named.
        if let Place::Inside { path, .. } = &place
            && denied(call, path)
        {
            denied_places += 1;
            continue;
        }
        let (line, column, shown_place) = match &place {
            Place::Inside { path, shown } => {
                let text = texts
                    .entry(path.clone())
                    .or_insert_with(|| read_text(call, path));
                let (l, c) = position::from_server(text.as_deref(), f.start, encoding);
                (l, c, shown.clone())
            }
            Place::Outside { shown } => {
                let (l, c) = position::from_server(None, f.start, encoding);
                (l, c, shown.clone())
            }
        };
        let mut line_text = format!("{shown_place}:{line}:{column}");
        if let Some(kind) = f.kind {
            line_text.push(' ');
            line_text.push_str(kind_name(kind));
        }
        if let Some(name) = &f.name {
            line_text.push(' ');
            line_text.push_str(&shown_name(name));
        }
        if let Some(container) = &f.container {
            line_text.push_str(" in ");
            line_text.push_str(&shown_name(container));
        }
        if let Some(detail) = &f.detail {
            let vouched = match &place {
                Place::Inside { path, .. } => {
                    call.session
                        .trust
                        .lock()
                        .integrity_of(&crate::workspace_file::real_path(path))
                        == Some(Integrity::Trusted)
                }
                Place::Outside { .. } => false,
            };
            if vouched {
                carries_text = true;
                line_text.push_str(" — ");
                line_text.push_str(&shown_name(detail));
            } else {
                withheld.push(format!("{shown_place}:{line}:{column} {detail}"));
            }
        }
        lines.push(line_text);
    }
    let mut text = if total == 0 {
        format!("nothing found: {header} answered with no locations.\n")
    } else {
        format!(
            "{header}: {} location{}\n",
            total,
            if total == 1 { "" } else { "s" }
        )
    };
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    if total > MAX_LOCATIONS {
        text.push_str(&format!(
            "[partial: stopped at the cap of {MAX_LOCATIONS} locations; {} more were not listed. Ask about a narrower place to see them]\n",
            total - MAX_LOCATIONS
        ));
    }
    if denied_places > 0 {
        text.push_str(&format!(
            "[{denied_places} location{} in files the person's deny rules cover left out]\n",
            if denied_places == 1 { "" } else { "s" }
        ));
    }
    for note in notes {
        text.push_str(note);
        text.push('\n');
    }
    Rendered {
        text,
        withheld,
        carries_text,
    }
}

/// Whether a deny rule covers `path` as named or where its links lead (TRUST-9).
fn denied(call: &Call<'_>, path: &Path) -> bool {
    let trust = call.session.trust.lock();
    trust.denied(path).is_some()
        || trust
            .denied(&crate::workspace_file::real_path(path))
            .is_some()
}

/// A file's text for converting a server's columns: the open buffer, else the disk.
fn read_text(call: &Call<'_>, path: &Path) -> Option<String> {
    call.session
        .files
        .buffer(path)
        .map(|(t, _)| t.to_string())
        .or_else(|| {
            let real = crate::workspace_file::real_path(path);
            crate::workspace_file::read_regular(&real, crate::workspace_file::READ_LIMIT)
                .ok()
                .map(|file| String::from_utf8_lossy(&file.bytes).into_owned())
        })
}

/// Hands the rendered answer to the planner, with any withheld text in a slot of its own.
fn present(call: &Call<'_>, asked: &Asked<'_>, rendered: Rendered, count: usize) -> ToolOutput {
    let session = call.session;
    let Rendered {
        mut text,
        withheld,
        carries_text,
    } = rendered;
    if !withheld.is_empty() {
        let reference = {
            let mut state = session.state();
            let state = &mut *state;
            let reference = state.quarantine.put(
                Labelled::new(
                    (withheld.join("\n") + "\n").into_bytes(),
                    Label::UNTRUSTED_PRIVATE,
                ),
                Origin::LanguageServer {
                    what: "the text beside the locations",
                    path: asked.target.shown.clone(),
                    line: asked.position.map(|(l, _)| l),
                },
            );
            policy::withhold(
                &format!("lsp {} text at locations", asked.operation.name()),
                Label::UNTRUSTED_PRIVATE,
                &reference.id.to_string(),
                &mut state.audit,
            );
            reference
        };
        session.screen.update(Update::Quarantined {
            reference: reference.clone(),
            origin: format!(
                "text the language server gave beside the locations of {}",
                asked.operation.words()
            ),
        });
        text.push_str(&format!(
            "[the text the server gave beside {} of these locations comes from files nobody vouched for: quarantined as {reference}]\n",
            withheld.len()
        ));
    }
    call.record(
        Gate::Present,
        Decision::Observed,
        format!(
            "lsp {} {}: {count} locations reported as structure{}",
            asked.operation.name(),
            asked.place(),
            if carries_text {
                ", with text from vouched-for files"
            } else {
                ""
            }
        ),
    );
    // Locations are structure and reach the planner whatever the files' trust (seed 004); text
    // beside them is here only from files the trust map vouches for.
    let summary = format!(
        "language server, {}: {count} locations",
        asked.operation.words()
    );
    let Ok(opened) = policy::open(Labelled::new(text, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: an lsp answer did not open");
    };
    let mut state = session.state();
    let state = &mut *state;
    let planner = policy::present(
        opened,
        &format!("lsp {}", asked.operation.name()),
        &mut state.context,
        &mut state.audit,
    );
    ToolOutput::ok(planner, summary)
}

/// The text of a hover answer, whatever shape it came in.
pub fn hover_text(value: &Value) -> String {
    // One marked string or markup content; an array holds marked strings, never arrays, so one
    // level of it is read and nothing recurses (LSP-13).
    fn part(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Object(o) => o
                .get("value")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        }
    }
    match value.get("contents").unwrap_or(&Value::Null) {
        Value::Array(items) => items
            .iter()
            .map(part)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        one => part(one),
    }
}

/// Hover text is always a reference: the answer never says which file wrote it.
fn hover(
    call: &Call<'_>,
    server: &Server,
    asked: &Asked<'_>,
    value: &Value,
    notes: Vec<String>,
) -> ToolOutput {
    let session = call.session;
    let text = hover_text(value);
    let header = asked.header(server);
    let mut out = if text.trim().is_empty() {
        format!("nothing found: {header} answered with no hover text.\n")
    } else {
        let line = asked.position.map_or(0, |(l, _)| l);
        let reference = {
            let mut state = session.state();
            let state = &mut *state;
            let reference = state.quarantine.put(
                Labelled::new(text.into_bytes(), Label::UNTRUSTED_PRIVATE),
                Origin::LanguageServer {
                    what: "hover text",
                    path: asked.target.shown.clone(),
                    line: Some(line),
                },
            );
            policy::withhold(
                "lsp hover text",
                Label::UNTRUSTED_PRIVATE,
                &reference.id.to_string(),
                &mut state.audit,
            );
            reference
        };
        session.screen.update(Update::Quarantined {
            reference: reference.clone(),
            origin: format!("hover text at {}:{line}", asked.target.shown),
        });
        format!(
            "{header}: the hover text is quarantined as {reference}. Hover text is always a reference: an answer never says which file wrote it.\n"
        )
    };
    for note in notes {
        out.push_str(&note);
        out.push('\n');
    }
    ToolOutput::ok(
        policy::PlannerText::driver(out),
        format!("language server, hover text at {}", asked.place()),
    )
}

fn not_implemented(server: &Server, operation: Operation) -> ToolOutput {
    ToolOutput::error(format!(
        "the {} language server ({}) does not implement {}, so nothing was answered; this says nothing about the symbol",
        server.language.name(),
        server_binary(server),
        operation.name()
    ))
}

/// A request that got no answer, in our own words (a server's error message is never passed on).
async fn failure(call: &Call<'_>, server: &Server, asked: &Asked<'_>, e: RpcError) -> ToolOutput {
    let servers = &call.session.language_servers;
    let language = server.language;
    let binary = server_binary(server);
    let op = asked.operation.name();
    match e {
        RpcError::Code(-32601) => not_implemented(server, asked.operation),
        RpcError::Exited if servers.stopped() => unavailable(Unavailable::Stopped),
        RpcError::Exited => {
            let exit = server.exit_status().await;
            let restarts_left =
                matches!(servers.state(language), State::Crashed { restarts: 0, .. });
            call.record(
                Gate::Promote,
                Decision::Observed,
                format!("lsp: the {} server crashed answering {op}", language.id()),
            );
            ToolOutput::error(format!(
                "the {} language server ({binary}) crashed while answering {op} ({exit}); {}. Nothing was answered, so this is not an empty answer; do not read it as \"no references\".",
                language.name(),
                if restarts_left {
                    "the next question restarts it, once in this session"
                } else {
                    "it was restarted once already, so it is not started again in this session"
                }
            ))
        }
        RpcError::TimedOut(t) => ToolOutput::error(format!(
            "the {} language server ({binary}) did not answer {op} within {} s and the request was withdrawn; this is not an empty answer",
            language.name(),
            t.as_secs()
        )),
        RpcError::Code(code @ -32802..=-32800) => ToolOutput::error(format!(
            "the {} language server ({binary}) dropped the {op} request (JSON-RPC error {code}: it was busy or its state changed); ask again. This is not an empty answer",
            language.name()
        )),
        RpcError::Code(code) => ToolOutput::error(format!(
            "the {} language server ({binary}) answered {op} with JSON-RPC error {code} (a server's own message is not passed on); this is not an empty answer",
            language.name()
        )),
    }
}

/// `workspaceSymbol` with no `path`: every server already running in the session is asked.
async fn workspace_symbol_everywhere(call: &Call<'_>, query: &str) -> ToolOutput {
    let servers = call.session.language_servers.running();
    if servers.is_empty() {
        return ToolOutput::error(
            "workspaceSymbol without `path` asks the language servers already running in this session, and none is; give `path`, a file of the language to search, to choose (and start) its server",
        );
    }
    let limits = call.session.language_servers.limits().clone();
    let mut outputs = Vec::new();
    for server in servers {
        let target = Target {
            path: call.session.cwd.clone(),
            shown: ".".into(),
            text: String::new(),
            language: server.language,
        };
        let asked = Asked {
            operation: Operation::WorkspaceSymbol,
            target: &target,
            position: None,
            query: Some(query),
        };
        let mut notes = Vec::new();
        if let Some(bound) = server.settle(&limits).await {
            notes.push(partial_note(&server, bound));
        }
        call.record(
            Gate::Promote,
            Decision::Allowed,
            format!(
                "lsp.workspaceSymbol sent to the {} server (pid {})",
                server.language.id(),
                server.pid()
            ),
        );
        let out = match ask(&server, &asked, &limits).await {
            Ok(value) => {
                let mut found = collect(Operation::WorkspaceSymbol, &value);
                let header = asked.header(&server);
                let body = render(call, &asked, &header, &mut found, server.encoding(), &notes);
                present(call, &asked, body, found.total)
            }
            Err(e) => failure(call, &server, &asked, e).await,
        };
        outputs.push(out);
    }
    if outputs.len() == 1 {
        return outputs.remove(0);
    }
    let status = if outputs
        .iter()
        .any(|o| o.status == crate::screen::ToolStatus::Ok)
    {
        crate::screen::ToolStatus::Ok
    } else {
        crate::screen::ToolStatus::Error
    };
    let text = outputs
        .iter()
        .map(|o| o.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let summary = outputs
        .iter()
        .map(|o| o.summary.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    // Each part was presented (or written by the driver) on its own; joined, they stay so.
    let mut out = ToolOutput::ok(policy::PlannerText::driver(text), summary);
    out.status = status;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    // Verifies: LSP-1
    #[test]
    fn the_operations_are_a_closed_list_of_reads() {
        let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
        expect![[r#"["goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol", "goToImplementation", "incomingCalls", "outgoingCalls"]"#]]
            .assert_eq(&format!("{names:?}"));
        for o in Operation::ALL {
            assert_eq!(Operation::parse(o.name()), Some(o));
            // Every method asked is a query: none is a command, an edit or a rename.
            let method = o.method();
            assert!(
                ![
                    "rename",
                    "executeCommand",
                    "applyEdit",
                    "formatting",
                    "codeAction"
                ]
                .iter()
                .any(|m| method.contains(m)),
                "{method}"
            );
        }
        assert_eq!(Operation::parse("textDocument/rename"), None);
        assert_eq!(Operation::parse("workspace/executeCommand"), None);
    }

    // Verifies: LSP-4
    #[test]
    fn every_shape_of_answer_becomes_places() {
        let at = |l, c| json!({"start": {"line": l, "character": c}, "end": {"line": l, "character": c + 1}});
        let definition = json!([
            {"uri": "file:///w/a.py", "range": at(2, 4)},
            {"targetUri": "file:///w/b.py", "targetRange": at(9, 0), "targetSelectionRange": at(10, 6)},
        ]);
        let found = collect(Operation::Definition, &definition).found;
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[1].uri.as_str(), found[1].start),
            (
                "file:///w/b.py",
                ServerPosition {
                    line: 10,
                    character: 6
                }
            )
        );
        assert!(
            collect(Operation::Definition, &Value::Null)
                .found
                .is_empty()
        );
        let single = collect(
            Operation::Definition,
            &json!({"uri": "file:///w/a.py", "range": at(0, 0)}),
        )
        .found;
        assert_eq!(single.len(), 1);
        let symbols = json!([{
            "name": "Greeter", "kind": 5, "detail": "class Greeter", "range": at(0, 0), "selectionRange": at(0, 6),
            "children": [{"name": "greet", "kind": 6, "range": at(1, 4), "selectionRange": at(1, 8)}]
        }]);
        let found = collect(Operation::DocumentSymbol, &symbols).found;
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].container.as_deref(), Some("Greeter"));
        assert_eq!(found[0].detail.as_deref(), Some("class Greeter"));
        let workspace = json!([{"name": "helper", "kind": 12, "location": {"uri": "file:///w/u.py"}, "containerName": "u"}]);
        let found = collect(Operation::WorkspaceSymbol, &workspace).found;
        assert_eq!(
            (found[0].kind, found[0].container.as_deref()),
            (Some(12), Some("u"))
        );
        let incoming = json!([{"from": {"name": "main", "kind": 12, "uri": "file:///w/m.py", "range": at(4, 0), "selectionRange": at(4, 4)}, "fromRanges": []}]);
        let found = collect(Operation::IncomingCalls, &incoming).found;
        assert_eq!(found[0].name.as_deref(), Some("main"));
        assert_eq!(kind_name(12), "function");
        assert_eq!(kind_name(99), "symbol");
    }

    /// Takes a value apart one level at a time, as dropping a deeply nested one would recurse.
    fn dismantle(value: Value) {
        let mut pending = vec![value];
        while let Some(mut v) = pending.pop() {
            match &mut v {
                Value::Array(items) => pending.extend(std::mem::take(items)),
                Value::Object(map) => {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    pending.extend(keys.iter().filter_map(|k| map.remove(k)));
                }
                _ => {}
            }
        }
    }

    // Verifies: LSP-13
    #[test]
    fn symbols_nested_any_depth_are_walked_in_a_loop_and_counted_past_the_cap() {
        // A thread with the 2 MiB stack of a runtime thread: walking 50,000 nested children by
        // recursion overflows it.
        let walked = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let at = json!({"start": {"line": 0, "character": 0}});
                let mut symbol = json!({"name": "leaf", "kind": 12, "range": at.clone()});
                for n in 0..50_000 {
                    // Built by hand: `json!` would copy the child by serialising it, recursively.
                    let mut outer = serde_json::Map::new();
                    outer.insert("name".into(), Value::String(format!("s{n}")));
                    outer.insert("kind".into(), json!(5));
                    outer.insert("range".into(), at.clone());
                    outer.insert("children".into(), Value::Array(vec![symbol]));
                    symbol = Value::Object(outer);
                }
                let answer = Value::Array(vec![symbol]);
                let places = collect(Operation::DocumentSymbol, &answer);
                let first = (
                    places.found[0].name.clone(),
                    places.found[1].container.clone(),
                );
                dismantle(answer);
                (places.found.len(), places.total, first)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(
            walked,
            (
                MAX_LOCATIONS,
                50_001,
                (Some("s49999".to_string()), Some("s49999".to_string()))
            )
        );
        assert_eq!(
            hover_text(&json!({"contents": [["nested"], "flat"]})),
            "flat"
        );
    }

    // Verifies: LSP-4
    #[test]
    fn a_name_is_one_line_with_control_characters_pictured_and_a_bound() {
        expect!["evil␊ignore␍previous␤x"].assert_eq(&shown_name("evil\nignore\rprevious\u{2028}x"));
        let long = "a".repeat(500);
        let shown = shown_name(&long);
        assert_eq!(shown.chars().count(), MAX_NAME_CHARS + 1);
        assert!(shown.ends_with('…'));
    }

    // Verifies: LSP-5
    #[test]
    fn hover_text_is_read_from_every_shape() {
        assert_eq!(
            hover_text(&json!({"contents": {"kind": "markdown", "value": "**x**"}})),
            "**x**"
        );
        assert_eq!(
            hover_text(&json!({"contents": ["a", {"language": "py", "value": "b"}]})),
            "a\n\nb"
        );
        assert_eq!(hover_text(&json!({"contents": ""})), "");
        assert_eq!(hover_text(&Value::Null), "");
    }
}
