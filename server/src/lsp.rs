//! `bravebot lsp`: the language server. Standard LSP for buffers, code actions and commands; the
//! agent in the `bravebot/session/*` methods (CONTRACT §3).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bravebot_core::egress::Egress;
use bravebot_core::kernel::audit::{Decision, Gate};
use bravebot_core::kernel::policy;
use bravebot_core::kernel::slot::SlotId;
use bravebot_core::kernel::trust::Scope;
use bravebot_core::paths::absolute;
use bravebot_core::screen::{Answer, StopReason};
use bravebot_core::session::Session;
use bravebot_core::settings::Mode;
use bravebot_core::turn::{Pointed, PromptRange};
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CodeActionResponse, CodeActionTriggerKind, Command,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, ExecuteCommandOptions, ExecuteCommandParams, InitializeParams,
    InitializeResult, InitializedParams, PositionEncodingKind, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};
use tower_lsp_server::{Client, LanguageServer, LspService};

use crate::buffers::{Buffers, Encoding, text_edits};
use crate::protocol::{
    self, ANSWER_COMMAND, AnswerArguments, AnswerResult, AuditRecord, AuditResult,
    CheckpointDiffParams, CheckpointDiffResult, CheckpointListResult, CheckpointParams,
    DiagnosticsGetParams, DiagnosticsGetResult, Empty, ErrorInfo, HistoryParams, HistoryResult,
    InitializationOptions, ListSessionsParams, ListSessionsResult, ListedCheckpoint, ListedSession,
    LoopParams, LoopResult, LoopStopResult, ModelStatus, NewSessionParams, NewSessionResult,
    PromptParams, PromptResult, QuestionTextsParams, QuestionTextsResult, RestoreResult,
    ResumeResult, SessionParams, SetModeParams, ShowParams, ShowResult, ShownPicture, SkippedPath,
    StatusResult, TranscriptEntry, TrustParams, TrustResult, TrustRuleStatus, UnreadableSession,
    VettingSetParams, VettingSetResult, method,
};
use crate::screen::{HunkVerdict, LspScreen, Questions};
use crate::setup;
use bravebot_core::files::{DiagnosticsScope, EditorDiagnostic, Files, NO_DIAGNOSTICS};
use bravebot_core::kernel::proposal::LineEdit;
use bravebot_core::record::RecordError;
use bravebot_core::screen::BoxFuture;
use tower_lsp_server::ls_types::{
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, TextDocumentEdit,
    WorkspaceEdit,
};

/// The editor as the agent's sessions see it: open buffers to read, and `workspace/applyEdit`
/// to change them so undo and dirty state stay the editor's.
struct Editor {
    buffers: Arc<Buffers>,
    client: Client,
    outbox: crate::transport::Outbox,
    /// The session this editor serves, named in each `bravebot/diagnostics/get`.
    session_id: Arc<OnceLock<String>>,
    /// The client declared `experimental.bravebot.diagnostics` (DIAG-5).
    diagnostics: bool,
}

/// How long the editor has to answer `bravebot/diagnostics/get` before the tool says it did not.
const DIAGNOSTICS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Most diagnostics read from one answer; the tool keeps fewer still (DIAG-7).
const DIAGNOSTICS_READ: usize = 1000;

impl Editor {
    async fn ask_diagnostics(
        &self,
        scope: DiagnosticsScope<'_>,
    ) -> std::result::Result<Vec<EditorDiagnostic>, String> {
        if !self.diagnostics {
            return Err(NO_DIAGNOSTICS.to_string());
        }
        let uris = match scope {
            DiagnosticsScope::Files(paths) => Some(
                paths
                    .iter()
                    .map(|p| bravebot_core::paths::file_uri(p))
                    .collect(),
            ),
            DiagnosticsScope::Workspace => None,
        };
        let params = DiagnosticsGetParams {
            session_id: self.session_id.get().cloned().unwrap_or_default(),
            uris,
        };
        let reply = self
            .outbox
            .request(method::DIAGNOSTICS_GET, &params)
            .ok_or("the request could not be sent")?;
        let result = tokio::time::timeout(DIAGNOSTICS_TIMEOUT, reply.result())
            .await
            .map_err(|_| "the editor did not answer within 10 seconds".to_string())?
            .ok_or("the editor answered with an error")?;
        let answer: DiagnosticsGetResult = serde_json::from_value(result)
            .map_err(|e| format!("the editor's answer could not be read: {e}"))?;
        // A URI that is not a file on disk (an unsaved buffer, a diff view) names nothing the
        // agent can reach, and is left out here.
        Ok(answer
            .items
            .into_iter()
            .take(DIAGNOSTICS_READ)
            .filter_map(|d| {
                let uri = d.uri.parse::<Uri>().ok()?;
                let path = uri_path(&uri)?;
                let code = match d.code {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                Some(EditorDiagnostic {
                    path,
                    start: (d.range.start.line, d.range.start.character),
                    end: (d.range.end.line, d.range.end.character),
                    severity: d.severity,
                    source: d.source,
                    code,
                    message: d.message,
                })
            })
            .collect())
    }
}

impl Files for Editor {
    fn buffer(&self, path: &Path) -> Option<(Arc<str>, i32)> {
        self.buffers.text(path)
    }

