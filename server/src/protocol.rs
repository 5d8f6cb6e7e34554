//! The wire types of the `bravebot/*` methods, declared once (CONTRACT §3).
//!
//! These types hold no logic: they derive serde, use camelCase fields and tag unions with
//! `"kind"`. Conversion from core types happens above, in `screen.rs` and `lsp.rs`; core
//! types never derive serde for the wire.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const PROTOCOL_VERSION: u32 = 1;
pub const ANSWER_COMMAND: &str = "bravebot.answer";

pub mod method {
    pub const SESSION_NEW: &str = "bravebot/session/new";
    pub const SESSION_PROMPT: &str = "bravebot/session/prompt";
    pub const SESSION_CANCEL: &str = "bravebot/session/cancel";
    pub const SESSION_UPDATE: &str = "bravebot/session/update";
    pub const SESSION_REQUEST_PERMISSION: &str = "bravebot/session/requestPermission";
    pub const SESSION_STATUS: &str = "bravebot/session/status";
    pub const SESSION_AUDIT: &str = "bravebot/session/audit";
    pub const SESSION_SET_MODE: &str = "bravebot/session/setMode";
    pub const SESSION_TRUST: &str = "bravebot/session/trust";
    pub const SESSION_LIST: &str = "bravebot/session/list";
    pub const SESSION_RESUME: &str = "bravebot/session/resume";
    pub const SESSION_DELETE: &str = "bravebot/session/delete";
    pub const HISTORY_LIST: &str = "bravebot/history/list";
    pub const SESSION_LOOP: &str = "bravebot/session/loop";
    pub const SESSION_LOOP_STOP: &str = "bravebot/session/loop/stop";
    pub const SESSION_SHOW: &str = "bravebot/session/show";
    pub const SESSION_END: &str = "bravebot/session/end";
    pub const QUESTION_TEXTS: &str = "bravebot/question/texts";
    pub const VETTING_SET: &str = "bravebot/vetting/set";
    pub const CHECKPOINT_LIST: &str = "bravebot/checkpoint/list";
    pub const CHECKPOINT_DIFF: &str = "bravebot/checkpoint/diff";
    pub const CHECKPOINT_RESTORE: &str = "bravebot/checkpoint/restore";
    pub const DIAGNOSTICS_GET: &str = "bravebot/diagnostics/get";
}

/// `initializationOptions`, every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InitializationOptions {
    pub model: Option<Value>,
    /// `{ timeoutSeconds }`: how long a question waits for an answer (ATTN-3).
    pub questions: Option<Value>,
    /// `{ model }`: the check's own model (CHECK-12).
    pub vetting: Option<Value>,
    pub interactive: Option<bool>,
    pub client_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NewSessionParams {
    pub cwd: Option<String>,
    /// Leave nothing behind: no record, no history line, no language-server cache, the audit
    /// trail in memory only, and the recorded vetting choice not read.
    pub incognito: bool,
}

