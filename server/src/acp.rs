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
use bravebot_core::kernel::trust::Scope;
use bravebot_core::record::Listed;
use bravebot_core::screen::{
    Answer, BoxFuture, Question, QuestionKind, Screen, StopReason, ToolStatus, Update,
};
use bravebot_core::session::Session;
use bravebot_core::settings::{Mode, ModelSettings, Source};
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
        // Records are kept under ~/.bravebot, so a session can be loaded, listed and resumed
        // when HOME names one; closing one is always possible.
        let records = setup::state_dir().is_some();
        let mut sessions =
            acp::SessionCapabilities::new().close(acp::SessionCloseCapabilities::new());
        if records {
            sessions = sessions
                .list(acp::SessionListCapabilities::new())
                .resume(acp::SessionResumeCapabilities::new());
        }
        acp::InitializeResponse::new(ProtocolVersion::V1)
            .auth_methods(vec![model_env_method()])
            .agent_capabilities(
                acp::AgentCapabilities::new()
                    .load_session(records)
                    .session_capabilities(sessions)
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

    /// Takes up a recorded session under its own id, in the directory it worked in; `cwd`, where
    /// the host names one, must be that directory (`session/resume`).
    async fn take_up(
        &self,
        id: &str,
        cwd: Option<&Path>,
        cx: &ConnectionTo<Client>,
    ) -> Result<Arc<Session>> {
        let state = setup::state_dir()
            .ok_or_else(|| invalid_params("HOME is not set: there is no ~/.bravebot"))?;
        let restored = {
            let id = id.to_string();
            tokio::task::spawn_blocking(move || state.load(&id))
                .await
                .map_err(|e| internal(format!("reading the record: {e}")))?
                .map_err(|e| invalid_params(e.to_string()))?
        };
        let worked_in = std::fs::canonicalize(&restored.cwd)
            .ok()
            .filter(|c| c.is_dir())
            .ok_or_else(|| {
                invalid_params(format!(
                    "session {id} worked in {}, which is not a directory now",
                    restored.cwd.display()
                ))
            })?;
        if let Some(cwd) = cwd
            && cwd != worked_in
        {
            return Err(invalid_params(format!(
                "session {id} worked in {}, not in {}",
                worked_in.display(),
                cwd.display()
            )));
        }
        let session = self.open(worked_in, setup::Opening::Resumed(id.to_string()), cx)?;
        session.restore(restored);
        Ok(self.keep(session))
    }

    async fn load_session(
        &self,
        request: acp::LoadSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<acp::LoadSessionResponse> {
        refuse_mcp_servers(&request.mcp_servers)?;
        let id = request.session_id.0.to_string();
        if self.session(&request.session_id).is_ok() {
            return Err(invalid_params(format!(
                "session {id} is open on this connection already"
            )));
        }
        let session = self.take_up(&id, None, cx).await?;
        let (mode, transcript) = {
            let st = session.state();
            (st.mode, st.conversation.transcript())
        };
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

    /// `session/resume`: the session goes on under its own id with its conversation, trust map
    /// and mode, and nothing is replayed (the host keeps its own transcript). A session open on
    /// this connection already is answered as it is, as the LSP front's resume answers.
    async fn resume_session(
        &self,
        request: acp::ResumeSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<acp::ResumeSessionResponse> {
        refuse_mcp_servers(&request.mcp_servers)?;
        if !request.additional_directories.is_empty() {
            return Err(invalid_params(
                "bravebot does not take additional directories from the editor: a place to work is added by the person, in the VS Code or Neovim front",
            ));
        }
        let cwd = workspace(&request.cwd)?;
        let id = request.session_id.0.to_string();
        let session = match self.session(&request.session_id) {
            Ok(open) if open.cwd == cwd => open,
            Ok(open) => {
                return Err(invalid_params(format!(
                    "session {id} works in {}, not in {}",
                    open.cwd.display(),
                    cwd.display()
                )));
            }
            Err(_) => self.take_up(&id, Some(&cwd), cx).await?,
        };
        let mode = session.state().mode;
        Ok(acp::ResumeSessionResponse::new().modes(mode_state(mode)))
    }

    /// `session/list`: the recorded sessions, newest written first, as the LSP front's
    /// `bravebot/session/list` gives them, a page at a time. A record that cannot be read is
    /// logged and passed over (SESS-4): ACP's list has no place for it.
    async fn list_sessions(
        &self,
        request: acp::ListSessionsRequest,
    ) -> Result<acp::ListSessionsResponse> {
        let state = setup::state_dir()
            .ok_or_else(|| invalid_params("HOME is not set: there is no ~/.bravebot"))?;
        let cwd = match &request.cwd {
            Some(c) if !c.is_absolute() => {
                return Err(invalid_params(format!(
                    "cwd {} is not an absolute path",
                    c.display()
                )));
            }
            Some(c) => Some(std::fs::canonicalize(c).unwrap_or_else(|_| c.clone())),
            None => None,
        };
        let (found, _unreadable) = tokio::task::spawn_blocking(move || state.list())
            .await
            .map_err(|e| internal(format!("listing sessions: {e}")))?;
        let found: Vec<Listed> = found
            .into_iter()
            .filter(|l| cwd.as_ref().is_none_or(|c| Path::new(&l.cwd) == c))
            .collect();
        let (shown, next) =
            list_page(found, request.cursor.as_deref(), LIST_PAGE).map_err(invalid_params)?;
        Ok(acp::ListSessionsResponse::new(
            shown
                .into_iter()
                .map(|l| {
                    acp::SessionInfo::new(l.id, l.cwd)
                        .title((!l.title.is_empty()).then_some(l.title))
                        .updated_at(iso8601(l.updated))
                })
                .collect(),
        )
        .next_cursor(next))
    }

    /// `session/close`: the session's turn, questions, jobs and language servers stop and the
    /// connection lets go of it; its record stays, to be listed and resumed.
    fn close_session(
        &self,
        request: acp::CloseSessionRequest,
    ) -> Result<acp::CloseSessionResponse> {
        let closed = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&*request.session_id.0);
        let session =
            closed.ok_or_else(|| invalid_params(format!("no session {}", request.session_id.0)))?;
        session.end();
        Ok(acp::CloseSessionResponse::new())
    }

    /// `authenticate` with the one method bravebot declares: it succeeds when the model
    /// endpoint is chosen (in the environment or the home settings) and its key is there.
    fn authenticate(&self, request: acp::AuthenticateRequest) -> Result<acp::AuthenticateResponse> {
        if *request.method_id.0 != *MODEL_ENV {
            return Err(invalid_params(format!(
                "unknown authentication method `{}`: bravebot offers `{MODEL_ENV}`",
                request.method_id.0
            )));
        }
        let settings = setup::model_settings();
        let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty());
        match model_unset(&settings, &set) {
            None => Ok(acp::AuthenticateResponse::new()),
            Some(missing) => Err(agent_client_protocol::Error::new(
                ErrorCode::AUTH_REQUIRED,
                missing,
            )),
        }
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

    /// `/new` (ACP-50): the session ends, its record, audit trail and checkpoints are kept under
    /// an id of their own, and a new session opens under the host's id in the same directory, so
    /// the host's thread goes on with a fresh conversation, trust map and context and the one
    /// before stays listed and resumable.
    async fn start_afresh(
        &self,
        host_id: &acp::SessionId,
        cx: &ConnectionTo<Client>,
    ) -> Result<String> {
        let old = self.session(host_id)?;
        old.end();
        let id = old.id.clone();
        let title = old.state().title.clone();
        let kept_as = match setup::state_dir() {
            Some(state) if title.is_some() => {
                let new_id = setup::new_session_id();
                let (from, to) = (id.clone(), new_id.clone());
                let moved = tokio::task::spawn_blocking(move || state.set_aside(&from, &to))
                    .await
                    .map_err(|e| internal(format!("keeping the session: {e}")))?;
                match moved {
                    Ok(moved) => moved.then_some(new_id),
                    Err(e) => {
                        // Nothing moved: the thread goes on with the session it had.
                        let back = self.take_up(&id, None, cx).await;
                        return Err(internal(format!(
                            "the session before could not be kept, so no new one was started: {e}{}",
                            if back.is_ok() {
                                ""
                            } else {
                                "; it could not be taken up again either, so resume it from the list of sessions"
                            }
                        )));
                    }
                }
            }
            _ => None,
        };
        // Under the host's id, but nothing is restored into it: a new session in all but name.
        let session = self.keep(self.open(old.cwd.clone(), setup::Opening::Resumed(id), cx)?);
        let mode = session.state().mode;
        let _ = cx.send_notification(acp::SessionNotification::new(
            host_id.clone(),
            acp::SessionUpdate::SessionInfoUpdate(
                acp::SessionInfoUpdate::new().title(None::<String>),
            ),
        ));
        let _ = cx.send_notification(acp::SessionNotification::new(
            host_id.clone(),
            acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.as_str())),
        ));
        Ok(match (kept_as, title) {
            (Some(kept), Some(title)) => format!(
                "Started a new session. The conversation before, \"{title}\", is kept as session {kept}: resume it from the editor's list of sessions."
            ),
            (None, Some(_)) => "Started a new session. The conversation before had no record to keep it by (records are kept under ~/.bravebot).".into(),
            (_, None) => "Started a new session. The one before had no conversation to keep.".into(),
        })
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

/// The one authentication method: bravebot holds no account, so what a host may check before a
/// session is that the model endpoint is chosen and its key is in the environment. It is of
/// ACP's `agent` type, which the ACP registry lists (it lists no agent without a method, and
/// takes `agent` and `terminal` only, not the draft `env_var`); its description names the
/// variables.
const MODEL_ENV: &str = "model-env";

fn model_env_method() -> acp::AuthMethod {
    acp::AuthMethod::Agent(
        acp::AuthMethodAgent::new(MODEL_ENV, "Model endpoint from the environment").description(
            "bravebot calls the model endpoint you choose. Set BRAVEBOT_MODEL_URL (the endpoint, e.g. https://api.openai.com/v1 or a local http://127.0.0.1:11434/v1) and BRAVEBOT_MODEL (the model's name) in the environment the editor starts bravebot with, with BRAVEBOT_API_KEY where the endpoint needs a key and BRAVEBOT_MODEL_API=anthropic for Anthropic's API; or put a `model` object in ~/.bravebot/settings.json.",
        ),
    )
}

/// What is missing for the model to be called, in words saying what to set, or `None` when the
/// endpoint is chosen and any key it is said to need is there. `set` says whether an environment
/// variable holds a value (never what).
fn model_unset(model: &ModelSettings, set: &dyn Fn(&str) -> bool) -> Option<String> {
    if model.source == Source::Default {
        return Some(format!(
            "no model endpoint is chosen, so bravebot would call {} ({}): set BRAVEBOT_MODEL_URL and BRAVEBOT_MODEL in the environment the editor starts bravebot with (BRAVEBOT_API_KEY where the endpoint needs a key, BRAVEBOT_MODEL_API=anthropic for Anthropic's API), or a `model` object in ~/.bravebot/settings.json",
            model.base_url, model.name
        ));
    }
    if set("BRAVEBOT_API_KEY") {
        return None;
    }
    match &model.api_key_env {
        Some(name) if !set(name) => Some(format!(
            "the settings say the model's key is in {name}, which is not set: set {name} (or BRAVEBOT_API_KEY) in the environment the editor starts bravebot with"
        )),
        _ => None,
    }
}

/// Sessions a `session/list` page holds at most.
const LIST_PAGE: usize = 50;

/// One page of `listed` (newest first) after `cursor`, and the cursor of the next page when
/// there is one. A cursor names the last session of the page before (`updated:id`), so a session
/// written between two pages neither repeats nor hides one; a cursor that is not of that form is
/// an error.
fn list_page(
    listed: Vec<Listed>,
    cursor: Option<&str>,
    size: usize,
) -> std::result::Result<(Vec<Listed>, Option<String>), String> {
    let after = match cursor {
        None => None,
        Some(c) => {
            let (updated, id) = c
                .split_once(':')
                .and_then(|(u, id)| Some((u.parse::<u64>().ok()?, id)))
                .ok_or_else(|| format!("cursor `{c}` is not one session/list gave"))?;
            Some((updated, id.to_string()))
        }
    };
    // The list is ordered by (updated, id), both descending: a page starts below the cursor.
    let mut rest: Vec<Listed> = listed
        .into_iter()
        .filter(|l| {
            after
                .as_ref()
                .is_none_or(|(updated, id)| (l.updated, l.id.as_str()) < (*updated, id.as_str()))
        })
        .collect();
    let more = rest.len() > size;
    rest.truncate(size);
    let next = rest
        .last()
        .filter(|_| more)
        .map(|last| format!("{}:{}", last.updated, last.id));
    Ok((rest, next))
}

/// Seconds since the epoch as an ISO 8601 time in UTC, as ACP's `updatedAt` is written.
fn iso8601(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (y, m, d) = setup::civil_from_days(days);
    let of_day = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
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

/// Tells the host the title a session taken up from its record already has (ACP-48).
fn tell_title(cx: &ConnectionTo<Client>, id: acp::SessionId, session: &Session) {
    let title = session.state().title.clone();
    if let Some(title) = title.filter(|t| !t.is_empty()) {
        let _ = cx.send_notification(acp::SessionNotification::new(
            id,
            acp::SessionUpdate::SessionInfoUpdate(acp::SessionInfoUpdate::new().title(title)),
        ));
    }
}

/// Tells the host the person's slash commands: the session's checkpoints and restoring one
/// (ACP-40), trusting a file and starting afresh (ACP-49, ACP-50).
fn offer_commands(cx: &ConnectionTo<Client>, id: acp::SessionId) {
    let commands = vec![
        acp::AvailableCommand::new(
            "trust",
            "Trust a file for this session, as naming it does: the agent reads it without a check",
        )
        .input(acp::AvailableCommandInput::Unstructured(
            acp::UnstructuredCommandInput::new("a path in the workspace, e.g. src/main.rs"),
        )),
        acp::AvailableCommand::new(
            "new",
            "Start a new session here; the conversation so far is kept as a session of its own, to list and resume",
        ),
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

/// A prompt of one line that is a slash command: its word and the rest of the line, trimmed.
/// A command is the whole prompt, so a longer text that mentions one is a prompt like any other.
fn command_word(text: &str) -> Option<(&str, &str)> {
    let line = text.trim();
    if line.contains('\n') {
        return None;
    }
    let command = line.strip_prefix('/')?;
    Some(match command.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (command, ""),
    })
}

/// `/trust <path>`: the person vouches for one file, as naming it in a prompt does (ACP-49). A
/// file whose bytes a check judged unsafe is trusted only when the person says they saw the
/// verdict (`--despite-check`), as the LSP front's `session/trust` asks for an acknowledgement.
async fn trust_command(session: &Session, rest: &str) -> String {
    let (despite_check, path) = match rest.strip_prefix("--despite-check") {
        Some(path) => (true, path.trim()),
        None => (false, rest),
    };
    if path.is_empty() {
        return "Say which file: /trust <path>, a path in the workspace (relative to it, or absolute).".into();
    }
    let path = Path::new(path);
    let absolute = bravebot_core::paths::absolute(&session.cwd, path);
    let shown = bravebot_core::paths::display_path(&session.cwd, &absolute);
    if absolute.is_dir() {
        return format!("{shown} is a directory: /trust takes one file.");
    }
    if !despite_check && let Some(held) = session.unsafe_now(path).await {
        session.state().audit.record(
            bravebot_core::kernel::audit::Gate::Trust,
            bravebot_core::kernel::audit::Decision::Refused,
            format!(
                "{} not trusted yet: a check judged its bytes {}; the verdict went to the person",
                held.shown,
                held.verdict.as_str()
            ),
        );
        session.flush_audit();
        return format!(
            "Not trusted: a check judged the bytes of {} {}. Its reasons hold content nobody vouched for, so this editor is not shown them. If you have read the file and trust it anyway: /trust --despite-check {}",
            held.shown,
            held.verdict.as_str(),
            held.shown
        );
    }
    session.trust_path(path, Scope::File);
    format!("Trusted {shown} for this session: the agent reads it without a check.")
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
        // The person's own slash commands (ACP-40, ACP-49, ACP-50): answered here, never a turn.
        // The prompt is what the person typed, so its words may decide this.
        let said = match command_word(&text) {
            Some(("new", "")) => Some(front.start_afresh(&request.session_id, &cx).await?),
            Some(("trust", rest)) => Some(trust_command(&session, rest).await),
            _ => checkpoint_command(&session, &text).await,
        };
        if let Some(said) = said {
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
    let (f7, f8, f9, f10) = (front.clone(), front.clone(), front.clone(), front.clone());
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
                    if loaded && let Ok(session) = front.session(&id) {
                        offer_commands(&cx, id.clone());
                        tell_title(&cx, id, &session);
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
        .on_receive_request(
            async move |request: acp::AuthenticateRequest,
                        responder: Responder<acp::AuthenticateResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(f7.authenticate(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::ListSessionsRequest,
                        responder: Responder<acp::ListSessionsResponse>,
                        _cx: ConnectionTo<Client>| {
                let front = f8.clone();
                // Reading the records is off the dispatch loop.
                tokio::spawn(async move {
                    let _ = responder.respond_with_result(front.list_sessions(request).await);
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::ResumeSessionRequest,
                        responder: Responder<acp::ResumeSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let front = f9.clone();
                tokio::spawn(async move {
                    let id = request.session_id.clone();
                    let answer = front.resume_session(request, &cx).await;
                    let resumed = answer.is_ok();
                    let _ = responder.respond_with_result(answer);
                    if resumed && let Ok(session) = front.session(&id) {
                        offer_commands(&cx, id.clone());
                        tell_title(&cx, id, &session);
                    }
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::CloseSessionRequest,
                        responder: Responder<acp::CloseSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(f10.close_session(request))
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
        "read_file" | "list_files" | "read_git" | "read_output" | "job_output" | "lsp"
        | "diagnostics" => acp::ToolKind::Read,
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
            // Said in the chat where it happened, in the driver's words (VET-23).
            Update::AutoVetting { on, source } => {
                self.send(acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(
                    acp::ContentBlock::Text(acp::TextContent::new(format!(
                        "\n\n[bravebot] {}\n\n",
                        bravebot_core::vetting::banner(bravebot_core::vetting::AutoVettingState {
                            on,
                            source
                        })
                    ))),
                )))
            }
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
            // The server's own words: an ACP host may show them as they are.
            Update::Notice { text } => self.add_content(text_block(text)),
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
            Update::Usage { role, call, meter } => {
                if let Some(update) = usage_update(role, call.is_some(), &meter) {
                    self.send(acp::SessionUpdate::UsageUpdate(update));
                }
            }
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

    fn titled(&self, title: &str) {
        self.send(acp::SessionUpdate::SessionInfoUpdate(
            acp::SessionInfoUpdate::new()
                .title(title)
                .updated_at(iso8601(bravebot_core::record::now())),
        ));
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

/// ACP's `usage_update` for one model call (ACP-41): the planner's context in use against its
/// limit, and the session's money where every reported call had a price. The turn's and session's
/// token totals, and whether this call's endpoint reported anything, ride in `_meta.bravebot`,
/// since the schema has no field for them. Sent only where both context numbers are known: where
/// an endpoint reported nothing, no number is made up (USAGE-2).
fn usage_update(
    role: &'static str,
    reported: bool,
    meter: &bravebot_core::screen::Meter,
) -> Option<acp::UsageUpdate> {
    let wire = crate::protocol::UsageMeter::from(meter);
    let (used, size) = (wire.context_tokens?, wire.context_limit?);
    let mut meta = acp::Meta::new();
    meta.insert(
        "bravebot".to_owned(),
        serde_json::json!({"role": role, "reported": reported, "meter": wire}),
    );
    Some(
        acp::UsageUpdate::new(used, size)
            .cost(
                wire.session_cost_usd()
                    .map(|usd| acp::Cost::new(usd, "USD")),
            )
            .meta(meta),
    )
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

    // Verifies: ACP-43
    #[test]
    fn the_model_env_method_says_what_is_missing_and_nothing_when_the_model_is_chosen() {
        let declared = serde_json::to_value(model_env_method()).unwrap_or_default();
        assert_eq!(declared["id"], "model-env");
        // No `type` is ACP's `agent`, the kind the registry lists.
        assert!(
            declared.get("type").is_none_or(|t| t == "agent"),
            "{declared}"
        );
        let mut model = bravebot_core::settings::Settings::default().model;
        let nothing_set = |_: &str| false;
        let missing = model_unset(&model, &nothing_set).unwrap_or_default();
        for name in [
            "BRAVEBOT_MODEL_URL",
            "BRAVEBOT_MODEL ",
            "BRAVEBOT_API_KEY",
            "settings.json",
        ] {
            assert!(missing.contains(name), "{missing}");
        }
        model.source = Source::Environment;
        assert_eq!(model_unset(&model, &nothing_set), None);
        model.source = Source::HomeFile;
        model.api_key_env = Some("EXAMPLE_KEY".into());
        let missing = model_unset(&model, &nothing_set).unwrap_or_default();
        assert!(missing.contains("EXAMPLE_KEY"), "{missing}");
        assert_eq!(model_unset(&model, &|name| name == "EXAMPLE_KEY"), None);
        assert_eq!(
            model_unset(&model, &|name| name == "BRAVEBOT_API_KEY"),
            None
        );
    }

    fn listed(id: &str, updated: u64) -> Listed {
        Listed {
            id: id.into(),
            title: format!("title of {id}"),
            created: 1,
            updated,
            mode: "ask".into(),
            model: "m".into(),
            cwd: "/w".into(),
        }
    }

    // Verifies: ACP-45
    #[test]
    fn a_list_is_paged_after_the_last_session_shown_and_a_foreign_cursor_is_refused() {
        // Newest first, as the state directory lists them; two share a time.
        let all = vec![
            listed("e", 50),
            listed("d", 40),
            listed("c", 40),
            listed("b", 30),
            listed("a", 20),
        ];
        let ids = |page: &[Listed]| page.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
        let (first, next) = list_page(all.clone(), None, 2).unwrap_or_default();
        assert_eq!(
            (ids(&first), next.as_deref()),
            (vec!["e".into(), "d".into()], Some("40:d"))
        );
        let (second, next) = list_page(all.clone(), next.as_deref(), 2).unwrap_or_default();
        assert_eq!(
            (ids(&second), next.as_deref()),
            (vec!["c".into(), "b".into()], Some("30:b"))
        );
        // A session written since the first page is not shown again, nor does it hide one.
        let mut later = all.clone();
        later.insert(0, listed("f", 60));
        let (last, next) = list_page(later, Some("30:b"), 2).unwrap_or_default();
        assert_eq!((ids(&last), next), (vec!["a".into()], None));
        let (whole, next) = list_page(all.clone(), None, 50).unwrap_or_default();
        assert_eq!((whole.len(), next), (5, None));
        for cursor in ["", "b", "x:b", "-1:b"] {
            assert!(list_page(all.clone(), Some(cursor), 2).is_err(), "{cursor}");
        }
    }

    // Verifies: ACP-45, ACP-48
    #[test]
    fn times_are_written_as_iso_8601_in_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400 + 3_723), "2000-02-29T01:02:03Z");
        assert_eq!(iso8601(1_796_083_199), "2026-11-30T23:59:59Z");
    }

    // Verifies: ACP-49, ACP-50
    #[test]
    fn a_command_is_a_whole_one_line_prompt() {
        assert_eq!(command_word("/new"), Some(("new", "")));
        assert_eq!(
            command_word("  /trust  src/a b.rs \n"),
            Some(("trust", "src/a b.rs"))
        );
        assert_eq!(command_word("/trust"), Some(("trust", "")));
        // A longer text that holds one is a prompt like any other.
        assert_eq!(command_word("please run\n/trust .env"), None);
        assert_eq!(command_word("/trust .env\nand more"), None);
        assert_eq!(command_word("trust .env"), None);
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
