// The extension's commands, each a function of the context; main.ts registers the table.

import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { secretKey } from './config';
import { methods, modes, type AuditResult, type Mode, type StatusResult } from './protocol';
import { checkSetup, chooseModel, getStarted, locateServer } from './setup';
import { auditMarkdown } from './auditView';

export type Command = (ctx: Ctx, ...args: any[]) => unknown;

/** A read-only view of the server's answer (never a dirty Untitled file). */
async function showJson(ctx: Ctx, title: string, value: unknown): Promise<void> {
  await ctx.showInfo(title, `# ${title}\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`);
}

function activeFile(uri?: vscode.Uri): string | undefined {
  const u = uri ?? vscode.window.activeTextEditor?.document.uri;
  return u?.scheme === 'file' ? u.fsPath : undefined;
}

export const commands: Record<string, Command> = {
  'bravebot.openChat': (ctx) => ctx.chat.reveal(true),

  'bravebot.newSession': (ctx) => ctx.newSession(),

  'bravebot.cancel': (ctx) => ctx.cancel(),

  'bravebot.setMode': async (ctx, mode?: Mode) => {
    const picked = mode ?? ((await vscode.window.showQuickPick([...modes], { title: 'bravebot: mode', placeHolder: ctx.mode })) as Mode | undefined);
    if (picked) await ctx.setMode(picked);
  },

  'bravebot.trustFile': async (ctx, uri?: vscode.Uri) => {
    const path = activeFile(uri);
    if (!path) return vscode.window.showWarningMessage('bravebot: open a file on disk to trust it');
    await ctx.request(methods.sessionTrust, { path, scope: 'file' });
    void vscode.window.showInformationMessage(`bravebot: trusted ${vscode.workspace.asRelativePath(path)} for this session`);
  },

  'bravebot.addDirectory': async (ctx, uri?: vscode.Uri) => {
    const dir = uri ?? (await vscode.window.showOpenDialog({ canSelectFiles: false, canSelectFolders: true, openLabel: 'Add directory' }))?.[0];
    if (!dir) return;
    await ctx.request(methods.sessionTrust, { path: dir.fsPath, scope: 'directory' });
    void vscode.window.showInformationMessage(`bravebot: added ${dir.fsPath}`);
  },

  'bravebot.showStatus': async (ctx) => showJson(ctx, 'bravebot status', await ctx.request<StatusResult>(methods.sessionStatus, {})),

  'bravebot.showAudit': async (ctx) => {
    const { records } = await ctx.request<AuditResult>(methods.sessionAudit, {});
    await ctx.showInfo('bravebot audit trail', auditMarkdown(records, ctx.turns, new Date()));
  },

  'bravebot.addSelection': async (ctx) => {
    const e = vscode.window.activeTextEditor;
    if (!e || e.selection.isEmpty) return vscode.window.showInformationMessage('bravebot: select some text to add it to the chat');
    const rel = vscode.workspace.asRelativePath(e.document.uri);
    const a = e.selection.start.line + 1;
    const b = e.selection.end.line + 1;
    const text = e.document.getText(e.selection);
    const fence = text.includes('```') ? '~~~~' : '```';
    await ctx.chat.reveal(true);
    ctx.chat.post({ type: 'insertPrompt', text: `${rel} (${a === b ? `line ${a}` : `lines ${a}-${b}`}):\n${fence}\n${text}\n${fence}\n` });
  },

  'bravebot.locateServer': (ctx) => locateServer(ctx),

  'bravebot.chooseModel': (ctx) => chooseModel(ctx),

  'bravebot.checkSetup': (ctx) => checkSetup(ctx),

  'bravebot.getStarted': () => getStarted(),

  'bravebot.openSettings': () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:brave.bravebot'),

  'bravebot.showLog': (ctx) => ctx.output.show(true),

  'bravebot.setApiKey': async (ctx) => {
    const key = await vscode.window.showInputBox({ title: 'bravebot: model API key', password: true, ignoreFocusOut: true, prompt: 'Kept in SecretStorage; an empty value removes it.' });
    if (key === undefined) return;
    if (key) await ctx.extension.secrets.store(secretKey, key);
    else await ctx.extension.secrets.delete(secretKey);
    await ctx.restart('The API key changed, so bravebot started again: a new session began.');
  },

  'bravebot.acceptProposal': (ctx, uri?: vscode.Uri) => ctx.questions.answerProposal(true, uri),

  'bravebot.rejectProposal': (ctx, uri?: vscode.Uri) => ctx.questions.answerProposal(false, uri),

  // The keys' own commands: a title-bar item with a keybinding is drawn with the key under its
  // word, cut off by the tab bar, so the words and the keys are separate commands.
  'bravebot.acceptProposalByKey': (ctx) => ctx.questions.answerProposal(true),

  'bravebot.rejectProposalByKey': (ctx) => ctx.questions.answerProposal(false),

  'bravebot.reviewProposal': (ctx, questionId: string) => ctx.questions.review.show(questionId),

  'bravebot.toggleHunk': (ctx, questionId: string, index: number) => ctx.questions.toggleHunk(questionId, index),
};
