// The sidebar chat view: owns the webview, queues messages until the page says it is ready, and
// passes the page's messages to the context.

import * as vscode from 'vscode';
import { MessageQueue } from '../messageQueue';
import type { FromWebview, ToWebview } from './transcript';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewId = 'bravebot.chat';
  private view: vscode.WebviewView | undefined;
  /** Names this extension host: a page restored after a window reload sees a new one. */
  private readonly epoch = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  private readonly queue = new MessageQueue<ToWebview>();
  onMessage: (m: FromWebview) => void = () => undefined;
  /** The view went away; cards shown in it can no longer be answered there. */
  onDispose: () => void = () => undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, vscode.Uri.joinPath(this.extensionUri, 'media')] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((m: FromWebview) => {
      if (m.type === 'ready') {
        void view.webview.postMessage({ type: 'hello', epoch: this.epoch } satisfies ToWebview);
        this.queue.ready((msg) => void view.webview.postMessage(msg));
      }
      else this.onMessage(m);
    });
    view.onDidDispose(() => {
      this.view = undefined;
      this.queue.detach();
      this.onDispose();
    });
  }

  post(message: ToWebview): void {
    this.queue.post(message);
  }

  /** Shows the view; `focus` moves the keyboard into it (Open Chat), otherwise focus stays put. */
  async reveal(focus = false): Promise<void> {
    if (this.view && !focus) this.view.show(true);
    else await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
  }

  private html(webview: vscode.Webview): string {
    const nonce = Array.from({ length: 32 }, () => Math.floor(Math.random() * 36).toString(36)).join('');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css'));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}"><title>bravebot</title></head>
<body>
<div id="toolbar" role="toolbar">
  <label for="mode">Mode</label>
  <select id="mode" title="ask: every change is asked about; accept edits: edits land unasked; plan: nothing changes"><option value="ask">ask</option><option value="acceptEdits">accept edits</option><option value="plan">plan</option></select>
  <button id="new" class="secondary" title="Start a new session">New</button>
  <button id="sessions" class="secondary" title="Resume or delete a recorded session">Sessions</button>
  <span id="session" hidden></span>
  <span id="state" aria-live="polite">idle</span>
</div>
<main id="log" aria-live="polite"></main>
<div id="silence" class="meta" role="status" hidden></div>
<div id="loopbar" role="status" hidden><span id="loop-label"></span> <button id="loop-stop" type="button" class="secondary" title="Stop the loop (bravebot/session/loop/stop); a tick already running goes on to its end">Stop loop</button></div>
<section id="questions" aria-label="Questions waiting for you"></section>
<form id="form"><ul id="mentions" role="listbox" aria-label="Workspace files" hidden></ul><div id="context" class="meta" hidden><span id="context-label"></span> <button id="context-toggle" type="button" class="secondary" title="Whether the file open in your editor (and what you selected) goes with the prompt">Leave out</button></div><textarea id="input" rows="3" placeholder="Ask bravebot; @path mentions a file. Ctrl+Enter sends." aria-label="Prompt"></textarea>
<div id="actions"><button id="cancel" type="button" class="secondary" title="Cancel the turn" disabled>Cancel</button><button id="send" type="submit">Send</button></div></form>
<script nonce="${nonce}" src="${script}"></script>
</body></html>`;
  }
}
