// The sidebar chat view: owns the webview, queues messages until the page says it is ready, and
// passes the page's messages to the context.

import * as vscode from 'vscode';
import { MessageQueue } from '../messageQueue';
import type { FromWebview, ToWebview } from './transcript';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewId = 'bravebot.chat';
  private view: vscode.WebviewView | undefined;
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
      if (m.type === 'ready') this.queue.ready((msg) => void view.webview.postMessage(msg));
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
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}"><title>bravebot</title></head>
<body>
<div id="toolbar" role="toolbar">
  <label for="mode">Mode</label>
  <select id="mode"><option value="ask">ask</option><option value="acceptEdits">acceptEdits</option><option value="plan">plan</option></select>
  <button id="new" title="New session">New</button>
  <button id="cancel" title="Cancel the turn">Cancel</button>
  <span id="state" aria-live="polite">idle</span>
</div>
<main id="log" aria-live="polite"></main>
<section id="questions" aria-label="Questions waiting for you"></section>
<form id="form"><textarea id="input" rows="3" placeholder="Ask bravebot; @path mentions a file. Ctrl+Enter sends." aria-label="Prompt"></textarea>
<button id="send" type="submit">Send</button></form>
<script nonce="${nonce}" src="${script}"></script>
</body></html>`;
  }
}
