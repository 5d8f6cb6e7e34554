// Activation: builds the context, registers the chat view and the command table.

import * as vscode from 'vscode';
import { commands } from './commands';
import { Ctx } from './ctx';
import { ChatViewProvider } from './webview/provider';
import { allowedCommands, contextToSend, promptRanges, selectedLines, sentLabel, withContext, type EditorContext, type FromWebview, type Place } from './webview/transcript';
import type { Mode } from './protocol';
import { explainError } from './explain';
import { refreshSetup } from './setup';
import { unsavedFiles } from './questions';
import { rankMentions } from './webview/mentionComplete';

let ctx: Ctx | undefined;

export function activate(extension: vscode.ExtensionContext): void {
  const chat = new ChatViewProvider(extension.extensionUri);
  const c = new Ctx(extension, chat);
  ctx = c;
  chat.onMessage = (m) => void onChatMessage(c, m).catch((err) => report(c, err));
  // A card nobody can see any more is refused, not left waiting.
  chat.onDispose = () => c.questions.refuseCards();
  void refreshSetup(c);
  // The editor the person is in is offered to the chat as context for the next prompt.
  const postContext = (): void => c.chat.post({ type: 'context', context: editorContext() });
  postContext();
  // An empty tree: the view exists to show its welcome content while the program is missing.
  const setupView = vscode.window.createTreeView('bravebot.setup', { treeDataProvider: { getChildren: () => [], getTreeItem: (x: vscode.TreeItem) => x } });
  extension.subscriptions.push(
    setupView,
    vscode.window.onDidChangeActiveTextEditor(postContext),
    vscode.window.onDidChangeTextEditorSelection((e) => e.textEditor === vscode.window.activeTextEditor && postContext()),
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
    case 'prompt':
    case 'retry': {
      // A place Add Selection to Chat added is not sent a second time as the chip's selection.
      const added = m.ranges ?? [];
      const context = m.type === 'prompt' ? contextToSend(m.context, added) : m.context;
      c.chat.post({ type: 'user', text: m.text, context: sentLabel(context, added), sent: { text: m.text, files: m.files, context, ranges: added } });
      return runPrompt(c, m.text, m.files, context, added);
    }
    case 'saveAll': {
      await Promise.all(unsavedFiles().map((d) => d.save()));
      const files = unsavedFiles().map((d) => vscode.workspace.asRelativePath(d.uri));
      c.chat.post({ type: 'unsaved', questionId: m.questionId, files });
      return;
    }
    case 'complete': {
      // Workspace files only (files.exclude applies, and build and dependency folders are left
      // out); the page ranks them.
      const found = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git,target,dist,out}/**', 5000);
      const paths = rankMentions(found.map((u) => vscode.workspace.asRelativePath(u, false)), m.query, 10);
      c.chat.post({ type: 'completions', seq: m.seq, paths });
      return;
    }
    case 'copy':
      await vscode.env.clipboard.writeText(m.text);
      void vscode.window.setStatusBarMessage('bravebot: code copied', 3000);
      return;
    case 'insert': {
      // The editor the person last worked in; never a proposal's side of a diff.
      const editor = [vscode.window.activeTextEditor, ...vscode.window.visibleTextEditors].find((e) => e && e.document.uri.scheme !== 'bravebot-proposal');
      if (!editor) {
        void vscode.window.showInformationMessage('bravebot: open an editor to insert the code into');
        return;
      }
      await editor.edit((b) => b.replace(editor.selection, m.text));
      return;
    }
    case 'command':
      // The page may run only the setup commands its error buttons name.
      if (allowedCommands.includes(m.command)) await vscode.commands.executeCommand(m.command);
      return;
    case 'cancel':
      return c.cancel();
    case 'newSession':
      return c.newSession();
    case 'wantHistory':
      c.chat.post({ type: 'history', entries: await c.history() });
      return;
    case 'stopLoop':
      return c.stopLoop();
    case 'show':
      return c.showSlot(m.ref);
    case 'setMode':
      return c.setMode(m.mode as Mode);
    case 'answer':
      return c.questions.answerCard(m.questionId, m.optionId, m.text);
    case 'openCopy':
      return c.questions.openCopy(m.questionId);
    case 'restore':
      // Asks the person, saying which files go back, before anything changes.
      await c.checkpoints.restore(m.checkpointId, m.undo);
      return;
    case 'ready':
      return;
  }
}

/** Sends a prompt; a turn that fails says why in the chat where it ended, with a Retry. */
async function runPrompt(c: Ctx, text: string, files: string[], context: EditorContext | undefined, added: Place[]): Promise<void> {
  let message: string | undefined;
  // The list of changes is the turn's: a new prompt starts it anew.
  c.questions.review.clear();
  try {
    // The selection and the added places go as places (`ranges`): their text stays in the file.
    const r = await c.prompt(withContext(text, context), files, promptRanges(context, added));
    if (r.stopReason === 'error') message = r.error?.message ?? 'the turn failed without a reason';
  } catch (err) {
    message = err instanceof Error ? err.message : String(err);
  }
  if (message === undefined) return;
  c.logError('prompt', message);
  const e = explainError(message, { serverPath: c.config.serverPath, baseUrl: c.config.model.baseUrl ?? '' });
  c.chat.post({ type: 'item', item: { kind: 'error', text: e.text, hint: e.hint, action: e.action, retry: { text, files, context, ranges: added } } });
}

/** The active file editor and its selection; none for anything but a file (a diff's proposal, output). */
export function editorContext(): EditorContext | undefined {
  const e = vscode.window.activeTextEditor;
  if (!e || e.document.uri.scheme !== 'file') return undefined;
  const path = vscode.workspace.asRelativePath(e.document.uri);
  const sel = e.selection;
  if (sel.isEmpty) return { path };
  return { path, selection: selectedLines(sel.start.line, sel.end.line, sel.end.character) };
}

function report(c: Ctx, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  c.logError('command', message);
  void vscode.window.showErrorMessage(`bravebot: ${message}`);
}
