// The client's lifecycle and the session: starting and restarting the server, the current session,
// the status-bar item, and routing server notifications and questions to the chat and the editors.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { createClient } from './client';
import { Config, secretKey } from './config';
import type { TurnMark } from './auditView';
import {
  type AuditResult,
  type AutoVettingStatus,
  type CheckpointRestoreResult,
  type DiagnosticsGetParams,
  type DiagnosticsGetResult,
  type HistoryResult,
  type ListSessionsResult,
  type LoopResult,
  type LoopStopResult,
  methods,
  type Mode,
  type NewSessionParams,
  type NewSessionResult,
  type OutgoingMethod,
  type PromptRange,
  type PromptResult,
  type QuestionTextsResult,
  type RequestPermissionParams,
  type PermissionReply,
  type ResumeResult,
  type ShowResult,
  type StatusResult,
  type ModelStatus,
  type UpdateNotification,
  type VettingSetResult,
} from './protocol';
import { statusText } from './autoVetting';
import { notify, request } from './wire';
import { diagnosticsAnswer } from './diagnosticsAnswer';
import { loopNotice, type LoopState, type LoopShown } from './sessions';
import type { ChatViewProvider } from './webview/provider';
import { Questions } from './questions';
import { askedBy } from './questionKinds';
import { Checkpoints } from './checkpointView';
import { TurnReview } from './turnReviewView';
import type { CommentPrompt } from './turnReview';
import { refreshSetup, resolveServer } from './setup';
import { modelLine } from './modelShown';
import { badge, notification, showLabel, type Moment } from './attention';

export const infoScheme = 'bravebot-info';


export type SessionState = 'idle' | 'thinking' | 'waiting';

/** Said in the chat when an incognito session opens (SESS-10). */
export const incognitoNotice =
  'A new incognito session began: nothing of it is written under ~/.bravebot (no record, no prompt history, no audit file), and it cannot be resumed.';

