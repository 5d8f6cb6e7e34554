// The sidebar chat view: owns the webview, queues messages until the page says it is ready, and
// passes the page's messages to the context.

import * as vscode from 'vscode';
import { MessageQueue } from '../messageQueue';
import { chatPage } from './page';
import type { FromWebview, ToWebview } from './transcript';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewId = 'bravebot.chat';
  private view: vscode.WebviewView | undefined;
  private badge: { value: number; tooltip: string } | undefined;
  /** Names this extension host: a page restored after a window reload sees a new one. */
  private readonly epoch = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  private readonly queue = new MessageQueue<ToWebview>();
  onMessage: (m: FromWebview) => void = () => undefined;
  /** The view went away; cards shown in it can no longer be answered there. */
  onDispose: () => void = () => undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.badge = this.badge;
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

  /** Whether the chat is showing now. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Counts the questions waiting on the view's badge (VSC-101); kept for a view not made yet. */
  setBadge(b: { value: number; tooltip: string } | undefined): void {
    this.badge = b;
    if (this.view) this.view.badge = b;
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
    return chatPage({
      cspSource: webview.cspSource,
      nonce,
      script: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js')).toString(),
      style: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css')).toString(),
    });
  }
}
