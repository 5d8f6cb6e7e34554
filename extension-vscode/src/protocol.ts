// Wire types of `bravebot lsp`, mirroring server/src/protocol.rs (CONTRACT §3). Only types and
// method names live here: no logic, so a checker can diff this file against the Rust definitions.

export const methods = {
  sessionNew: 'bravebot/session/new',
  sessionPrompt: 'bravebot/session/prompt',
  sessionCancel: 'bravebot/session/cancel',
  sessionUpdate: 'bravebot/session/update',
  sessionRequestPermission: 'bravebot/session/requestPermission',
  sessionStatus: 'bravebot/session/status',
  sessionAudit: 'bravebot/session/audit',
  sessionSetMode: 'bravebot/session/setMode',
  sessionTrust: 'bravebot/session/trust',
  sessionList: 'bravebot/session/list',
  sessionResume: 'bravebot/session/resume',
  sessionDelete: 'bravebot/session/delete',
  historyList: 'bravebot/history/list',
  sessionLoop: 'bravebot/session/loop',
  sessionLoopStop: 'bravebot/session/loop/stop',
  sessionShow: 'bravebot/session/show',
  sessionEnd: 'bravebot/session/end',
  questionTexts: 'bravebot/question/texts',
  checkpointList: 'bravebot/checkpoint/list',
  checkpointDiff: 'bravebot/checkpoint/diff',
  checkpointRestore: 'bravebot/checkpoint/restore',
  diagnosticsGet: 'bravebot/diagnostics/get',
  vettingSet: 'bravebot/vetting/set',
} as const;

/**
 * Every message this extension sends, with its kind and the params fields it may carry. src/wire.ts
 * sends only what this table lists and refuses any other field; tests/tests/protocol_fronts.rs
 * reads this table (keep one entry a line) and checks it against server/src/protocol.rs and
 * server/src/lsp.rs, so the extension and the server cannot drift apart.
 */
export const outgoing = {
  'bravebot/session/new': { kind: 'request', params: ['cwd', 'incognito'] },
  'bravebot/session/prompt': { kind: 'request', params: ['sessionId', 'text', 'files', 'mentions', 'ranges'] },
  'bravebot/session/cancel': { kind: 'notification', params: ['sessionId'] },
  'bravebot/session/status': { kind: 'request', params: ['sessionId'] },
  'bravebot/session/audit': { kind: 'request', params: ['sessionId'] },
  'bravebot/session/setMode': { kind: 'request', params: ['sessionId', 'mode'] },
  'bravebot/session/trust': { kind: 'request', params: ['sessionId', 'path', 'scope', 'deny', 'acknowledgeVerdict'] },
  'bravebot/session/list': { kind: 'request', params: ['cwd'] },
  'bravebot/session/resume': { kind: 'request', params: ['sessionId'] },
  'bravebot/session/delete': { kind: 'request', params: ['sessionId'] },
  'bravebot/history/list': { kind: 'request', params: ['limit'] },
  'bravebot/session/loop': { kind: 'request', params: ['sessionId', 'prompt', 'intervalSeconds'] },
  'bravebot/session/loop/stop': { kind: 'request', params: ['sessionId'] },
  'bravebot/session/end': { kind: 'request', params: ['sessionId'] },
  'bravebot/session/show': { kind: 'request', params: ['sessionId', 'ref'] },
  'bravebot/question/texts': { kind: 'request', params: ['questionId'] },
  'bravebot/checkpoint/list': { kind: 'request', params: ['sessionId'] },
  'bravebot/checkpoint/diff': { kind: 'request', params: ['sessionId', 'checkpointId', 'path'] },
  'bravebot/checkpoint/restore': { kind: 'request', params: ['sessionId', 'checkpointId'] },
  'bravebot/vetting/set': { kind: 'request', params: ['on'] },
} as const;

/** Server → client: what ctx.ts handles. */
export const incoming = {
  'bravebot/session/update': { kind: 'notification' },
  'bravebot/session/requestPermission': { kind: 'request' },
  'bravebot/diagnostics/get': { kind: 'request' },
} as const;

export type OutgoingMethod = keyof typeof outgoing;

/** The command the server's code actions carry; `workspace/executeCommand` answers a question. */
export const answerCommand = 'bravebot.answer';

export interface ModelOptions {
  api?: string;
  baseUrl?: string;
  name?: string;
  apiKeyEnv?: string;
}

export interface InitializationOptions {
  model?: ModelOptions;
  interactive?: boolean;
  clientName?: string;
  /** How long a question waits before the server refuses it (ATTN-3); absent: until answered. */
  questions?: { timeoutSeconds?: number };
  /** How long one check may take before it is inconclusive (CHECK-31); absent: the server's own. */
  vetting?: { timeoutSeconds?: number };
}