/// `bravebot/session/list`: every recorded session, or those of one working directory.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListSessionsParams {
    pub cwd: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsResult {
    /// Newest first.
    pub sessions: Vec<ListedSession>,
    /// Records that could not be read, each with why; they are not in `sessions`.
    pub unreadable: Vec<UnreadableSession>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedSession {
    pub session_id: String,
    pub title: String,
    /// Seconds since the epoch.
    pub created: u64,
    pub updated: u64,
    pub mode: String,
    pub model: String,
    pub cwd: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableSession {
    pub session_id: String,
    pub error: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeResult {
    pub session_id: String,
    pub title: String,
    pub cwd: String,
    pub mode: &'static str,
    /// As in `bravebot/session/new`: the banner at the top of the chat (VET-23).
    pub auto_vetting: AutoVettingStatus,
    /// The conversation to draw again: the person's prompts and the agent's replies, in order.
    pub transcript: Vec<TranscriptEntry>,
}

#[derive(Debug, Serialize)]
pub struct TranscriptEntry {
    /// `person` or `agent`.
    pub role: &'static str,
    pub text: String,
}

/// `bravebot/session/loop`: send `prompt` now and again, every `intervalSeconds`, or at the pace
/// the planner asks for with `schedule_next` when no interval is given.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopParams {
    pub session_id: String,
    pub prompt: String,
    #[serde(default)]
    pub interval_seconds: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopResult {
    /// The interval the loop keeps, held between the minimum and an hour; absent when self-paced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopStopResult {
    /// Whether a loop was running.
    pub stopped: bool,
    pub ticks: u64,
    pub quiet_ticks: u64,
}

/// `bravebot/history/list`: the prompts submitted across sessions, newest first.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HistoryParams {
    /// At most this many (100 when absent, 1000 at most).
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct HistoryResult {
    pub entries: Vec<HistoryEntry>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub text: String,
    pub time: u64,
    pub session_id: String,
    pub cwd: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionResult {
    pub session_id: String,
    /// Whether auto-vetting is on and which switch said so, for the banner at the top of the chat
    /// (VET-23).
    pub auto_vetting: AutoVettingStatus,
}

/// Auto-vetting as a session stands: `source` is `--vet`, `~/.bravebot/vetting`,
/// `~/.bravebot/settings.json` or `default`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct AutoVettingStatus {
    pub on: bool,
    pub source: &'static str,
}

impl From<bravebot_core::vetting::AutoVettingState> for AutoVettingStatus {
    fn from(state: bravebot_core::vetting::AutoVettingState) -> AutoVettingStatus {
        AutoVettingStatus {
            on: state.on,
            source: state.source,
        }
    }
}

/// `bravebot/vetting/set`: the person's gesture turning auto-vetting on or off (VET-24).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VettingSetParams {
    pub on: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VettingSetResult {
    pub on: bool,
    /// Where the choice was recorded.
    pub record: String,
    /// The ids of the open sessions the change reached.
    pub sessions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    pub session_id: String,
    pub text: String,
    #[serde(default)]
    pub files: Vec<String>,
    /// Files the person pointed at (`@`-mentions): told to the agent, never vouched for.
    #[serde(default)]
    pub mentions: Vec<String>,
    /// Ranges of lines the person's words are about (a review comment): told to the agent by
    /// place only, never vouched for (REVIEW-3).
    #[serde(default)]
    pub ranges: Vec<PromptRange>,
}

/// A range of lines in a file, 1-based with both ends included: where a review comment points.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRange {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResult {
    pub stop_reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
}

#[derive(Debug, Serialize)]
pub struct ErrorInfo {
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionParams {
    pub session_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModeParams {
    pub session_id: String,
    pub mode: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustParams {
    pub session_id: String,
    pub path: String,
    pub scope: String,
    /// `true`: the person says do not look here, a deny rule rather than a trust (TRUST-7).
    #[serde(default)]
    pub deny: bool,
    /// `true`: the person was shown the check's unsafe verdict on the file and trusts it anyway
    /// (PROTO-29). Without it, a file a check judged unsafe is answered with the verdict instead.
    #[serde(default)]
    pub acknowledge_verdict: bool,
}

/// What `session/trust` answers: `{}` when the gesture was made; for a file whose current bytes a
/// check judged unsafe, sent without `acknowledgeVerdict`, `trusted: false` with the verdict and
/// the check's reasons (untrusted) for the editor to show before asking again (PROTO-29).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_text: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShowParams {
    pub session_id: String,
    #[serde(rename = "ref")]
    pub reference: String,
}

/// A quarantined slot's bytes, for the person's screen only: the planner is never sent this.
#[derive(Debug, Serialize)]
pub struct ShowResult {
    #[serde(rename = "ref")]
    pub reference: String,
    pub origin: String,
    pub label: String,
    pub lines: usize,
    pub bytes: usize,
    /// The bytes as text (what is not UTF-8 replaced), untrusted: drawn inside the margin.
    /// Empty for a picture.
    pub text: String,
    /// A picture an MCP server sent, for the person's screen only (MCP-31).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture: Option<ShownPicture>,
}

/// A picture as the server sent it: the media type it claimed and its base64, both untrusted.
/// An editor draws it only when `mediaType` is one of the picture types it allows.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShownPicture {
    pub media_type: String,
    pub data: String,
}

#[derive(Debug, Serialize)]
pub struct Empty {}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateNotification {
    pub session_id: String,
    pub update: SessionUpdate,
}

#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SessionUpdate {
    AgentText {
        delta: String,
    },
    /// Auto-vetting turned on or off while the session runs (VET-23).
    AutoVetting {
        on: bool,
        source: &'static str,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        call_id: String,
        tool: String,
        why: String,
        routing: Value,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        call_id: String,
        status: &'static str,
        summary: String,
    },
    Quarantined {
        #[serde(rename = "ref")]
        reference: String,
        origin: String,
        lines: usize,
        bytes: usize,
        label: String,
        /// `true` for a picture an MCP server sent, which `session/show` gives as a picture
        /// (MCP-31); absent otherwise. Told by where the slot came from, never by its bytes.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        picture: bool,
    },
    /// A processor's remark, for the person only; untrusted, drawn inside the margin.
    Remark {
        text: String,
    },
    /// The server's own words to the person about the session (PROTO-38), drawn as the
    /// server's: never words nobody vouched for.
    Notice {
        text: String,
    },
    /// A file held back from the planner because a check judged its bytes unsafe (JUDGE-8), for
    /// the person only: `path` and `verdict` in the driver's words, `verdictText` the check's own
    /// reasons, untrusted like a question's, drawn inside the margin.
    #[serde(rename_all = "camelCase")]
    HeldBack {
        path: String,
        verdict: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        verdict_text: Option<String>,
    },
    Check {
        state: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        lines: Option<usize>,
        /// For a check over a file rather than text: `picture` or `pdf` (PIC-1).
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        completed: Option<bool>,
        /// Once ended, the verdict in one word (`safe`, `unsafe`, `inconclusive`), for the person
        /// only: the gate's reading of the reply, never the check's sentence (PROTO-12).
        #[serde(skip_serializing_if = "Option::is_none")]
        verdict: Option<&'static str>,
        /// The number of the delegate whose check it is; absent for the turn's own (DELEG-71).
        #[serde(skip_serializing_if = "Option::is_none")]
        delegate: Option<u32>,
    },
    /// What a finished run printed on one stream (`stdout` or `stderr`), for the person only: sent
    /// while its tool call is the one announced last, bounded, untrusted unless `trusted`, and
    /// drawn inside the margin like every untrusted byte. `bytes` is the stream's size as kept.
    RunOutput {
        stream: &'static str,
        text: String,
        bytes: usize,
        trusted: bool,
        label: String,
    },
    Plan {
        todos: Vec<TodoItem>,
    },
    #[serde(rename_all = "camelCase")]
    TurnEnded {
        stop_reason: &'static str,
    },
    /// The server stopped waiting for a question before anybody answered it (its time ran out,
    /// the turn was cancelled, the delegate that asked stopped): the editor takes it down, and an
    /// answer to it now is refused (ATTN-4).
    #[serde(rename_all = "camelCase")]
    QuestionClosed {
        question_id: String,
    },
    /// A checkpoint was made (CKPT-3): before a turn, sent just before its `turnEnded`, or before
    /// a restore; `files` are the workspace-relative paths it changed.
    #[serde(rename_all = "camelCase")]
    Checkpoint {
        checkpoint_id: String,
        files: Vec<String>,
    },
    /// One model call ended (USAGE-4): `role` as in `X-Bravebot-Role`; the counts its endpoint
    /// reported, or `reported: false` with zeros where it reported none; `contextTokens` (a
    /// planner's call: its request and reply) and `contextLimit` (the planner's budget) where
    /// known; and the `meter` after it.
    #[serde(rename_all = "camelCase")]
    Usage {
        role: &'static str,
        reported: bool,
        input_tokens: u64,
        output_tokens: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        cached_input_tokens: Option<u64>,
        /// Of the input, written to the endpoint's cache, where it said (USAGE-8).
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_write_input_tokens: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        context_tokens: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        context_limit: Option<u64>,
        /// Boxed: the meter is most of the update's size, and the other kinds are small.
        meter: Box<UsageMeter>,
    },
    /// Where a delegate stands (DELEG-60), for the person only: `state` is `running`, `waiting`
    /// (a question of its own waits on the person), `done`, `failed` or `cancelled`. `callId`
    /// is the `delegate-N` of the `toolCall` that drew its start; `delegateKind` its kind or
    /// definition name; `task` the first line of what it was started on. An ended one carries
    /// `stopReason` and its `report`, untrusted unless `trusted` (drawn inside the margin like
    /// every untrusted byte), with the `label` of the delegate's context.
    #[serde(rename_all = "camelCase")]
    Delegate {
        call_id: String,
        number: u32,
        delegate_kind: String,
        depth: u32,
        state: &'static str,
        task: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        stop_reason: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        report: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        trusted: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
}

/// The calls of one kind summed (USAGE-4): how many, how many reported nothing, the tokens of
/// those that did, and `costUsd` where every one of those had a price (USAGE-6).
#[derive(Debug, Serialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UsageTally {
    pub calls: u64,
    pub unreported: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    /// Absent while nothing was written to a cache (USAGE-8).
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_write_input_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A turn's or a session's calls: the planner's (and its delegates') and protection's (checks and
/// processors).
#[derive(Debug, Serialize, Clone, Copy, PartialEq)]
pub struct UsageTotals {
    pub planner: UsageTally,
    pub protection: UsageTally,
}

/// The meter (USAGE-5): the planner's context in use against its limit, where known, and the
/// totals of the turn and of the session.
#[derive(Debug, Serialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UsageMeter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_limit: Option<u64>,
    /// How many times the session's conversation was compacted, where it was (MODEL-11).
    #[serde(skip_serializing_if = "is_zero")]
    pub compactions: u64,
    pub turn: UsageTotals,
    pub session: UsageTotals,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl From<&bravebot_core::screen::Meter> for UsageMeter {
    fn from(meter: &bravebot_core::screen::Meter) -> UsageMeter {
        let tally = |t: &bravebot_core::screen::Tally| UsageTally {
            calls: t.calls,
            unreported: t.unreported,
            input_tokens: t.input,
            output_tokens: t.output,
            cached_input_tokens: t.cached_input,
            cache_write_input_tokens: t.cache_write_input,
            cost_usd: t.cost_usd(),
        };
        let totals = |t: &bravebot_core::screen::UsageTotals| UsageTotals {
            planner: tally(&t.planner),
            protection: tally(&t.protection),
        };
        UsageMeter {
            context_tokens: meter.context_tokens,
            context_limit: meter.context_limit,
            compactions: meter.compactions,
            turn: totals(&meter.turn),
            session: totals(&meter.session),
        }
    }
}

impl UsageMeter {
    /// The session's money so far, where every call that reported usage had a price.
    pub fn session_cost_usd(&self) -> Option<f64> {
        let spent = [self.session.planner, self.session.protection]
            .into_iter()
            .filter(|t| t.calls > t.unreported)
            .map(|t| t.cost_usd)
            .collect::<Option<Vec<f64>>>()?;
        (!spent.is_empty()).then(|| spent.iter().sum())
    }
}

#[derive(Debug, Serialize)]
pub struct TodoItem {
    pub content: String,
    pub status: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionParams<'a> {
    pub session_id: &'a str,
    pub question_id: &'a str,
    pub kind: &'static str,
    pub title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'a str>,
    /// The delegate that asks, absent for the turn's own question. Set by the driver from the
    /// delegate's seat, never from `why`, which the planner writes (DELEG-70).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asker: Option<Asker>,
    pub subject: Subject<'a>,
    pub options: Vec<PermissionOption>,
}

/// Which delegate puts a question: its number in the turn and its kind (or definition).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Asker {
    pub number: u32,
    pub kind: String,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<&'a str>,
    /// Content nobody vouched for: clients draw it inside a visible margin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<&'static str>,
    /// The check's own sentence, untrusted like the content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub multiple: bool,
    /// For `edit` and `write`: the unified diff, the whole original and proposal (absent for a
    /// client that declared `hunkTexts`, WRITE-61).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed: Option<&'a str>,
    /// For `restore`: what the agent's turn left in the file (`original` is the file now, with
    /// the person's changes, and `proposed` what the restore writes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<&'a str>,
    /// For a client that declared `hunkTexts`: the version of its open document the original
    /// is, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// The hunks of `diff`, in order: what `acceptedHunks` indexes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<SubjectHunk<'a>>,
    /// For `run`: the compiled plan, one line a step with argument boundaries visible, and the
    /// line the planner wrote.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub plan: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<&'a str>,
    /// What the person must know to decide, in plain words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<&'a str>,
    /// For `fetch`: the URL, and the host it reaches as the URL parser reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<&'a str>,
    /// For a picture or a PDF (`vetContent`): the private copy to open (PIC-4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy: Option<SubjectCopy<'a>>,
}

/// A private copy of a picture or a PDF for the person's own viewer: its absolute path, media
/// type and size in bytes.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectCopy<'a> {
    pub path: &'a str,
    pub media_type: &'a str,
    pub bytes: u64,
}

