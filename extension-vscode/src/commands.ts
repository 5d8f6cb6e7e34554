// The extension's commands, each a function of the context; main.ts registers the table.

import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { secretKey } from './config';
import { modes, type AuditResult, type Mode, type StatusResult, type TrustResult } from './protocol';
import { vouchForFile } from './trustVouch';
import { checkSetup, chooseModel, getStarted, locateServer } from './setup';
import { auditMarkdown } from './auditView';
import { parseInterval, sessionRows, type SessionRow } from './sessions';
import { keepFromAgentParams, statusMarkdown, vouchedRules } from './statusView';
import { selectedLines } from './webview/transcript';
import { commentPrompt, linesWords } from './turnReview';
import { vettingPicks, vettingSetWords } from './autoVetting';

export type Command = (ctx: Ctx, ...args: any[]) => unknown;

type Row = vscode.QuickPickItem & { sessionId: string };

const deleteButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete this session' };

/** The recorded sessions as Quick Pick rows (the current one left out); unreadable ones are warned of. */
async function sessionPickRows(ctx: Ctx, withDelete: boolean): Promise<Row[]> {
  const r = await ctx.listSessions();
  for (const u of r.unreadable) void vscode.window.showWarningMessage(`bravebot: a session record cannot be read: ${u.sessionId}: ${u.error}`);
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return sessionRows(r.sessions, ctx.currentSession, root, Date.now() / 1000).map((row: SessionRow) => ({ ...row, buttons: withDelete ? [deleteButton] : [] }));
}

/** Deletes a session after the person confirms; whether it was deleted. */
async function confirmDelete(ctx: Ctx, row: Row): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(
    `Delete the session “${row.label}”?`,
    { modal: true, detail: 'Its record and audit trail are removed from ~/.bravebot/sessions and it can no longer be resumed. The prompt history keeps its prompts.' },
    'Delete',
  );
  if (choice !== 'Delete') return false;
  await ctx.deleteSession(row.sessionId);
  void vscode.window.showInformationMessage(`bravebot: deleted the session “${row.label}”`);
  return true;
}

/** One of the recorded sessions, picked by the person; none when they close the list. */
async function pickSession(ctx: Ctx, title: string, withDelete: boolean): Promise<Row | undefined> {
  const rows = await sessionPickRows(ctx, withDelete);
  if (rows.length === 0) {
    void vscode.window.showInformationMessage('bravebot: no other session is recorded under ~/.bravebot/sessions');
    return undefined;
  }
  const qp = vscode.window.createQuickPick<Row>();
  qp.title = title;
  qp.placeholder = withDelete ? 'Newest first. Enter resumes; the bin deletes.' : 'Newest first.';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.ignoreFocusOut = true;
  qp.items = rows;
  return new Promise<Row | undefined>((resolve) => {
    let done = false;
    const finish = (r: Row | undefined): void => {
      if (done) return;
      done = true;
      resolve(r);
      qp.dispose();
    };
    qp.onDidAccept(() => finish(qp.selectedItems[0]));
    qp.onDidHide(() => finish(undefined));
    qp.onDidTriggerItemButton(async (e) => {
      // The list stays put behind the confirmation and shows what is left.
      qp.busy = true;
      try {
        if (await confirmDelete(ctx, e.item)) qp.items = await sessionPickRows(ctx, withDelete);
      } finally {
        qp.busy = false;
      }
      if (qp.items.length === 0) finish(undefined);
      else qp.show();
    });
    qp.show();
  });
}

/** `Every 10 min` and the like, or self-paced, or another interval typed in. */
async function pickInterval(): Promise<number | null | undefined> {
  type Pace = vscode.QuickPickItem & { seconds: number | null | 'other' };
  const paces: Pace[] = [
    { label: 'Self-paced', description: 'each tick asks for the next itself', seconds: null },
    { label: 'Every minute', seconds: 60 },
    { label: 'Every 5 minutes', seconds: 300 },
    { label: 'Every 10 minutes', seconds: 600 },
    { label: 'Every 30 minutes', seconds: 1800 },
    { label: 'Every hour', seconds: 3600 },
    { label: 'Another interval…', description: 'as 90, 90s, 10m or 1h', seconds: 'other' },
  ];
  const pace = await vscode.window.showQuickPick(paces, { title: 'bravebot: how often the loop ticks', ignoreFocusOut: true });
  if (!pace) return undefined;
  if (pace.seconds !== 'other') return pace.seconds;
  const typed = await vscode.window.showInputBox({
    title: 'bravebot: the loop\'s interval',
    prompt: 'Seconds, or with a unit: 90, 90s, 10m, 1h. The server holds it between loop.minSeconds (a minute unless set) and an hour.',
    ignoreFocusOut: true,
    validateInput: (v) => (parseInterval(v) === undefined ? 'a whole number of seconds, minutes (m) or hours (h)' : undefined),
  });
  return typed === undefined ? undefined : parseInterval(typed);
}

