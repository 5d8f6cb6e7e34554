// Activation: builds the context, registers the chat view and the command table.

import * as vscode from 'vscode';
import { commands } from './commands';
import { Ctx } from './ctx';
import { ChatViewProvider } from './webview/provider';
import type { FromWebview } from './webview/transcript';
import type { Mode } from './protocol';

let ctx: Ctx | undefined;

export function activate(extension: vscode.ExtensionContext): void {
  const chat = new ChatViewProvider(extension.extensionUri);
  const c = new Ctx(extension, chat);
  ctx = c;
  chat.onMessage = (m) => void onChatMessage(c, m).catch((err) => report(c, err));
  // A card nobody can see any more is refused, not left waiting.
  chat.onDispose = () => c.questions.refuseCards();
  extension.subscriptions.push(
    c,
    c.questions,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    ...Object.entries(commands).map(([name, run]) =>
      vscode.commands.registerCommand(name, async (...args: unknown[]) => {
        try {
          return await run(c, ...args);
        } catch (err) {
          report(c, err);
        }
      }),
    ),
  );
}

export async function deactivate(): Promise<void> {
  ctx?.dispose();
  ctx = undefined;
}

async function onChatMessage(c: Ctx, m: FromWebview): Promise<void> {
  switch (m.type) {
    case 'prompt': {
      c.chat.post({ type: 'user', text: m.text });
      const r = await c.prompt(m.text, m.files);
      if (r.stopReason === 'error') void vscode.window.showErrorMessage(`bravebot: ${r.error?.message ?? 'the turn failed'}`);
      return;
    }
    case 'cancel':
      return c.cancel();
    case 'newSession':
      return c.newSession();
    case 'setMode':
      return c.setMode(m.mode as Mode);
    case 'answer':
      return c.questions.answerCard(m.questionId, m.optionId, m.text);
    case 'ready':
      return;
  }
}

function report(c: Ctx, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  c.output.appendLine(`error: ${message}`);
  void vscode.window.showErrorMessage(`bravebot: ${message}`);
}