/// One hunk's lines, 0-based as LSP counts them: `oldStart`/`oldLines` in the original (the
/// document as it is), `newStart`/`newLines` in the proposal.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkRange {
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
}

/// A hunk as a question carries it: its lines, and for a client that declared `hunkTexts` the
/// proposal's text of them (WRITE-61).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectHunk<'a> {
    #[serde(flatten)]
    pub range: HunkRange,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
}

/// `bravebot/diagnostics/get`, server → client, to a client declaring
/// `experimental.bravebot.diagnostics` (DIAG-5): the diagnostics its own language servers report
/// now for these files, or, with no `uris`, for every file it holds diagnostics for.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsGetParams {
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uris: Option<Vec<String>>,
}

/// The client's answer to `bravebot/diagnostics/get`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DiagnosticsGetResult {
    pub items: Vec<WireDiagnostic>,
}

/// One diagnostic as an editor reports it: LSP's `Diagnostic` less what bravebot does not use,
/// `severity` as a word (`error`, `warning`, `information`, `hint`) and `code` as text.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireDiagnostic {
    pub uri: String,
    pub range: WireRange,
    pub severity: String,
    pub source: String,
    /// A string or a number, as LSP allows.
    pub code: Value,
    pub message: String,
}

/// A range of 0-based lines and characters, as the editor counts them.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WireRange {
    pub start: WirePosition,
    pub end: WirePosition,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WirePosition {
    pub line: u64,
    pub character: u64,
}