    fn version(&self, path: &Path) -> Option<i32> {
        self.buffers.version(path)
    }

    fn apply_edit<'a>(
        &'a self,
        path: &'a Path,
        version: i32,
        original: &'a str,
        edits: &'a [LineEdit],
    ) -> BoxFuture<'a, std::result::Result<(), String>> {
        Box::pin(async move {
            if self.buffers.version(path) != Some(version) {
                return Err("the buffer changed before the edit could be sent".to_string());
            }
            let uri = Uri::from_file_path(path)
                .ok_or_else(|| format!("{} has no file URI", path.display()))?;
            let edits = text_edits(original, edits, self.buffers.encoding());
            let edit = WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri,
                        version: Some(version),
                    },
                    edits: edits.into_iter().map(OneOf::Left).collect(),
                }])),
                ..Default::default()
            };
            match self.client.apply_edit(edit).await {
                Ok(r) if r.applied => Ok(()),
                Ok(r) => Err(format!(
                    "the editor did not apply it{}",
                    r.failure_reason
                        .map(|why| format!(": {why}"))
                        .unwrap_or_default()
                )),
                Err(e) => Err(format!("the editor did not answer the edit: {}", e.message)),
            }
        })
    }

    fn answers_diagnostics(&self) -> bool {
        self.diagnostics
    }

    fn diagnostics<'a>(
        &'a self,
        scope: DiagnosticsScope<'a>,
    ) -> BoxFuture<'a, std::result::Result<Vec<EditorDiagnostic>, String>> {
        Box::pin(self.ask_diagnostics(scope))
    }
}

/// What `initialize` told us about the client.
struct ClientInfo {
    options: InitializationOptions,
    permissions: bool,
    /// The client rebuilds an edit's texts from its hunks and its own buffer (WRITE-61).
    hunk_texts: bool,
    /// The client answers `bravebot/diagnostics/get` (DIAG-5).
    diagnostics: bool,
    root: Option<PathBuf>,
}

pub struct Backend {
    client: Client,
    outbox: crate::transport::Outbox,
    buffers: Arc<Buffers>,
    questions: Arc<Questions>,
    sessions: Arc<Mutex<HashMap<String, Arc<Session>>>>,
    egress: Arc<Egress>,
    info: OnceLock<ClientInfo>,
    shut_down: Arc<std::sync::atomic::AtomicBool>,
}

fn invalid_params(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

fn internal(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: message.into().into(),
        data: None,
    }
}

fn record_error(e: RecordError) -> Error {
    invalid_params(e.to_string())
}

/// The file a `file:` URI names. Any other scheme (`untitled:`, VS Code's `git:` view of an old
/// version, a notebook cell) is not a file on disk, and a path that is not absolute names none:
/// taking its text as the file's would hand reads the wrong text.
fn uri_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path()
        .map(|p| p.into_owned())
        .filter(|p| p.is_absolute())
}