export class Ctx implements vscode.Disposable {
  readonly config = new Config();
  readonly output = vscode.window.createOutputChannel('bravebot');
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private sessionId: string | undefined;
  /** The session being opened, so two callers at once share one. */
  private opening: Promise<string> | undefined;
  /** Whether the next session opened (and the current one) is incognito. */
  private incognito = false;
  /** The loop the current session runs, as this extension started it. */
  private loop: LoopState | undefined;
  /** Prompts sent and not yet answered: while there are none, turns the server starts (a loop's
   * tick, a watch firing) set the state themselves. */
  private inFlight = 0;
  private state: SessionState = 'idle';
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  private readonly disposables: vscode.Disposable[] = [];
  readonly questions: Questions;
  readonly checkpoints: Checkpoints;
  /** Review This Turn: the files the last turn changed, their hunks and the person's marks. */
  readonly turnReview: TurnReview;
  /** Comments waiting for the turn running now to end (see comment). */
  private idleWaiters: (() => void)[] = [];
  /** Restores running: the checkpoint update each one sends is no turn's (see onUpdate). */
  private restoring = 0;
  mode: Mode = 'ask';
  /** While set, settings changes do not restart the server (chooseModel writes three at once). */
  private batching = false;
  /** Read-only documents (status, audit, the setup check) by path. */
  private readonly infos = new Map<string, string>();
  private readonly infoChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(readonly extension: vscode.ExtensionContext, readonly chat: ChatViewProvider) {
    this.questions = new Questions(this);
    this.checkpoints = new Checkpoints(this);
    this.turnReview = new TurnReview(this);
    this.statusItem.command = 'bravebot.openChat';
    this.setState('idle');
    this.statusItem.show();
    this.disposables.push(
      this.output,
      this.statusItem,
      this.checkpoints,
      this.turnReview,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('bravebot.serverPath')) void refreshSetup(this);
        if (this.config.affectsServer(e) && !this.batching) void this.restart('The settings changed, so bravebot started again: a new session began.');
      }),
      this.infoChanged,
      vscode.workspace.registerTextDocumentContentProvider(infoScheme, {
        onDidChange: this.infoChanged.event,
        provideTextDocumentContent: (uri) => this.infos.get(uri.path) ?? '',
      }),
    );
  }

  /** Whether the current session has put anything in the chat: a prompt, a loop, a resume. */
  private inChat = false;
  /** The model the server said it uses, once a session asked (serverModel). */
  private model: ModelStatus | undefined;
  /** Auto-vetting in the current session, as the server said when it opened and since (VET-23). */
  autoVetting: AutoVettingStatus | undefined;

  setState(state: SessionState): void {
    this.state = state;
    const text = { idle: '$(hubot) bravebot', thinking: '$(loading~spin) bravebot: thinking', waiting: '$(bell) bravebot: waiting for you' }[state];
    // While auto-vetting is on the status bar says so, naming its switch in the hover (VET-23).
    const vetting = statusText(this.autoVetting);
    this.statusItem.text = vetting ? `${text} ${vetting.text}` : text;
    this.statusItem.tooltip = `bravebot is ${state === 'waiting' ? 'waiting for you' : state}${this.incognito ? ' (incognito session)' : ''}; click to open the chat` +
      (this.model ? `\nModel: ${modelLine(this.model)}` : '') + (vetting ? `\n${vetting.tooltip}` : '');
    this.chat.post({ type: 'state', state });
  }

  get sessionState(): SessionState {
    return this.state;
  }

  /** The running client, started on first use; a failed start is reported and can be retried. */
  async ensureClient(): Promise<LanguageClient> {
    if (this.client) return this.client;
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<LanguageClient> {
    // Looked for first, so a missing program is named with the setting that chooses it rather
    // than reported as the client library's "spawn ENOENT".
    if (!resolveServer(this.config.serverPath)) {
      await refreshSetup(this);
      throw new Error(`bravebot could not find its program: "${this.config.serverPath}" is not an executable file or a program on PATH (bravebot.serverPath)`);
    }
    const apiKey = await this.extension.secrets.get(secretKey);
    const client = createClient(this.config, apiKey, this.output, (a, r) => this.questions.answeredElsewhere(a, r));
    client.onNotification(methods.sessionUpdate, (n: UpdateNotification) => this.onUpdate(n));
    client.onRequest(methods.sessionRequestPermission, (p: RequestPermissionParams, token: vscode.CancellationToken) =>
      this.onQuestion(p, token),
    );
    client.onRequest(methods.diagnosticsGet, (p: DiagnosticsGetParams) => this.onDiagnostics(p));
    await client.start();
    this.client = client;
    return client;
  }

  /**
   * The model the server actually uses and where that came from, asked of the server; shown in
   * the status bar's hover and the chat's state. Undefined when it cannot be asked.
   */
  async serverModel(): Promise<ModelStatus | undefined> {
    try {
      const s = await this.request<StatusResult>('bravebot/session/status', {});
      this.model = s.model;
      this.setState(this.state);
      if (s.model) this.chat.post({ type: 'model', text: modelLine(s.model) });
      return s.model;
    } catch (err) {
      this.logError('model', err instanceof Error ? err.message : String(err));
      return undefined;
    }
  }

  async restart(notice?: string): Promise<void> {
    this.model = undefined;
    // A session nothing was asked in yet (one opened only to ask which model the server uses)
    // has nothing on screen to clear.
    const hadSession = this.sessionId !== undefined && this.inChat;
    await this.discard();
    const old = this.client;
    this.client = undefined;
    this.incognito = false;
    this.checkpoints.clear();
    this.turnReview.clear();
    this.postSession();
    if (old) await old.stop().catch(() => undefined);
    // Without a session nothing on screen belongs to the old server: an error from a prompt
    // that could not start stays, with its Retry.
    if (hadSession) this.chat.post({ type: 'reset', notice });
  }

  /** Runs `fn` (which changes several settings) and restarts the server once afterwards. */
  async batchSettings(fn: () => Promise<void>): Promise<void> {
    this.batching = true;
    try {
      await fn();
    } finally {
      this.batching = false;
    }
    await this.restart('The model settings changed, so bravebot started again: a new session began.');
  }

  /** Shows `text` (markdown) in a read-only editor titled `title`. */
  async showInfo(title: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: infoScheme, path: `/${title}.md` });
    this.infos.set(uri.path, text);
    this.infoChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** Every error goes to the output channel, with the time and where it happened. */
  logError(where: string, message: string): void {
    this.output.appendLine(`${new Date().toISOString()} error (${where}): ${message}`);
  }

  async session(): Promise<string> {
    if (this.sessionId) return this.sessionId;
    this.opening ??= this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async open(): Promise<string> {
    const client = await this.ensureClient();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const params: NewSessionParams = cwd ? { cwd } : {};
    if (this.incognito) params.incognito = true;
    const r = await request<NewSessionResult>(client, 'bravebot/session/new', params);
    this.sessionId = r.sessionId;
    this.inChat = false;
    this.turns = [];
    this.checkpoints.clear();
    this.turnReview.clear();
    this.postSession();
    this.openedWith(r.autoVetting);
    void this.confinementLine(client, r.sessionId);
    void this.serverModel();
    if (this.mode !== 'ask') await request(client, 'bravebot/session/setMode', { sessionId: r.sessionId, mode: this.mode });
    return r.sessionId;
  }

  /**
   * A session opened: the chat's top line names the platform's confinement level and what the
   * session confines, from its status (VSC-129). A status that fails draws nothing.
   */
  private async confinementLine(client: LanguageClient, sessionId: string): Promise<void> {
    try {
      const status = await request<StatusResult>(client, 'bravebot/session/status', { sessionId });
      if (this.sessionId === sessionId) this.chat.post({ type: 'confinement', text: status.confinement });
    } catch {
      // The status is for the line only; the session works without it.
    }
  }

  /** A session opened: the status bar, and the chat's banner when the mode is on (VET-23). */
  private openedWith(vetting: AutoVettingStatus | undefined): void {
    this.autoVetting = vetting;
    this.setState(this.state);
    if (vetting?.on) this.chat.post({ type: 'autoVetting', on: true, source: vetting.source });
  }

  /**
   * bravebot: Auto-Vetting…: the person's choice, recorded by the server in ~/.bravebot/vetting;
   * the sessions it reaches say so in their chats through an `autoVetting` update (VET-24).
   */
  async setAutoVetting(on: boolean): Promise<VettingSetResult> {
    const client = await this.ensureClient();
    return request<VettingSetResult>(client, 'bravebot/vetting/set', { on });
  }

  /** Tells the chat which session it shows: incognito, or resumed with a title. */
  private postSession(title?: string): void {
    this.chat.post({ type: 'session', incognito: this.incognito, title });
  }

  private postLoop(): void {
    const l = this.loop;
    const shown: LoopShown | undefined = l && { prompt: l.prompt, ticks: l.ticks, intervalSeconds: l.intervalSeconds };
    this.chat.post({ type: 'loop', loop: shown });
  }

  /**
   * Whether the current session may be let go of: a running turn or a loop is never dropped
   * silently. The person is asked, and says whether to end it.
   */
  private async mayDiscard(then: string): Promise<boolean> {
    if (this.state === 'idle' && !this.loop) return true;
    const what = this.state !== 'idle' ? 'still working on a turn' : 'running a loop';
    const choice = await vscode.window.showWarningMessage(
      `bravebot is ${what}. End it and ${then}?`,
      {
        modal: true,
        detail: this.incognito
          ? 'Its turn is cancelled and its questions refused. It is incognito: nothing of it can be brought back.'
          : 'Its turn is cancelled and its questions refused. The session stays recorded, so Sessions can bring it back.',
      },
      `End it and ${then}`,
    );
    return choice !== undefined;
  }

  /** Lets the current session go: the server is told to end it (its record stays). */
  private async discard(): Promise<void> {
    const id = this.sessionId;
    this.sessionId = undefined;
    this.loop = undefined;
    this.postLoop();
    if (id && this.client) {
      // The turn is cancelled before any of its questions is refused here: a refusal heard first
      // would let the turn go on and ask the model again after the person chose to end it.
      await notify(this.client, 'bravebot/session/cancel', { sessionId: id }).catch(() => undefined);
      await request(this.client, 'bravebot/session/end', { sessionId: id }).catch((err) => this.logError('session end', err instanceof Error ? err.message : String(err)));
    }
    this.questions.refuseAll();
  }

  /**
   * Starts a new session, incognito or not. A running turn or loop is not dropped silently: the
   * person is asked first, and the old session is ended only if they say so.
   */
  async newSession(opts: { incognito?: boolean } = {}): Promise<void> {
    if (!(await this.mayDiscard(opts.incognito ? 'start an incognito session' : 'start a new session'))) return;
    await this.discard();
    this.incognito = opts.incognito ?? false;
    this.chat.post({ type: 'reset', notice: this.incognito ? incognitoNotice : 'A new session began.' });
    this.postSession();
    await this.session();
  }

  /** The server's records, newest first. */
  async listSessions(): Promise<ListSessionsResult> {
    const client = await this.ensureClient();
    return request<ListSessionsResult>(client, 'bravebot/session/list', {});
  }

  get currentSession(): string | undefined {
    return this.sessionId;
  }

  /** Resumes a recorded session: it becomes the chat's, drawn from the transcript the server keeps. */
  async resume(id: string): Promise<boolean> {
    if (!(await this.mayDiscard('resume the other session'))) return false;
    const client = await this.ensureClient();
    const r = await request<ResumeResult>(client, 'bravebot/session/resume', { sessionId: id });
    if (this.sessionId !== r.sessionId) await this.discard();
    this.sessionId = r.sessionId;
    this.inChat = true;
    this.incognito = false;
    this.turns = [];
    this.mode = r.mode;
    this.chat.post({ type: 'resumed', result: r });
    this.autoVetting = r.autoVetting;
    this.setState(this.state);
    void this.checkpoints.refresh();
    this.chat.post({ type: 'mode', mode: r.mode });
    this.postSession(r.title);
    return true;
  }

  async deleteSession(id: string): Promise<void> {
    const client = await this.ensureClient();
    await request(client, 'bravebot/session/delete', { sessionId: id });
  }

  /** Every session's prompts from the server's history, oldest first; none where it cannot answer. */
  async history(): Promise<{ text: string; time: number }[]> {
    try {
      const client = await this.ensureClient();
      const r = await request<HistoryResult>(client, 'bravebot/history/list', { limit: 200 });
      return r.entries.map((e) => ({ text: e.text, time: e.time })).reverse();
    } catch (err) {
      this.logError('history', err instanceof Error ? err.message : String(err));
      return [];
    }
  }

  /** Starts a loop over `prompt`, every `intervalSeconds`, or self-paced when there is none. */
  async startLoop(prompt: string, intervalSeconds?: number): Promise<void> {
    const sessionId = await this.session();
    const client = await this.ensureClient();
    this.inChat = true;
    this.chat.post({ type: 'user', text: prompt });
    // Marked before the request: the first tick's updates may come before its answer.
    this.loop = { prompt, ticks: 0, inTick: false, selfPaced: intervalSeconds === undefined, askedNext: false, intervalSeconds };
    this.postLoop();
    this.chat.post({ type: 'item', item: { kind: 'notice', text: loopNotice('started', { intervalSeconds }) } });
    let r: LoopResult;
    try {
      r = await request<LoopResult>(client, 'bravebot/session/loop', intervalSeconds === undefined ? { sessionId, prompt } : { sessionId, prompt, intervalSeconds });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.loop = undefined;
      this.postLoop();
      this.logError('loop', message);
      this.chat.post({ type: 'item', item: { kind: 'notice', text: `The loop was refused: ${message}` } });
      return;
    }
    if (this.loop && r.intervalSeconds !== undefined && r.intervalSeconds !== intervalSeconds) {
      this.loop.intervalSeconds = r.intervalSeconds;
      this.postLoop();
      this.chat.post({ type: 'item', item: { kind: 'notice', text: loopNotice('kept', { intervalSeconds: r.intervalSeconds }) } });
    }
  }

  async stopLoop(): Promise<void> {
    let text = 'No loop was running.';
    if (this.client && this.sessionId) {
      const r = await request<LoopStopResult>(this.client, 'bravebot/session/loop/stop', { sessionId: this.sessionId });
      if (r.stopped) text = loopNotice('stopped', r);
    }
    this.loop = undefined;
    this.postLoop();
    this.chat.post({ type: 'item', item: { kind: 'notice', text } });
  }

  /** The prompts of this session, for the audit view's turns (see auditView.ts). */
  turns: TurnMark[] = [];

  /**
   * Sends a prompt; `mentions` are the files the person pointed at with `@`, which vouch for nothing
   * (PROTO-30); `ranges` the places a comment's words are about (REVIEW-3).
   */
  async prompt(text: string, mentions: string[], ranges?: PromptRange[]): Promise<PromptResult> {
    const sessionId = await this.session();
    const client = await this.ensureClient();
    this.inChat = true;
    // How many gate decisions came before this turn: the audit view groups the rest under it.
    const before = await request<AuditResult>(client, 'bravebot/session/audit', { sessionId });
    if (this.sessionId === sessionId) this.turns.push({ at: new Date(), text, recordsBefore: before.records.length });
    // The person's own turn, between a loop's ticks, is no tick (see onUpdate).
    this.inFlight++;
    this.setState('thinking');
    // The walkthrough's last step is done once a prompt went out.
    void vscode.commands.executeCommand('setContext', 'bravebot.promptSent', true);
    try {
      return await request<PromptResult>(client, 'bravebot/session/prompt', ranges?.length ? { sessionId, text, mentions, ranges } : { sessionId, text, mentions });
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) {
        this.setState('idle');
        // The first comment waiting goes now; the others wait for its turn to end in turn.
        this.idleWaiters.shift()?.();
      }
    }
  }

  /**
   * A comment for the agent (REVIEW-5): the person's words and the range's place start the next
   * turn; while a turn runs it waits, said in the chat, and goes once that turn has ended (the
   * server takes one turn at a time). The range's text is never sent: the agent reads it from the
   * file, under the file's own label.
   */
  async comment(c: CommentPrompt): Promise<PromptResult> {
    if (this.inFlight > 0) {
      this.chat.post({ type: 'item', item: { kind: 'notice', text: `Your ${c.label} goes once the turn running now ends.` } });
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
    this.chat.post({ type: 'user', text: c.text, context: c.label });
    this.questions.review.clear();
    return this.prompt(c.text, [], c.ranges);
  }

  /**
   * Restores the workspace to a checkpoint (the caller asked the person first). The state shows
   * bravebot working meanwhile, and a question the restore asks is a card like any other.
   */
  async restoreCheckpoint(checkpointId: string): Promise<CheckpointRestoreResult> {
    this.inFlight++;
    this.restoring++;
    this.setState('thinking');
    try {
      return await this.request<CheckpointRestoreResult>('bravebot/checkpoint/restore', { checkpointId });
    } finally {
      this.restoring--;
      this.inFlight--;
      if (this.inFlight === 0) this.setState('idle');
    }
  }

  /** Show me on a quarantined notice: its bytes for the person's eyes, in its frame (PROTO-25). */
  async showSlot(ref: string): Promise<void> {
    if (!this.client || !this.sessionId) return;
    const shown = await request<ShowResult>(this.client, 'bravebot/session/show', { sessionId: this.sessionId, ref });
    this.chat.post({ type: 'shown', ref, text: shown.text });
  }

  /** A server's picture is asked for as soon as it is held, for the chat to draw (MCP-31). */
  private showPicture(sessionId: string, ref: string): void {
    const client = this.client;
    if (!client) return;
    request<ShowResult>(client, 'bravebot/session/show', { sessionId, ref })
      .then((shown) => {
        if (shown.picture) this.chat.post({ type: 'picture', ref, picture: shown.picture });
      })
      .catch((err) => this.logError('session show', err instanceof Error ? err.message : String(err)));
  }

  /** The whole texts of an edit or write question still waiting (WRITE-61), from the server that asked it. */
  async questionTexts(questionId: string): Promise<QuestionTextsResult> {
    if (!this.client) throw new Error('bravebot is not running');
    return request<QuestionTextsResult>(this.client, 'bravebot/question/texts', { questionId });
  }

  async cancel(): Promise<void> {
    if (!this.client || !this.sessionId) return;
    await notify(this.client, 'bravebot/session/cancel', { sessionId: this.sessionId });
    this.questions.refuseAll();
  }

  async setMode(mode: Mode): Promise<void> {
    this.mode = mode;
    this.chat.post({ type: 'mode', mode });
    if (this.client && this.sessionId) await request(this.client, 'bravebot/session/setMode', { sessionId: this.sessionId, mode });
  }

  async request<R>(method: OutgoingMethod, params: object): Promise<R> {
    const sessionId = await this.session();
    const client = await this.ensureClient();
    return request<R>(client, method, { sessionId, ...params });
  }

  private onUpdate(n: UpdateNotification): void {
    if (n.sessionId !== this.sessionId) return;
    const u = n.update;
    const loop = this.loop;
    if (u.kind === 'autoVetting') {
      // No turn's: it changes the status bar and is said in the chat where it happened.
      this.autoVetting = { on: u.on, source: u.source };
      this.setState(this.state);
      this.chat.post({ type: 'update', update: u });
      return;
    }
    if (u.kind === 'checkpoint') {
      // Every checkpoint is listed; only a turn's is drawn in the chat (a restore's own is said
      // with the restore's result).
      void this.checkpoints.refresh();
      if (this.restoring === 0) {
        this.chat.post({ type: 'update', update: u });
        void this.turnReview.load(n.sessionId, u.checkpointId, u.files);
      }
      return;
    }
    // A turn the server started (a loop's tick, a watch firing) sets the state itself.
    if (this.inFlight === 0 && u.kind !== 'turnEnded' && this.state === 'idle') this.setState('thinking');
    // A loop's tick sends no prompt from here: its first update says a tick began. Updates while
    // a prompt of the person's runs are that turn's, no tick.
    if (loop && !loop.inTick && this.inFlight === 0 && u.kind !== 'turnEnded') {
      loop.inTick = true;
      loop.ticks += 1;
      this.chat.post({ type: 'item', item: { kind: 'loopTick', n: loop.ticks, prompt: loop.prompt } });
      this.postLoop();
    }
    if (loop && u.kind === 'toolCall' && u.tool === 'schedule_next') loop.askedNext = true;
    if (u.kind === 'questionClosed') {
      this.questions.closed(u.questionId);
      return;
    }
    this.chat.post({ type: 'update', update: u });
    if (u.kind === 'quarantined' && u.picture === true) this.showPicture(n.sessionId, u.ref);
    if (u.kind !== 'turnEnded') return;
    if (this.inFlight === 0) this.setState('idle');
    this.tell({ kind: 'turnEnd', stopReason: u.stopReason });
    if (!loop?.inTick) return;
    // The server ends a loop on a tick's error, and a self-paced one on a tick that did not ask
    // for the next (LOOP-2, LOOP-3): said here rather than at the next stop.
    const over = u.stopReason === 'error' ? 'ended' : loop.selfPaced && !loop.askedNext ? 'unasked' : undefined;
    loop.inTick = false;
    loop.askedNext = false;
    if (over) {
      this.loop = undefined;
      this.postLoop();
      this.chat.post({ type: 'item', item: { kind: 'notice', text: loopNotice(over, {}) } });
    }
  }

  /**
   * What VS Code's own language servers report now (the Problems view's contents) for the files
   * the server names, or for every file when it names none (DIAG-5, VSC-110).
   */
  private onDiagnostics(p: DiagnosticsGetParams): DiagnosticsGetResult {
    const files: [string, vscode.Diagnostic[]][] = p.uris
      ? p.uris.map((u) => [u, vscode.languages.getDiagnostics(vscode.Uri.parse(u))])
      : vscode.languages.getDiagnostics().map(([uri, held]) => [uri.toString(), held]);
    return diagnosticsAnswer(files.filter(([, held]) => held.length > 0));
  }

  private async onQuestion(p: RequestPermissionParams, token: vscode.CancellationToken): Promise<PermissionReply> {
    this.setState('waiting');
    try {
      // Whether the person is looking is read before the question is drawn, which may bring the chat up.
      this.tell({ kind: 'question', title: p.title, askedBy: askedBy(p) }, p.questionId);
      const outcome = this.questions.ask(p, token);
      this.chat.setBadge(badge(this.questions.waitingCards));
      return { outcome: await outcome };
    } finally {
      this.setState(this.questions.pending > 0 ? 'waiting' : 'thinking');
      this.chat.setBadge(badge(this.questions.waitingCards));
    }
  }

  /**
   * Tells the person of `moment` when they are not looking at the chat in a focused window
   * (VSC-100); Show brings the chat up, and with it the question, when it still waits.
   */
  private tell(moment: Moment, questionId?: string): void {
    const text = notification(moment, { focused: vscode.window.state.focused, chatVisible: this.chat.visible }, this.config.notify);
    if (!text) return;
    const shown = moment.kind === 'question' ? vscode.window.showWarningMessage(text, showLabel) : vscode.window.showInformationMessage(text, showLabel);
    void shown.then((choice) => {
      if (choice !== showLabel) return;
      if (questionId) void this.questions.reveal(questionId);
      else void this.chat.reveal(true);
    });
  }

  dispose(): void {
    this.questions.refuseAll();
    // The server ends its sessions when it exits; a window closing tells it first where it can.
    if (this.client && this.sessionId) void request(this.client, 'bravebot/session/end', { sessionId: this.sessionId }).catch(() => undefined);
    void this.client?.stop();
    for (const d of this.disposables) d.dispose();
  }
}