export interface NewSessionParams { cwd?: string; incognito?: boolean }
/**
 * Whether a clean check answers for the person in a session (auto-vetting), and which switch said
 * so: `--vet`, `~/.bravebot/vetting`, `~/.bravebot/settings.json` or `default` (VET-23).
 */
export interface AutoVettingStatus { on: boolean; source: string }
export interface NewSessionResult { sessionId: string; autoVetting?: AutoVettingStatus }
/** `bravebot/vetting/set`: the person's gesture, recorded in ~/.bravebot/vetting; `sessions` it reached (VET-24). */
export interface VettingSetParams { on: boolean }
export interface VettingSetResult { on: boolean; record: string; sessions: string[] }

/** A range of lines (1-based, both ends included) a prompt's words are about: a review comment (REVIEW-3). */
export interface PromptRange { path: string; startLine: number; endLine: number }
export interface PromptParams { sessionId: string; text: string; files?: string[]; mentions?: string[]; ranges?: PromptRange[] }
export type StopReason = 'endTurn' | 'cancelled' | 'maxRounds' | 'error';
export interface PromptResult { stopReason: StopReason; error?: { message: string } }

export interface SessionParams { sessionId: string }

/** `bravebot/session/list`: times in seconds since the epoch, newest written first. */
export interface ListSessionsParams { cwd?: string }
export interface ListedSession { sessionId: string; title: string; created: number; updated: number; mode: string; model: string; cwd: string }
export interface UnreadableSession { sessionId: string; error: string }
export interface ListSessionsResult { sessions: ListedSession[]; unreadable: UnreadableSession[] }

/** `bravebot/session/resume`: the transcript is the person's prompts and the agent's replies, in order. */
export interface TranscriptEntry { role: 'person' | 'agent'; text: string }
export interface ResumeResult { sessionId: string; title: string; cwd: string; mode: Mode; autoVetting?: AutoVettingStatus; transcript: TranscriptEntry[] }

/** `bravebot/session/loop`: no interval is a self-paced loop (the planner calls schedule_next). */
export interface LoopParams { sessionId: string; prompt: string; intervalSeconds?: number }
/** The interval the server keeps (held between loop.minSeconds and an hour); absent when self-paced. */
export interface LoopResult { intervalSeconds?: number }
export interface LoopStopResult { stopped: boolean; ticks: number; quietTicks: number }

/** `bravebot/history/list`: every session's prompts, newest first; `time` in seconds. */
/** `bravebot/session/show`: a slot's bytes for the person only; a server's picture as it sent it. */
export interface ShowResult { ref: string; origin: string; label: string; lines: number; bytes: number; text: string; picture?: { mediaType: string; data: string } }

export interface HistoryParams { limit?: number }
export interface HistoryEntry { text: string; time: number; sessionId: string; cwd: string }
export interface HistoryResult { entries: HistoryEntry[] }
export type Mode = 'ask' | 'acceptEdits' | 'plan';
export const modes: readonly Mode[] = ['ask', 'acceptEdits', 'plan'];
export interface SetModeParams { sessionId: string; mode: Mode }
export interface TrustParams { sessionId: string; path: string; scope: 'file' | 'directory'; deny?: boolean; acknowledgeVerdict?: boolean }
/**
 * What `bravebot/session/trust` answers: `{}` when the gesture was made; `trusted: false` with the
 * verdict and the check's reasons (`verdictText`, untrusted) for a file a check judged unsafe,
 * sent without `acknowledgeVerdict` (PROTO-29).
 */
export interface TrustResult { trusted?: boolean; path?: string; verdict?: string; verdictText?: string }

export interface TodoItem { content: string; status: string }