impl Backend {
    fn session(&self, id: &str) -> Result<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| invalid_params(format!("no session {id}")))
    }

    /// Opens a session in `cwd` the way `opening` says, keeping its record where the session may.
    fn open(&self, cwd: PathBuf, opening: setup::Opening) -> Result<Session> {
        let info = self
            .info
            .get()
            .ok_or_else(|| invalid_params("initialize first"))?;
        let incognito = opening == setup::Opening::Incognito;
        // The settings a client may give: the model, and how long a question waits.
        let client_settings = json!({
            "model": info.options.model,
            "questions": info.options.questions,
            "vetting": info.options.vetting,
        });
        let session_id = Arc::new(OnceLock::new());
        let session = setup::open_session(
            cwd,
            opening,
            Some(&client_settings),
            self.egress.clone(),
            Arc::new(Editor {
                buffers: self.buffers.clone(),
                client: self.client.clone(),
                outbox: self.outbox.clone(),
                session_id: session_id.clone(),
                diagnostics: info.diagnostics,
            }),
            |id| {
                let _ = session_id.set(id.to_string());
                Arc::new(LspScreen::new(
                    id.to_string(),
                    self.client.clone(),
                    self.outbox.clone(),
                    self.questions.clone(),
                    info.permissions,
                    info.hunk_texts,
                    info.options.interactive.unwrap_or(true),
                ))
            },
            |_| {},
        );
        let session = session.keeping_watches();
        Ok(match (incognito, setup::state_dir()) {
            (true, _) => session.incognito(),
            (false, Some(state)) => session.keeping_records(state),
            (false, None) => session,
        })
    }

    /// Puts a session in the map, with a task turning its watches' firings into turns for as
    /// long as it lives.
    fn keep(&self, session: Session) -> Arc<Session> {
        let session = Arc::new(session);
        if let Some(mut firings) = session.take_firings() {
            let weak = Arc::downgrade(&session);
            tokio::spawn(async move {
                while let Some(first) = firings.recv().await {
                    let Some(paths) = bravebot_core::watch::settle(&mut firings, first).await
                    else {
                        break;
                    };
                    let Some(s) = weak.upgrade() else { break };
                    for path in paths {
                        if s.ended() {
                            return;
                        }
                        s.watch_fired(path).await;
                    }
                }
            });
        }
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.id.clone(), session.clone());
        session
    }

    async fn session_loop(&self, params: LoopParams) -> Result<LoopResult> {
        let session = self.session(&params.session_id)?;
        let l = session
            .begin_loop(params.prompt, params.interval_seconds)
            .map_err(|e| invalid_params(e.to_string()))?;
        let interval_seconds = l.interval_seconds;
        tokio::spawn(async move { session.run_loop(l, None).await });
        Ok(LoopResult { interval_seconds })
    }

    async fn session_loop_stop(&self, params: SessionParams) -> Result<LoopStopResult> {
        let session = self.session(&params.session_id)?;
        let counts = session
            .state()
            .looping
            .as_ref()
            .map(|l| (l.ticks, l.quiet_ticks));
        let stopped = session.stop_loop();
        let (ticks, quiet_ticks) = counts.unwrap_or((0, 0));
        Ok(LoopStopResult {
            stopped,
            ticks,
            quiet_ticks,
        })
    }

    fn state_dir(&self) -> Result<bravebot_core::record::StateDir> {
        setup::state_dir().ok_or_else(|| invalid_params("HOME is not set: there is no ~/.bravebot"))
    }

    async fn session_list(&self, params: ListSessionsParams) -> Result<ListSessionsResult> {
        let state = self.state_dir()?;
        let cwd = params
            .cwd
            .map(|c| std::fs::canonicalize(&c).unwrap_or_else(|_| PathBuf::from(c)));
        let (found, broken) = tokio::task::spawn_blocking(move || state.list())
            .await
            .map_err(|e| internal(format!("listing sessions: {e}")))?;
        Ok(ListSessionsResult {
            sessions: found
                .into_iter()
                .filter(|l| cwd.as_ref().is_none_or(|c| Path::new(&l.cwd) == c))
                .map(|l| ListedSession {
                    session_id: l.id,
                    title: l.title,
                    created: l.created,
                    updated: l.updated,
                    mode: l.mode,
                    model: l.model,
                    cwd: l.cwd,
                })
                .collect(),
            unreadable: broken
                .into_iter()
                .map(|(id, e)| UnreadableSession {
                    session_id: id,
                    error: e.to_string(),
                })
                .collect(),
        })
    }

    async fn session_resume(&self, params: SessionParams) -> Result<ResumeResult> {
        let id = params.session_id;
        let state = self.state_dir()?;
        let answer = |s: &Session| {
            let st = s.state();
            ResumeResult {
                session_id: s.id.clone(),
                title: st.title.clone().unwrap_or_default(),
                cwd: s.cwd.display().to_string(),
                mode: st.mode.as_str(),
                auto_vetting: s.auto_vetting.get().into(),
                transcript: st
                    .conversation
                    .transcript()
                    .into_iter()
                    .map(|(person, text)| TranscriptEntry {
                        role: if person { "person" } else { "agent" },
                        text,
                    })
                    .collect(),
            }
        };
        if let Ok(live) = self.session(&id) {
            return Ok(answer(&live));
        }
        let loaded = {
            let id = id.clone();
            tokio::task::spawn_blocking(move || state.load(&id))
                .await
                .map_err(|e| internal(format!("reading the record: {e}")))?
        };
        let restored = loaded.map_err(record_error)?;
        let cwd = std::fs::canonicalize(&restored.cwd)
            .ok()
            .filter(|c| c.is_dir())
            .ok_or_else(|| {
                invalid_params(format!(
                    "session {id} worked in {}, which is not a directory now",
                    restored.cwd.display()
                ))
            })?;
        let session = self.open(cwd, setup::Opening::Resumed(id))?;
        session.restore(restored);
        let result = answer(&session);
        self.keep(session);
        Ok(result)
    }

    async fn session_delete(&self, params: SessionParams) -> Result<Empty> {
        let id = params.session_id;
        let state = self.state_dir()?;
        state.session_dir(&id).map_err(record_error)?;
        // A session open here ends first, so no later turn writes its record again.
        let live = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        if let Some(live) = live {
            live.end();
        }
        tokio::task::spawn_blocking(move || state.delete(&id))
            .await
            .map_err(|e| internal(format!("deleting the record: {e}")))?
            .map_err(record_error)?;
        Ok(Empty {})
    }

    /// Ends a session the editor is done with: its turn, questions, jobs, watches, loop and
    /// language servers stop, and the server lets go of it. Its record stays, so it can be resumed.
    async fn session_end(&self, params: SessionParams) -> Result<Empty> {
        let live = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&params.session_id);
        let Some(live) = live else {
            return Err(invalid_params(format!("no session {}", params.session_id)));
        };
        live.end();
        Ok(Empty {})
    }

    async fn history_list(&self, params: HistoryParams) -> Result<HistoryResult> {
        let state = self.state_dir()?;
        let limit = params
            .limit
            .unwrap_or(100)
            .min(bravebot_core::record::HISTORY_KEPT);
        let entries = tokio::task::spawn_blocking(move || state.history(limit))
            .await
            .map_err(|e| internal(format!("reading the history: {e}")))?;
        Ok(HistoryResult {
            entries: entries
                .into_iter()
                .map(|e| protocol::HistoryEntry {
                    text: e.text,
                    time: e.time,
                    session_id: e.session_id,
                    cwd: e.cwd,
                })
                .collect(),
        })
    }

    async fn session_new(&self, params: NewSessionParams) -> Result<NewSessionResult> {
        let info = self
            .info
            .get()
            .ok_or_else(|| invalid_params("initialize first"))?;
        let base = info
            .root
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let cwd = match params.cwd {
            Some(c) => absolute(&base, Path::new(&c)),
            None => base,
        };
        let cwd = std::fs::canonicalize(&cwd)
            .map_err(|e| invalid_params(format!("cwd {}: {e}", cwd.display())))?;
        if !cwd.is_dir() {
            return Err(invalid_params(format!(
                "cwd {} is not a directory",
                cwd.display()
            )));
        }
        let opening = if params.incognito {
            setup::Opening::Incognito
        } else {
            setup::Opening::Fresh
        };
        let session = self.keep(self.open(cwd, opening)?);
        Ok(NewSessionResult {
            session_id: session.id.clone(),
            auto_vetting: session.auto_vetting.get().into(),
        })
    }

    async fn session_prompt(&self, params: PromptParams) -> Result<PromptResult> {
        let session = self.session(&params.session_id)?;
        let files = params.files.iter().map(PathBuf::from).collect();
        let mentions = params.mentions.iter().map(PathBuf::from).collect();
        let ranges = prompt_ranges(&params.ranges).map_err(invalid_params)?;
        let stop = session
            .prompt_pointing(params.text, files, Pointed { mentions, ranges })
            .await
            .map_err(|e| Error {
                code: ErrorCode::InvalidRequest,
                message: e.to_string().into(),
                data: None,
            })?;
        // A line that called `schedule_next` starts a self-paced loop over itself.
        if let Some((l, delay)) = session.take_started_loop() {
            let looping = session.clone();
            tokio::spawn(async move { looping.run_loop(l, Some(delay)).await });
        }
        let error = match &stop {
            StopReason::Error(message) => Some(ErrorInfo {
                message: message.clone(),
            }),
            _ => None,
        };
        Ok(PromptResult {
            stop_reason: stop.as_str(),
            error,
        })
    }

    async fn session_cancel(&self, params: SessionParams) {
        match self.session(&params.session_id) {
            Ok(s) => s.cancel(),
            Err(_) => tracing::warn!("cancel for unknown session {}", params.session_id),
        }
    }

    async fn session_status(&self, params: SessionParams) -> Result<StatusResult> {
        let s = self.session(&params.session_id)?;
        let state = s.state();
        let trust = s.trust.snapshot();
        let verdicts = s.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        let shown = |p: &Path| bravebot_core::paths::display_path(&s.cwd, p);
        let usage = protocol::UsageMeter::from(&s.usage_meter());
        Ok(StatusResult {
            usage,
            model: ModelStatus {
                api: s.settings.model.api.as_str(),
                base_url: s.settings.model.base_url.clone(),
                name: s.settings.model.name.clone(),
                source: s.settings.model.source.as_str(),
                context_tokens: s.context_budget().map(|(n, _)| n),
                context_source: s.context_budget().map(|(_, from)| from.as_str()),
            },
            mode: state.mode.as_str(),
            interactive: s.screen.interactive(),
            trust_rules: trust
                .rules()
                .map(|r| TrustRuleStatus {
                    path: shown(&r.path),
                    scope: match r.scope {
                        Scope::File => "file",
                        Scope::Directory => "directory",
                    },
                    origin: r.origin.as_str(),
                    trusted: r.origin.integrity()
                        == bravebot_core::kernel::label::Integrity::Trusted,
                })
                // A clean verdict covers the bytes it judged, not the path, so it is listed
                // beside the rules rather than as one: changed bytes are judged again.
                .chain(verdicts.passed().into_iter().map(|p| TrustRuleStatus {
                    path: shown(p),
                    scope: "file",
                    origin: "checker",
                    trusted: true,
                }))
                .collect(),
            checks: protocol::CheckStatus {
                enabled: s.settings.vetting_reads,
                made: verdicts.made,
                saved: verdicts.saved,
                budget_bytes: s.settings.check_max_bytes,
                model: {
                    let c = s.checker().config();
                    protocol::ModelStatus {
                        api: c.api.as_str(),
                        base_url: c.base_url.clone(),
                        name: c.name.clone(),
                        source: s
                            .settings
                            .check_model
                            .as_ref()
                            .map_or("planner", |m| m.source.as_str()),
                        // A check's request is one message of bounded size; no budget is kept.
                        context_tokens: None,
                        context_source: None,
                    }
                },
                store: s
                    .verdict_store
                    .as_ref()
                    .map(|_| bravebot_core::verdict_store::SHOWN),
                timeout_seconds: s.settings.check_timeout_seconds,
            },
            added_directories: state
                .added_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect(),
            standing_edits: state.approvals.edited_files().map(shown).collect(),
            remembered_runs: state
                .approvals
                .allowed_plans()
                .map(str::to_string)
                .collect(),
            auto_vetting: json!(protocol::AutoVettingStatus::from(s.auto_vetting.get())),
            question_timeout_seconds: s.settings.question_timeout_seconds,
            confinement: {
                let started = s.mcp.running().len();
                format!(
                    "{}; {}; {}",
                    crate::doctor::confinement(),
                    match started {
                        0 => "this session confines no MCP server: it started none".to_string(),
                        n => format!("this session confines the {n} MCP server(s) it started"),
                    },
                    crate::doctor::confined_runs(
                        s.settings.run_confined,
                        state.approvals.confined_allowed()
                    )
                )
            },
            mcp_servers: s
                .mcp
                .status()
                .into_iter()
                .map(|m| serde_json::to_value(m).unwrap_or_default())
                .collect(),
            language_servers: s
                .language_servers
                .status()
                .into_iter()
                .map(|l| {
                    json!({"language": l.language, "server": l.server, "pid": l.pid, "state": l.state, "confined": l.confined})
                })
                .collect(),
            jobs: state
                .jobs
                .iter()
                .map(|j| {
                    json!({
                        "name": j.name,
                        "command": j.line,
                        "state": if j.ended().is_some() { "ended" } else { "running" },
                        "seconds": j.started.elapsed().as_secs(),
                    })
                })
                .collect(),
            watches: state
                .watches
                .status()
                .into_iter()
                .map(|w| json!({"path": w.path, "fired": w.fired}))
                .collect(),
            delegates: state
                .delegation
                .tree()
                .map(|t| t.delegates())
                .unwrap_or_default()
                .into_iter()
                .map(|d| json!({"number": d.number, "kind": d.name, "depth": d.depth, "state": d.state}))
                .collect(),
            audit_log: s.audit_log().map(|p| p.display().to_string()),
        })
    }

    async fn checkpoint_list(&self, params: SessionParams) -> Result<CheckpointListResult> {
        let s = self.session(&params.session_id)?;
        Ok(CheckpointListResult {
            checkpoints: s
                .checkpoints
                .list()
                .into_iter()
                .map(|c| ListedCheckpoint {
                    removes: s
                        .checkpoints
                        .plan(&c.id)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|p| p.then == bravebot_core::checkpoint::Image::Absent)
                        .map(|p| bravebot_core::paths::display_path(&s.cwd, &p.path))
                        .collect(),
                    checkpoint_id: c.id,
                    created_at: c.created,
                    title: c.title,
                    kind: c.kind.as_str(),
                    files: c
                        .changes
                        .iter()
                        .map(|ch| bravebot_core::paths::display_path(&s.cwd, &ch.path))
                        .collect(),
                })
                .collect(),
        })
    }

    async fn checkpoint_diff(&self, params: CheckpointDiffParams) -> Result<CheckpointDiffResult> {
        let s = self.session(&params.session_id)?;
        let compared = s
            .compare(&params.checkpoint_id, Path::new(&params.path))
            .await
            .map_err(|e| invalid_params(e.to_string()))?;
        Ok(CheckpointDiffResult {
            path: params.path,
            then: compared.then,
            now: compared.now,
            diff: compared.diff,
        })
    }

    async fn checkpoint_restore(&self, params: CheckpointParams) -> Result<RestoreResult> {
        let s = self.session(&params.session_id)?;
        let done = s
            .restore_checkpoint(&params.checkpoint_id)
            .await
            .map_err(|e| invalid_params(e.to_string()))?;
        Ok(RestoreResult {
            restored: done.restored,
            removed: done.removed,
            skipped: done
                .skipped
                .into_iter()
                .map(|(path, reason)| SkippedPath { path, reason })
                .collect(),
            undo_checkpoint_id: done.undo,
        })
    }

    async fn session_audit(&self, params: SessionParams) -> Result<AuditResult> {
        let s = self.session(&params.session_id)?;
        Ok(AuditResult {
            records: s
                .audit_records()
                .into_iter()
                .map(|r| AuditRecord {
                    gate: r.gate.as_str(),
                    decision: r.decision.as_str(),
                    detail: r.detail,
                    at: r
                        .at
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                        .unwrap_or(0),
                })
                .collect(),
        })
    }

    async fn session_set_mode(&self, params: SetModeParams) -> Result<Empty> {
        let s = self.session(&params.session_id)?;
        let mode = Mode::parse(&params.mode).ok_or_else(|| {
            invalid_params(format!(
                "unknown mode `{}`: ask, acceptEdits or plan",
                params.mode
            ))
        })?;
        s.set_mode(mode);
        Ok(Empty {})
    }

    /// The whole texts of an edit or write question still waiting, for a client that does not
    /// hold the original (WRITE-61).
    /// The person's gesture turning auto-vetting on or off (VET-24): the choice is recorded in
    /// `~/.bravebot/vetting`, then reaches the open sessions at once, each saying so in its chat.
    /// Off reaches every one of them, an incognito session's too (labels only degrade); on reaches
    /// only those that read the recorded choice, which an incognito session does not.
    async fn vetting_set(&self, params: VettingSetParams) -> Result<VettingSetResult> {
        let state = self.state_dir()?;
        let record = state.vetting_path().display().to_string();
        let on = params.on;
        tokio::task::spawn_blocking(move || bravebot_core::vetting::write_record(&state, on))
            .await
            .map_err(|e| internal(e.to_string()))?
            .map_err(record_error)?;
        let open: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut reached = Vec::new();
        for s in open {
            if s.ended() || (on && s.vetting_record().is_none()) {
                continue;
            }
            s.set_auto_vetting(on, bravebot_core::vetting::RECORD_SHOWN);
            reached.push(s.id.clone());
        }
        reached.sort();
        Ok(VettingSetResult {
            on,
            record,
            sessions: reached,
        })
    }

    async fn question_texts(&self, params: QuestionTextsParams) -> Result<QuestionTextsResult> {
        let (original, proposed) = self.questions.texts(&params.question_id).ok_or_else(|| {
            invalid_params(
                "no edit or write question with that id is waiting: it was answered, withdrawn or never put",
            )
        })?;
        Ok(QuestionTextsResult { original, proposed })
    }

    /// A slot's bytes for the person's screen (the editor draws them inside its untrusted
    /// margin). Nothing here reaches a planner request; the audit trail records the showing.
    async fn session_show(&self, params: ShowParams) -> Result<ShowResult> {
        let s = self.session(&params.session_id)?;
        let id = SlotId::parse(&params.reference).ok_or_else(|| {
            invalid_params(format!(
                "`{}` is not a reference: write it as ref:N",
                params.reference
            ))
        })?;
        let found = {
            let state = s.state();
            state.quarantine.get(id).map(|slot| {
                // The screen is one of the places untrusted bytes may go: a server's picture as
                // it sent it, anything else as text.
                let picture = slot.media_type().map(|media_type| ShownPicture {
                    media_type: policy::to_screen(media_type).clone(),
                    data: String::from_utf8_lossy(policy::to_screen::<Vec<u8>>(slot.content()))
                        .into_owned(),
                });
                let text = match picture {
                    Some(_) => String::new(),
                    None => policy::to_screen(&policy::text_for_display(slot.content())).clone(),
                };
                (slot.reference.clone(), text, picture)
            })
        };
        let Some((reference, text, picture)) = found else {
            return Err(invalid_params(format!(
                "this session holds no {id}: the chat names the references it has"
            )));
        };
        s.state().audit.record(
            Gate::Present,
            Decision::Allowed,
            format!(
                "{id} ({}) shown on the person's screen only",
                reference.label
            ),
        );
        Ok(ShowResult {
            reference: id.to_string(),
            origin: reference.origin.to_string(),
            label: reference.label.to_string(),
            lines: reference.lines,
            bytes: reference.bytes,
            text,
            picture,
        })
    }

    async fn session_trust(&self, params: TrustParams) -> Result<TrustResult> {
        let s = self.session(&params.session_id)?;
        let scope = match params.scope.as_str() {
            "file" => Scope::File,
            "directory" => Scope::Directory,
            other => {
                return Err(invalid_params(format!(
                    "unknown scope `{other}`: file or directory"
                )));
            }
        };
        if params.deny {
            s.deny_path(Path::new(&params.path), scope);
            return Ok(TrustResult::default());
        }
        // A vouch for a file a check judged unsafe carries the verdict: unacknowledged, it is
        // answered with the verdict for the person to see, and nothing is trusted (PROTO-29).
        if scope == Scope::File
            && !params.acknowledge_verdict
            && let Some(held) = s.unsafe_now(Path::new(&params.path)).await
        {
            s.state().audit.record(
                Gate::Trust,
                Decision::Refused,
                format!(
                    "{} not trusted yet: a check judged its bytes {}; the verdict went to the person",
                    held.shown,
                    held.verdict.as_str()
                ),
            );
            s.flush_audit();
            return Ok(TrustResult {
                trusted: Some(false),
                verdict: Some(held.verdict.as_str()),
                // The screen is one of the places untrusted bytes may go.
                verdict_text: held.reasons.as_ref().map(|r| policy::to_screen(r).clone()),
                path: Some(held.shown),
            });
        }
        s.trust_path(Path::new(&params.path), scope);
        Ok(TrustResult::default())
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let options: InitializationOptions = match params.initialization_options.clone() {
            Some(v) => serde_json::from_value(v)
                .map_err(|e| invalid_params(format!("initializationOptions: {e}")))?,
            None => InitializationOptions::default(),
        };
        let experimental = params
            .capabilities
            .experimental
            .clone()
            .unwrap_or(Value::Null);
        let permissions = experimental
            .pointer("/bravebot/permissions")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let hunk_texts = experimental
            .pointer("/bravebot/hunkTexts")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let diagnostics = experimental
            .pointer("/bravebot/diagnostics")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|encs| encs.contains(&PositionEncodingKind::UTF8));
        let encoding = if utf8 {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        self.buffers.set_encoding(encoding);
        #[allow(deprecated)]
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| uri_path(&f.uri))
            .or_else(|| params.root_uri.as_ref().and_then(uri_path));
        let _ = self.info.set(ClientInfo {
            options,
            permissions,
            hunk_texts,
            diagnostics,
            root,
        });
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(if utf8 {
                    PositionEncodingKind::UTF8
                } else {
                    PositionEncodingKind::UTF16
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![ANSWER_COMMAND.to_string()],
                    ..Default::default()
                }),
                experimental: Some(
                    json!({"bravebot": {"protocolVersion": protocol::PROTOCOL_VERSION}}),
                ),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "bravebot".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {}

    async fn shutdown(&self) -> Result<()> {
        self.shut_down
            .store(true, std::sync::atomic::Ordering::SeqCst);
        stop_everything(&self.sessions, &self.questions);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        if let Some(path) = uri_path(&doc.uri) {
            self.buffers.open(path, &doc.text, doc.version);
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let Some(path) = uri_path(&params.text_document.uri) else {
            return;
        };
        for change in params.content_changes {
            if let Err(e) = self.buffers.change(
                &path,
                change.range,
                &change.text,
                params.text_document.version,
            ) {
                // The buffer is out of step with the editor: forget it so reads fall back to
                // disk rather than to wrong text, and say so.
                tracing::warn!("{e}; dropping the buffer of {}", path.display());
                self.buffers.close(&path);
                return;
            }
        }
    }

    async fn did_save(&self, _: DidSaveTextDocumentParams) {}

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Some(path) = uri_path(&params.text_document.uri) {
            self.buffers.close(&path);
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        // An answer is a person's act. An editor asks for code actions unprompted too (a light
        // bulb on every cursor move, `editor.codeActionsOnSave`, which a checkout's
        // `.vscode/settings.json` can set and which applies what it is given), so answering
        // actions are offered only when the request says a person invoked it. A request that
        // says nothing about its trigger is taken as automatic: VS Code and Neovim both say
        // `Invoked` when the person asks.
        if params.context.trigger_kind != Some(CodeActionTriggerKind::INVOKED) {
            return Ok(Some(Vec::new()));
        }
        let uri = params.text_document.uri.to_string();
        let (first, last) = (
            params.range.start.line as usize,
            params.range.end.line as usize,
        );
        let mut actions = Vec::new();
        for q in self.questions.for_uri(&uri) {
            let answer = |title: String, arguments: Value| {
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    command: Some(Command {
                        title,
                        command: ANSWER_COMMAND.to_string(),
                        arguments: Some(vec![arguments]),
                    }),
                    ..Default::default()
                })
            };
            // Per hunk, on the lines it changes (an insertion sits on the line it goes before).
            for (index, h) in q.hunks.iter().enumerate() {
                let end = h.old_start + h.old_lines.max(1) - 1;
                if first <= end && h.old_start <= last {
                    for (verdict, name) in [
                        ("accept", "Accept this hunk"),
                        ("reject", "Reject this hunk"),
                    ] {
                        actions.push(answer(
                            format!("{name} ({} of {})", index + 1, q.hunks.len()),
                            json!({"questionId": q.question_id, "hunk": index, "verdict": verdict}),
                        ));
                    }
                }
            }
            for o in &q.options {
                let title = if q.hunks.is_empty() {
                    format!("{} ({})", o.name, q.title)
                } else {
                    o.name.clone()
                };
                actions.push(answer(
                    title,
                    json!({"questionId": q.question_id, "optionId": o.option_id}),
                ));
            }
        }
        Ok(Some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        if params.command != ANSWER_COMMAND {
            return Err(invalid_params(format!(
                "unknown command `{}`",
                params.command
            )));
        }
        let args: AnswerArguments = params
            .arguments
            .into_iter()
            .next()
            .and_then(|a| serde_json::from_value(a).ok())
            .ok_or_else(|| invalid_params("bravebot.answer takes [{ questionId, optionId }]"))?;
        let not_pending = "the question is not pending: it was answered already or withdrawn";
        let result = match (args.option_id, args.hunk, args.verdict.as_deref()) {
            (Some(option_id), None, _) => {
                let answer = Answer::Selected {
                    option_id,
                    text: args.text,
                    accepted_hunks: args.accepted_hunks,
                    edited_text: args.edited_text,
                };
                let delivered = self.questions.answer(&args.question_id, answer);
                AnswerResult {
                    accepted: delivered,
                    reason: (!delivered).then_some(not_pending),
                }
            }
            (None, Some(hunk), Some(verdict @ ("accept" | "reject"))) => {
                match self
                    .questions
                    .hunk_verdict(&args.question_id, hunk, verdict == "accept")
                {
                    HunkVerdict::Recorded => AnswerResult {
                        accepted: true,
                        reason: Some("recorded; other hunks still need a verdict"),
                    },
                    HunkVerdict::Answered => AnswerResult {
                        accepted: true,
                        reason: None,
                    },
                    HunkVerdict::NotPending => AnswerResult {
                        accepted: false,
                        reason: Some("no such pending question or hunk"),
                    },
                }
            }
            _ => {
                return Err(invalid_params(
                    "bravebot.answer takes [{ questionId, optionId }] or [{ questionId, hunk, verdict: accept|reject }]",
                ));
            }
        };
        Ok(Some(serde_json::to_value(result).unwrap_or(Value::Null)))
    }
}

