// The client's lifecycle and the session: starting and restarting the server, the current session,
// the status-bar item, and routing server notifications and questions to the chat and the editors.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { createClient } from './client';
import { Config, secretKey } from './config';
import type { TurnMark } from './auditView';
import {
  type AuditResult,
  methods,
  type Mode,
  type PromptResult,
  type RequestPermissionParams,
  type PermissionReply,
  type UpdateNotification,
} from './protocol';
import type { ChatViewProvider } from './webview/provider';
import { Questions } from './questions';
import { refreshSetup, resolveServer } from './setup';

export const infoScheme = 'bravebot-info';


export type SessionState = 'idle' | 'thinking' | 'waiting';

export class Ctx implements vscode.Disposable {
  readonly config = new Config();
  readonly output = vscode.window.createOutputChannel('bravebot');
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private sessionId: string | undefined;
  private state: SessionState = 'idle';
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  private readonly disposables: vscode.Disposable[] = [];
  readonly questions: Questions;
  mode: Mode = 'ask';
  /** While set, settings changes do not restart the server (chooseModel writes three at once). */
  private batching = false;
  /** Read-only documents (status, audit, the setup check) by path. */
  private readonly infos = new Map<string, string>();
  private readonly infoChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(readonly extension: vscode.ExtensionContext, readonly chat: ChatViewProvider) {
    this.questions = new Questions(this);
    this.statusItem.command = 'bravebot.openChat';
    this.setState('idle');
    this.statusItem.show();
    this.disposables.push(
      this.output,
      this.statusItem,
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

  setState(state: SessionState): void {
    this.state = state;
    const text = { idle: '$(hubot) bravebot', thinking: '$(loading~spin) bravebot: thinking', waiting: '$(bell) bravebot: waiting for you' }[state];
    this.statusItem.text = text;
    this.statusItem.tooltip = `bravebot is ${state === 'waiting' ? 'waiting for you' : state}; click to open the chat`;
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
    await client.start();
    this.client = client;
    return client;
  }

  async restart(notice?: string): Promise<void> {
    const old = this.client;
    this.client = undefined;
    const hadSession = this.sessionId !== undefined;
    this.sessionId = undefined;
    this.questions.refuseAll();
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
    const client = await this.ensureClient();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const r = await client.sendRequest<{ sessionId: string }>(methods.sessionNew, cwd ? { cwd } : {});
    this.sessionId = r.sessionId;
    this.turns = [];
    if (this.mode !== 'ask') await client.sendRequest(methods.sessionSetMode, { sessionId: r.sessionId, mode: this.mode });
    return r.sessionId;
  }

  /**
   * Starts a new session. A running turn is not dropped silently: the person is asked first,
   * and the turn is cancelled (its questions refused) only if they say so.
   */
  async newSession(): Promise<void> {
    if (this.state !== 'idle') {
      const choice = await vscode.window.showWarningMessage(
        'bravebot is still working on a turn. Start a new session and cancel it?',
        { modal: true },
        'Cancel the turn and start anew',
      );
      if (!choice) return;
    }
    if (this.sessionId) await this.cancel();
    this.sessionId = undefined;
    this.chat.post({ type: 'reset', notice: 'A new session began.' });
    await this.session();
  }

  /** The prompts of this session, for the audit view's turns (see auditView.ts). */
  turns: TurnMark[] = [];

  async prompt(text: string, files: string[]): Promise<PromptResult> {
    const sessionId = await this.session();
    const client = await this.ensureClient();
    // How many gate decisions came before this turn: the audit view groups the rest under it.
    const before = await client.sendRequest<AuditResult>(methods.sessionAudit, { sessionId });
    if (this.sessionId === sessionId) this.turns.push({ at: new Date(), text, recordsBefore: before.records.length });
    this.setState('thinking');
    try {
      return await client.sendRequest<PromptResult>(methods.sessionPrompt, { sessionId, text, files });
    } finally {
      this.setState('idle');
    }
  }

  async cancel(): Promise<void> {
    if (!this.client || !this.sessionId) return;
    await this.client.sendNotification(methods.sessionCancel, { sessionId: this.sessionId });
    this.questions.refuseAll();
  }

  async setMode(mode: Mode): Promise<void> {
    this.mode = mode;
    this.chat.post({ type: 'mode', mode });
    if (this.client && this.sessionId) await this.client.sendRequest(methods.sessionSetMode, { sessionId: this.sessionId, mode });
  }

  async request<R>(method: string, params: object): Promise<R> {
    const sessionId = await this.session();
    const client = await this.ensureClient();
    return client.sendRequest<R>(method, { sessionId, ...params });
  }

  private onUpdate(n: UpdateNotification): void {
    if (n.sessionId !== this.sessionId) return;
    this.chat.post({ type: 'update', update: n.update });
  }

  private async onQuestion(p: RequestPermissionParams, token: vscode.CancellationToken): Promise<PermissionReply> {
    this.setState('waiting');
    try {
      return { outcome: await this.questions.ask(p, token) };
    } finally {
      this.setState(this.questions.pending > 0 ? 'waiting' : 'thinking');
    }
  }

  dispose(): void {
    this.questions.refuseAll();
    void this.client?.stop();
    for (const d of this.disposables) d.dispose();
  }
}
