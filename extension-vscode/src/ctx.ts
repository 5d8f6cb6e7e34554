// The client's lifecycle and the session: starting and restarting the server, the current session,
// the status-bar item, and routing server notifications and questions to the chat and the editors.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { createClient } from './client';
import { Config, secretKey } from './config';
import {
  methods,
  type Mode,
  type PromptResult,
  type RequestPermissionParams,
  type PermissionReply,
  type UpdateNotification,
} from './protocol';
import type { ChatViewProvider } from './webview/provider';
import { Questions } from './questions';


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

  constructor(readonly extension: vscode.ExtensionContext, readonly chat: ChatViewProvider) {
    this.questions = new Questions(this);
    this.statusItem.command = 'bravebot.openChat';
    this.setState('idle');
    this.statusItem.show();
    this.disposables.push(
      this.output,
      this.statusItem,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (this.config.affectsServer(e)) void this.restart();
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

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    this.sessionId = undefined;
    this.questions.refuseAll();
    if (old) await old.stop().catch(() => undefined);
    this.chat.post({ type: 'reset' });
  }

  async session(): Promise<string> {
    if (this.sessionId) return this.sessionId;
    const client = await this.ensureClient();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const r = await client.sendRequest<{ sessionId: string }>(methods.sessionNew, cwd ? { cwd } : {});
    this.sessionId = r.sessionId;
    if (this.mode !== 'ask') await client.sendRequest(methods.sessionSetMode, { sessionId: r.sessionId, mode: this.mode });
    return r.sessionId;
  }

  async newSession(): Promise<void> {
    if (this.sessionId) await this.cancel();
    this.sessionId = undefined;
    this.chat.post({ type: 'reset' });
    await this.session();
  }

  async prompt(text: string, files: string[]): Promise<PromptResult> {
    const sessionId = await this.session();
    const client = await this.ensureClient();
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