/// Serves the protocol on stdin/stdout until the client exits or the input ends. Returns whether
/// a `shutdown` request came before the end (LSP's exit code rule).
pub async fn serve(egress: Arc<Egress>) -> bool {
    let questions = Arc::new(Questions::default());
    let sessions: Arc<Mutex<HashMap<String, Arc<Session>>>> = Arc::default();
    let shut_down = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (outbox, outbox_rx) = crate::transport::outbox();
    let (service, socket) = {
        let (questions, sessions, shut_down, outbox) = (
            questions.clone(),
            sessions.clone(),
            shut_down.clone(),
            outbox.clone(),
        );
        LspService::build(move |client| Backend {
            client,
            outbox,
            buffers: Arc::new(Buffers::default()),
            questions,
            sessions,
            egress,
            info: OnceLock::new(),
            shut_down,
        })
        .custom_method(method::SESSION_NEW, Backend::session_new)
        .custom_method(method::SESSION_PROMPT, Backend::session_prompt)
        .custom_method(method::SESSION_CANCEL, Backend::session_cancel)
        .custom_method(method::SESSION_STATUS, Backend::session_status)
        .custom_method(method::SESSION_AUDIT, Backend::session_audit)
        .custom_method(method::CHECKPOINT_LIST, Backend::checkpoint_list)
        .custom_method(method::CHECKPOINT_DIFF, Backend::checkpoint_diff)
        .custom_method(method::CHECKPOINT_RESTORE, Backend::checkpoint_restore)
        .custom_method(method::SESSION_SET_MODE, Backend::session_set_mode)
        .custom_method(method::SESSION_TRUST, Backend::session_trust)
        .custom_method(method::SESSION_LIST, Backend::session_list)
        .custom_method(method::SESSION_RESUME, Backend::session_resume)
        .custom_method(method::SESSION_DELETE, Backend::session_delete)
        .custom_method(method::HISTORY_LIST, Backend::history_list)
        .custom_method(method::SESSION_LOOP, Backend::session_loop)
        .custom_method(method::SESSION_LOOP_STOP, Backend::session_loop_stop)
        .custom_method(method::SESSION_SHOW, Backend::session_show)
        .custom_method(method::SESSION_END, Backend::session_end)
        .custom_method(method::QUESTION_TEXTS, Backend::question_texts)
        .custom_method(method::VETTING_SET, Backend::vetting_set)
        .finish()
    };
    // The end of the input refuses every question and ends every turn: nobody is left to answer.
    let on_end = move || stop_everything(&sessions, &questions);
    crate::transport::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
        (outbox, outbox_rx),
        service,
        socket,
        on_end,
    )
    .await;
    shut_down.load(std::sync::atomic::Ordering::SeqCst)
}