export type SessionUpdate =
  | { kind: 'agentText'; delta: string }
  | { kind: 'toolCall'; callId: string; tool: string; why: string; routing: unknown }
  | { kind: 'toolResult'; callId: string; status: string; summary: string }
  /** `picture`: a picture an MCP server sent, which `session/show` gives as one (MCP-31). */
  | { kind: 'quarantined'; ref: string; origin: string; lines: number; bytes: number; label: string; picture?: boolean }
  | { kind: 'remark'; text: string }
  /** The server's own words about the session (a question that timed out): drawn as the server's (PROTO-38). */
  | { kind: 'notice'; text: string }
  /** Auto-vetting turned on or off while the session runs (the standing key, the editor's command: VET-23). */
  | { kind: 'autoVetting'; on: boolean; source: string }
  /** A file held back from the agent because a check judged it unsafe: the check's reasons are untrusted (JUDGE-8). */
  | { kind: 'heldBack'; path: string; verdict: string; verdictText?: string }
  /** `delegate`: the number of the delegate whose check it is, absent for the turn's own (DELEG-71). */
  | { kind: 'check'; state: string; lines?: number; file?: 'picture' | 'pdf'; completed?: boolean; verdict?: string; delegate?: number }
  /** What a finished run printed on one stream, for the person only (drawn in the untrusted frame). */
  | { kind: 'runOutput'; stream: string; text: string; bytes: number; trusted: boolean; label: string }
  | { kind: 'plan'; todos: TodoItem[] }
  | { kind: 'turnEnded'; stopReason: StopReason }
  /** The server stopped waiting for this question before anybody answered it (its time ran out, the turn was cancelled): take it down; an answer now is refused (ATTN-4). */
  | { kind: 'questionClosed'; questionId: string }
  /**
   * A checkpoint was kept: just before a turn's `turnEnded`, the workspace before that turn with
   * the paths the turn changed; after a restore, the restore's own checkpoint.
   */
  | { kind: 'checkpoint'; checkpointId: string; files: string[] }
  /**
   * One model call ended (USAGE-4): `role` as in X-Bravebot-Role; what its endpoint reported, or
   * `reported: false` (with zeros) where it reported nothing; and the meter after it.
   */
  | { kind: 'usage'; role: string; reported: boolean; inputTokens: number; outputTokens: number; cachedInputTokens?: number; cacheWriteInputTokens?: number; contextTokens?: number; contextLimit?: number; meter: UsageMeter }
  /**
   * Where a delegate stands (DELEG-60): `state` is `running`, `waiting` (a question of its own
   * waits on the person), `done`, `failed` or `cancelled`; an ended one carries `stopReason` and
   * its `report`, untrusted unless `trusted` (drawn in the untrusted frame), with its `label`.
   */
  | { kind: 'delegate'; callId: string; number: number; delegateKind: string; depth: number; state: string; task: string; stopReason?: StopReason; report?: string; trusted?: boolean; label?: string };

export interface UpdateNotification { sessionId: string; update: SessionUpdate }

/** Calls of one kind summed: `costUsd` only where every call that reported usage had a price (USAGE-6). */
export interface UsageTally { calls: number; unreported: number; inputTokens: number; outputTokens: number; cachedInputTokens: number; cacheWriteInputTokens?: number; costUsd?: number }
/** `planner`: the planner's and its delegates' calls; `protection`: the checks' and processors'. */
export interface UsageTotals { planner: UsageTally; protection: UsageTally }
/** The meter (USAGE-5), as the last `usage` update and `session/status` carry it. */
export interface UsageMeter { contextTokens?: number; contextLimit?: number; compactions?: number; turn: UsageTotals; session: UsageTotals }

export type QuestionKind =
  | 'write' | 'edit' | 'run' | 'fetch' | 'lspStart'
  | 'readOutput' | 'vetContent' | 'trustRead' | 'delegate' | 'askUser'
  | 'mcpStart' | 'mcpTools' | 'mcpCall' | 'restore';

/**
 * `text`: the proposal's lines `newStart` to `newStart + newLines`, with their line breaks (empty
 * for a hunk that only removes lines), sent instead of the whole texts to a client that declared
 * `hunkTexts` (WRITE-61).
 */
export interface HunkRange { oldStart: number; oldLines: number; newStart: number; newLines: number; text?: string }

export interface Subject {
  path?: string;
  uri?: string;
  content?: string;
  verdict?: string;
  verdictText?: string;
  origin?: string;
  question?: string;
  header?: string;
  multiple?: boolean;
  diff?: string;
  original?: string;
  proposed?: string;
  /** A `restore` question: what the agent's turn left in the file (the person changed it since). */
  agent?: string;
  /** With `hunkTexts`: the LSP version of the open document (uri) the original is; absent when it was read from disk. */
  version?: number;
  hunks?: HunkRange[];
  plan?: string[];
  command?: string;
  notice?: string;
  url?: string;
  host?: string;
  /** A picture or a PDF (`vetContent`): the private copy of the bytes read, to open in a viewer (PIC-4). */
  copy?: FileCopy;
}

/** A private copy of a file for the person's own viewer: absolute path, media type, size in bytes. */
export interface FileCopy { path: string; mediaType: string; bytes: number }

export type OptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';
export interface PermissionOption { optionId: string; name: string; kind: OptionKind }