/// `bravebot/question/texts`: the whole texts of an edit or write question still waiting.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionTextsParams {
    pub question_id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionTextsResult {
    pub original: String,
    pub proposed: String,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    pub option_id: String,
    pub name: String,
    pub kind: &'static str,
}

/// The reply to `requestPermission`, and the argument of `bravebot.answer`, read leniently:
/// anything that is not a well-formed selection refuses.
#[derive(Debug, Deserialize)]
pub struct PermissionReply {
    pub outcome: Outcome,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum Outcome {
    #[serde(rename_all = "camelCase")]
    Selected {
        option_id: String,
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        accepted_hunks: Option<Vec<usize>>,
        #[serde(default)]
        edited_text: Option<String>,
    },
    Cancelled,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerArguments {
    pub question_id: String,
    /// Answers the whole question with this option.
    #[serde(default)]
    pub option_id: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub accepted_hunks: Option<Vec<usize>>,
    #[serde(default)]
    pub edited_text: Option<String>,
    /// Gives one hunk's verdict instead (`verdict` is `accept` or `reject`); the question is
    /// answered once every hunk has one.
    #[serde(default)]
    pub hunk: Option<usize>,
    #[serde(default)]
    pub verdict: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct AnswerResult {
    pub accepted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// `bravebot/checkpoint/restore`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointParams {
    pub session_id: String,
    pub checkpoint_id: String,
}

/// `bravebot/checkpoint/diff`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointDiffParams {
    pub session_id: String,
    pub checkpoint_id: String,
    pub path: String,
}

/// `bravebot/checkpoint/list`: newest first (CKPT-3).
#[derive(Debug, Serialize)]
pub struct CheckpointListResult {
    pub checkpoints: Vec<ListedCheckpoint>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedCheckpoint {
    pub checkpoint_id: String,
    /// Seconds since the epoch.
    pub created_at: u64,
    pub title: String,
    /// `turn` or `restore`.
    pub kind: &'static str,
    pub files: Vec<String>,
    /// The files a restore to this checkpoint removes, since they did not exist then.
    pub removes: Vec<String>,
}

/// `bravebot/checkpoint/diff`: one file then and now (`null` where it did not exist or was not
/// kept), and a unified diff from then to now.
#[derive(Debug, Serialize)]
pub struct CheckpointDiffResult {
    pub path: String,
    pub then: Option<String>,
    pub now: Option<String>,
    pub diff: String,
}

/// `bravebot/checkpoint/restore`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreResult {
    pub restored: Vec<String>,
    /// Those of `restored` that did not exist then, so were removed.
    pub removed: Vec<String>,
    pub skipped: Vec<SkippedPath>,
    pub undo_checkpoint_id: String,
}

#[derive(Debug, Serialize)]
pub struct SkippedPath {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct AuditResult {
    pub records: Vec<AuditRecord>,
}

#[derive(Debug, Serialize)]
pub struct AuditRecord {
    pub gate: &'static str,
    pub decision: &'static str,
    pub detail: String,
    /// When it was decided: milliseconds since the Unix epoch.
    pub at: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusResult {
    pub model: ModelStatus,
    pub mode: &'static str,
    pub interactive: bool,
    pub trust_rules: Vec<TrustRuleStatus>,
    /// What read checks have cost this session.
    pub checks: CheckStatus,
    pub added_directories: Vec<String>,
    /// Files the person allowed the agent to change for the rest of the session.
    pub standing_edits: Vec<String>,
    /// Plans the person allowed to run unasked for the rest of the session, as first written.
    pub remembered_runs: Vec<String>,
    /// Whether a check that finds nothing answers in the person's place, and which switch said so.
    pub auto_vetting: Value,
    /// How long a question waits for an answer before it is refused (`questions.timeoutSeconds`);
    /// `null` when it waits until answered (ATTN-3).
    pub question_timeout_seconds: Option<u64>,
    pub confinement: String,
    /// The MCP servers the person declared: each one's state, grants, network, pid and tools.
    pub mcp_servers: Vec<Value>,
    pub language_servers: Vec<Value>,
    pub jobs: Vec<Value>,
    pub watches: Vec<Value>,
    /// The delegates of the turn running now, or of the last one: `{ number, kind, depth, state }`
    /// with `state` `running` or `done`.
    pub delegates: Vec<Value>,
    pub audit_log: Option<String>,
    /// What the session's model calls cost so far (USAGE-7), as the last `usage` update's meter.
    pub usage: UsageMeter,
}

/// Read checks in `bravebot/session/status`: whether they are on, how many were sent, how many a
/// verdict remembered for the same bytes made unnecessary, and the most bytes one may be sent.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckStatus {
    pub enabled: bool,
    pub made: u64,
    pub saved: u64,
    pub budget_bytes: u64,
    /// The model checks go to (CHECK-12): `source` is where `vetting.model` was set, or
    /// `planner` when checks go to the planner's model.
    pub model: ModelStatus,
    /// Where verdicts are kept across sessions (CHECK-8); `null` when they are not (incognito).
    pub store: Option<&'static str>,
    /// How long one check may take before it is inconclusive (`vetting.timeoutSeconds`, CHECK-31).
    pub timeout_seconds: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatus {
    pub api: &'static str,
    pub base_url: String,
    pub name: String,
    pub source: &'static str,
    /// The context budget a planner request is held to, once known (MODEL-10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// Where it came from: `setting`, `endpoint`, `model name` or `default`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_source: Option<&'static str>,
}

#[derive(Debug, Serialize)]
pub struct TrustRuleStatus {
    pub path: String,
    pub scope: &'static str,
    pub origin: &'static str,
    pub trusted: bool,
}

#[cfg(test)]
mod tests {
    use super::method;

    // Verifies: PROTO-18
    /// The protocol extension and its spec change together (rust-analyzer keeps the same rule for
    /// its `lsp-extensions.md`).
    #[test]
    fn every_protocol_method_is_documented_in_the_spec() {
        let spec = include_str!("../../specs/protocol.md");
        let methods = [
            method::SESSION_NEW,
            method::SESSION_PROMPT,
            method::SESSION_CANCEL,
            method::SESSION_UPDATE,
            method::SESSION_REQUEST_PERMISSION,
            method::SESSION_STATUS,
            method::SESSION_AUDIT,
            method::SESSION_SET_MODE,
            method::SESSION_TRUST,
            method::SESSION_LIST,
            method::SESSION_RESUME,
            method::SESSION_DELETE,
            method::HISTORY_LIST,
            method::SESSION_LOOP,
            method::SESSION_LOOP_STOP,
            method::SESSION_SHOW,
            method::SESSION_END,
            super::ANSWER_COMMAND,
        ];
        let missing: Vec<&str> = methods.into_iter().filter(|m| !spec.contains(m)).collect();
        assert!(
            missing.is_empty(),
            "specs/protocol.md does not mention {missing:?}"
        );
    }
}