function activeFile(uri?: vscode.Uri): string | undefined {
  const u = uri ?? vscode.window.activeTextEditor?.document.uri;
  return u?.scheme === 'file' ? u.fsPath : undefined;
}

export const commands: Record<string, Command> = {
  'bravebot.openChat': (ctx) => ctx.chat.reveal(true),

  'bravebot.newSession': (ctx) => ctx.newSession(),

  'bravebot.newIncognitoSession': async (ctx) => {
    await ctx.chat.reveal(false);
    await ctx.newSession({ incognito: true });
  },

  'bravebot.sessions': async (ctx) => {
    const row = await pickSession(ctx, 'bravebot: resume a session', true);
    if (!row) return;
    await ctx.chat.reveal(false);
    await ctx.resume(row.sessionId);
  },

  'bravebot.deleteSession': async (ctx) => {
    const row = await pickSession(ctx, 'bravebot: delete a session', false);
    if (row) await confirmDelete(ctx, row);
  },

  'bravebot.startLoop': async (ctx) => {
    const prompt = (await vscode.window.showInputBox({
      title: 'bravebot: the loop\'s prompt',
      prompt: 'Sent now and again at each tick, unchanged.',
      placeHolder: 'for example: check the build log and tell me what changed',
      ignoreFocusOut: true,
    }))?.trim();
    if (!prompt) return;
    const seconds = await pickInterval();
    if (seconds === undefined) return;
    await ctx.chat.reveal(false);
    await ctx.startLoop(prompt, seconds ?? undefined);
  },

  'bravebot.stopLoop': (ctx) => ctx.stopLoop(),

  'bravebot.cancel': (ctx) => ctx.cancel(),

  'bravebot.setMode': async (ctx, mode?: Mode) => {
    const picked = mode ?? ((await vscode.window.showQuickPick([...modes], { title: 'bravebot: mode', placeHolder: ctx.mode })) as Mode | undefined);
    if (picked) await ctx.setMode(picked);
  },

  // Turns auto-vetting on or off (VET-24): recorded in ~/.bravebot/vetting by the server, so it
  // holds over the settings key and for the sessions opened after; off reaches every open session.
  'bravebot.autoVetting': async (ctx, on?: boolean) => {
    const picked = on ?? (await vscode.window.showQuickPick(vettingPicks(ctx.autoVetting), {
      title: 'bravebot: auto-vetting',
      placeHolder: 'Whether a check that finds nothing answers for you before content nobody vouched for reaches the agent',
    }))?.on;
    if (picked === undefined) return;
    try {
      const r = await ctx.setAutoVetting(picked);
      void vscode.window.showInformationMessage(vettingSetWords(r.on, r.record));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      ctx.logError('auto-vetting', message);
      void vscode.window.showErrorMessage(`bravebot: auto-vetting was not changed: ${message}`);
    }
  },

  'bravebot.trustFile': async (ctx, uri?: vscode.Uri) => {
    const path = activeFile(uri);
    if (!path) return vscode.window.showWarningMessage('bravebot: open a file on disk to trust it');
    // A file a check judged unsafe is trusted only after a modal shows the verdict (VSC-73).
    const outcome = await vouchForFile(
      path,
      (params) => ctx.request<TrustResult>('bravebot/session/trust', params),
      async (message, detail, button) => vscode.window.showWarningMessage(message, { modal: true, detail }, button),
    );
    const shown = vscode.workspace.asRelativePath(path);
    void vscode.window.showInformationMessage(outcome === 'trusted' ? `bravebot: trusted ${shown} for this session` : `bravebot: did not trust ${shown}`);
  },

  // Takes a vouch back the one way the server allows (PROTO-28): a deny rule, which keeps the file
  // from every read for the rest of the session. The modal says so before anything is sent.
  'bravebot.keepFromAgent': async (ctx, uri?: vscode.Uri) => {
    const status = await ctx.request<StatusResult>('bravebot/session/status', {});
    const vouched = vouchedRules(status).map((r) => ({ label: r.path, description: r.scope === 'directory' ? 'a folder you vouched for' : 'a file you vouched for', path: r.path, scope: r.scope }));
    const given = activeFile(uri);
    const picked = given && uri ? { label: vscode.workspace.asRelativePath(given), path: given, scope: 'file' }
      : await vscode.window.showQuickPick(vouched.length ? vouched : [{ label: 'Another file…', description: 'the file open in the editor', path: activeFile() ?? '', scope: 'file' }],
        { title: 'bravebot: keep a file from the agent', placeHolder: vouched.length ? 'What you vouched for this session' : 'You vouched for nothing this session' });
    if (!picked?.path) return;
    const choice = await vscode.window.showWarningMessage(`Keep ${picked.label} from the agent?`, {
      modal: true,
      detail: 'The agent will not read, search or list it again in this session, not even through a check, and nobody is asked. This cannot be lifted in this session; a new session starts without it. What the agent read of it before stays in its context.',
    }, 'Keep it from the agent');
    if (choice !== 'Keep it from the agent') return;
    await ctx.request('bravebot/session/trust', keepFromAgentParams(picked));
    ctx.chat.post({ type: 'item', item: { kind: 'notice', text: `You kept ${picked.label} from the agent for the rest of this session.` } });
  },

  'bravebot.addDirectory': async (ctx, uri?: vscode.Uri) => {
    const dir = uri ?? (await vscode.window.showOpenDialog({ canSelectFiles: false, canSelectFolders: true, openLabel: 'Add directory' }))?.[0];
    if (!dir) return;
    await ctx.request('bravebot/session/trust', { path: dir.fsPath, scope: 'directory' });
    void vscode.window.showInformationMessage(`bravebot: added ${dir.fsPath}`);
  },

  'bravebot.showStatus': async (ctx) => ctx.showInfo('bravebot status', statusMarkdown(await ctx.request<StatusResult>('bravebot/session/status', {}))),

  'bravebot.showAudit': async (ctx) => {
    const { records } = await ctx.request<AuditResult>('bravebot/session/audit', {});
    await ctx.showInfo('bravebot audit trail', auditMarkdown(records, ctx.turns, new Date()));
  },

  'bravebot.addSelection': async (ctx) => {
    const e = vscode.window.activeTextEditor;
    if (!e || e.selection.isEmpty) return vscode.window.showInformationMessage('bravebot: select some text to add it to the chat');
    if (e.document.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(e.document.uri)) {
      return vscode.window.showInformationMessage('bravebot: select lines of a file inside the workspace to add them to the chat');
    }
    const rel = vscode.workspace.asRelativePath(e.document.uri, false);
    // The same lines the chip names (a selection ending at a line's start leaves that line out).
    // Only the place goes: the agent reads the lines from the file, under its own label (VSC-20).
    const place = { path: rel, ...selectedLines(e.selection.start.line, e.selection.end.line, e.selection.end.character) };
    await ctx.chat.reveal(true);
    ctx.chat.post({ type: 'addPlace', place });
  },

  // A comment on the selected range of a file for the agent (REVIEW-5): the person's words, and
  // the range as a place; the range's text stays in the file, read under its own label.
  'bravebot.commentForAgent': async (ctx) => {
    const e = vscode.window.activeTextEditor;
    if (!e || e.document.uri.scheme !== 'file') return vscode.window.showInformationMessage('bravebot: open a file and select the lines to comment on');
    const folder = vscode.workspace.getWorkspaceFolder(e.document.uri);
    if (!folder) return vscode.window.showInformationMessage('bravebot: comment on a file inside the workspace');
    const rel = vscode.workspace.asRelativePath(e.document.uri, false);
    // The cursor's line when nothing is selected; a selection ending at a line's start leaves that line out.
    const { startLine, endLine } = selectedLines(e.selection.start.line, e.selection.end.line, e.selection.end.character);
    const words = await vscode.window.showInputBox({
      title: `bravebot: comment for the agent on ${linesWords(startLine, endLine)} of ${rel}`,
      prompt: 'Your words start the next turn with this place; the agent reads the lines from the file itself.',
      placeHolder: 'What should the agent do here?',
      ignoreFocusOut: true,
    });
    if (words === undefined) return;
    const c = commentPrompt(rel, startLine, endLine, words);
    if (!c) return vscode.window.showInformationMessage('bravebot: the comment is empty, so nothing was sent');
    await ctx.chat.reveal(false);
    const r = await ctx.comment(c);
    if (r.stopReason === 'error') {
      const message = r.error?.message ?? 'the turn failed without a reason';
      ctx.chat.post({ type: 'item', item: { kind: 'notice', text: `The comment's turn failed: ${message}` } });
    }
  },

  'bravebot.markReviewed': (ctx, node) => ctx.turnReview.setReviewed(node, true),

  'bravebot.markUnreviewed': (ctx, node) => ctx.turnReview.setReviewed(node, false),

  'bravebot.openReviewHunk': (ctx, path: string, line: number) => ctx.turnReview.openHunk(path, line),

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

  'bravebot.checkpoints': (ctx) => ctx.checkpoints.pick(),

  'bravebot.refreshCheckpoints': async (ctx) => {
    await ctx.checkpoints.refresh();
  },

  'bravebot.checkpointDiff': (ctx, checkpointId: string, path: string) => ctx.checkpoints.showDiff(checkpointId, path),

  // From the Checkpoints view's inline actions: the node is the checkpoint's.
  'bravebot.restoreCheckpoint': async (ctx, node?: { checkpoint?: { checkpointId: string } }) => {
    if (node?.checkpoint) await ctx.checkpoints.restore(node.checkpoint.checkpointId, false);
    else await ctx.checkpoints.pick();
  },

  'bravebot.undoRestore': async (ctx, node?: { checkpoint?: { checkpointId: string } }) => {
    if (node?.checkpoint) await ctx.checkpoints.restore(node.checkpoint.checkpointId, true);
    else await ctx.checkpoints.pick();
  },
};