export interface RequestPermissionParams {
  sessionId: string;
  questionId: string;
  kind: QuestionKind;
  title: string;
  why?: string;
  /** The delegate that asks (DELEG-70), set by the server from its seat; absent for the turn's own. */
  asker?: Asker;
  subject: Subject;
  options: PermissionOption[];
}

export interface Asker { number: number; kind: string }

export type Outcome =
  | { outcome: 'selected'; optionId: string; text?: string; acceptedHunks?: number[]; editedText?: string }
  | { outcome: 'cancelled' };

export interface PermissionReply { outcome: Outcome }

export interface AnswerArguments {
  questionId: string;
  optionId?: string;
  text?: string;
  acceptedHunks?: number[];
  editedText?: string;
  hunk?: number;
  verdict?: string;
}

/** The reply to `bravebot.answer`; `reason` explains a refusal or a partial (per-hunk) answer. */
export interface AnswerResult { accepted: boolean; reason?: string }

/** `bravebot/question/texts`: the whole texts of an edit or write question still waiting (WRITE-61). */
/**
 * `bravebot/diagnostics/get`, server → client (DIAG-5): the diagnostics VS Code's language servers
 * report now for `uris`, or for every file it has diagnostics for when `uris` is absent.
 */
export interface DiagnosticsGetParams { sessionId: string; uris?: string[] }
export interface DiagnosticsGetResult { items: WireDiagnostic[] }
/** `severity` is `error`, `warning`, `information` or `hint`; positions are 0-based. */
export interface WireDiagnostic { uri: string; range: WireRange; severity: string; source: string; code: string | number; message: string }
export interface WireRange { start: WirePosition; end: WirePosition }
export interface WirePosition { line: number; character: number }

export interface QuestionTextsParams { questionId: string }
export interface QuestionTextsResult { original: string; proposed: string }

/**
 * `bravebot/checkpoint/list`: newest first; `createdAt` in seconds since the epoch. `kind` is
 * `turn` (the workspace before a turn, `title` its prompt's first line) or `restore` (before a
 * restore: restoring it undoes that restore). `files`: the paths that turn or restore changed.
 */
export interface CheckpointListParams { sessionId: string }
/** `removes`: the files a restore to this checkpoint removes, since they did not exist then. */
export interface Checkpoint { checkpointId: string; createdAt: number; title: string; kind: string; files: string[]; removes: string[] }
export interface CheckpointListResult { checkpoints: Checkpoint[] }
/** `bravebot/checkpoint/diff`: the file then and now (`null`: it did not exist, or was not text). */
export interface CheckpointDiffParams { sessionId: string; checkpointId: string; path: string }
export interface CheckpointDiffResult { path: string; then: string | null; now: string | null; diff: string }
/** `bravebot/checkpoint/restore`: the restore is itself a checkpoint, `undoCheckpointId`. */
export interface CheckpointRestoreParams { sessionId: string; checkpointId: string }
export interface SkippedFile { path: string; reason: string }
/** `removed`: those of `restored` that did not exist then, so were removed. */
export interface CheckpointRestoreResult { restored: string[]; removed: string[]; skipped: SkippedFile[]; undoCheckpointId: string }

/** `at`: when it was decided, in milliseconds since the Unix epoch. */
export interface AuditRecord { gate: string; decision: string; detail: string; at: number }
export interface AuditResult { records: AuditRecord[] }

export interface ModelStatus { api: string; baseUrl: string; name: string; source: string; contextTokens?: number; contextSource?: string }
/** Read checks this session: on or off, how many were sent, how many a remembered verdict saved, and the most bytes one may carry. */
export interface CheckStatus { enabled: boolean; made: number; saved: number; budgetBytes: number; model?: ModelStatus; store?: string | null; timeoutSeconds?: number }
export interface TrustRuleStatus { path: string; scope: string; origin: string; trusted: boolean }

export interface StatusResult {
  model: ModelStatus;
  mode: Mode;
  interactive: boolean;
  trustRules: TrustRuleStatus[];
  checks: CheckStatus;
  addedDirectories: string[];
  standingEdits: string[];
  rememberedRuns: string[];
  autoVetting: AutoVettingStatus;
  /** How long a question waits before it is refused (questions.timeoutSeconds); null: until answered (ATTN-3). */
  questionTimeoutSeconds: number | null;
  confinement: string;
  mcpServers: unknown[];
  languageServers: unknown[];
  jobs: unknown[];
  watches: unknown[];
  delegates: unknown[];
  auditLog: string | null;
  /** What the session's model calls cost so far (USAGE-7). */
  usage?: UsageMeter;
}