fn stop_everything(sessions: &Mutex<HashMap<String, Arc<Session>>>, questions: &Questions) {
    for s in sessions.lock().unwrap_or_else(|p| p.into_inner()).values() {
        s.end();
    }
    questions.refuse_all();
}

/// Most ranges one prompt may point at: a review comment names one; the bound keeps a client's
/// mistake from flooding the planner's context with places.
const MOST_PROMPT_RANGES: usize = 64;

/// A prompt's `ranges` as the driver takes them, or why they are refused: a range is 1-based, its
/// end not before its start, in a file named by a path (REVIEW-3).
fn prompt_ranges(
    ranges: &[crate::protocol::PromptRange],
) -> std::result::Result<Vec<PromptRange>, String> {
    if ranges.len() > MOST_PROMPT_RANGES {
        return Err(format!(
            "a prompt may point at {MOST_PROMPT_RANGES} ranges at most, not {}",
            ranges.len()
        ));
    }
    ranges
        .iter()
        .map(|r| {
            if r.path.trim().is_empty() {
                return Err("a range names no file (path is empty)".to_string());
            }
            if r.start_line == 0 || r.end_line < r.start_line {
                return Err(format!(
                    "the range {}-{} of {} is not a range of lines (1-based, the end not before the start)",
                    r.start_line, r.end_line, r.path
                ));
            }
            Ok(PromptRange {
                path: PathBuf::from(&r.path),
                start_line: r.start_line,
                end_line: r.end_line,
            })
        })
        .collect()
}
