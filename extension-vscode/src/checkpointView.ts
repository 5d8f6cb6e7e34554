// The session's checkpoints (issue 34) in a tree view of their own ("Checkpoints"): each with its
// time, its title (the turn's prompt) and its files; a file opens VS Code's diff editor between its
// version then and now (read-only documents), and each checkpoint offers Restore (or, for the one a
// restore kept, Undo Restore) inline. The command bravebot: Checkpoints offers the same as a list.

import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { checkpointLabel, checkpointRows, filesSince, restorePrompt, restoredWords } from './checkpoints';
import type { Checkpoint, CheckpointDiffResult, CheckpointListResult, CheckpointRestoreResult } from './protocol';

export const checkpointScheme = 'bravebot-checkpoint';

type Node = { checkpoint: Checkpoint } | { checkpoint: Checkpoint; path: string };

export class Checkpoints implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private list: Checkpoint[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  /** The texts the diff editor shows, by document URI. */
  private readonly texts = new Map<string, string>();
  private readonly textChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly ctx: Ctx) {
    this.view = vscode.window.createTreeView('bravebot.checkpoints', { treeDataProvider: this });
    this.disposables.push(
      this.view,
      this.changed,
      this.textChanged,
      vscode.workspace.registerTextDocumentContentProvider(checkpointScheme, {
        // A diff opened again shows the file as it is now, not as it was the first time.
        onDidChange: this.textChanged.event,
        provideTextDocumentContent: (uri) => this.texts.get(uri.toString()) ?? '',
      }),
    );
  }

  /** Asks the server for the session's checkpoints again; none without a session. */
  async refresh(): Promise<Checkpoint[]> {
    try {
      this.list = this.ctx.currentSession ? (await this.ctx.request<CheckpointListResult>('bravebot/checkpoint/list', {})).checkpoints : [];
    } catch (err) {
      this.ctx.logError('checkpoint list', err instanceof Error ? err.message : String(err));
      this.list = [];
    }
    this.changed.fire();
    this.view.description = this.list.length ? `${this.list.length}` : undefined;
    await vscode.commands.executeCommand('setContext', 'bravebot.hasCheckpoints', this.list.length > 0);
    return this.list;
  }

  /** A new session: its list starts empty. */
  clear(): void {
    this.list = [];
    this.changed.fire();
    void vscode.commands.executeCommand('setContext', 'bravebot.hasCheckpoints', false);
  }

  getChildren(n?: Node): Node[] {
    if (!n) return this.list.map((checkpoint) => ({ checkpoint }));
    if ('path' in n) return [];
    return n.checkpoint.files.map((path) => ({ checkpoint: n.checkpoint, path }));
  }

  getTreeItem(n: Node): vscode.TreeItem {
    if ('path' in n) {
      const item = new vscode.TreeItem(n.path, vscode.TreeItemCollapsibleState.None);
      item.description = 'then ↔ now';
      item.tooltip = `${n.path}: its version before “${checkpointLabel(n.checkpoint)}” against the file now`;
      item.iconPath = new vscode.ThemeIcon('diff');
      item.command = { title: 'Show the difference', command: 'bravebot.checkpointDiff', arguments: [n.checkpoint.checkpointId, n.path] };
      return item;
    }
    const row = checkpointRows([n.checkpoint], Date.now() / 1000)[0];
    const item = new vscode.TreeItem(row.label, n.checkpoint.files.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = n.checkpoint.checkpointId;
    item.description = row.description;
    item.tooltip = `${row.label}\n${row.description}\n${row.detail}`;
    item.iconPath = new vscode.ThemeIcon(n.checkpoint.kind === 'restore' ? 'discard' : 'history');
    // The inline action: Restore, or Undo Restore on the checkpoint a restore kept.
    item.contextValue = n.checkpoint.kind === 'restore' ? 'restoreCheckpoint' : 'turnCheckpoint';
    return item;
  }

  /** Opens the diff editor between a file's version at a checkpoint and now, both read-only. */
  async showDiff(checkpointId: string, path: string): Promise<void> {
    const d = await this.ctx.request<CheckpointDiffResult>('bravebot/checkpoint/diff', { checkpointId, path });
    const c = this.list.find((x) => x.checkpointId === checkpointId);
    const side = (which: 'then' | 'now', text: string | null): vscode.Uri => {
      const uri = vscode.Uri.from({ scheme: checkpointScheme, path: `/${path}`, query: `${which}=${encodeURIComponent(checkpointId)}` });
      this.texts.set(uri.toString(), text ?? '');
      this.textChanged.fire(uri);
      return uri;
    };
    const then = side('then', d.then);
    const now = side('now', d.now);
    const before = d.then === null ? 'absent' : 'before';
    const after = d.now === null ? 'now: absent' : 'now';
    const title = `${path} (${before} “${c ? checkpointLabel(c) : checkpointId}” ↔ ${after})`;
    await vscode.commands.executeCommand('vscode.diff', then, now, title, { preview: true });
  }

  /**
   * Restores the workspace to a checkpoint, after a modal that says which files go back; a
   * restore's result is said in the chat, with Undo restore. `undo`: the checkpoint is one a
   * restore kept, so this undoes that restore.
   */
  async restore(checkpointId: string, undo: boolean): Promise<CheckpointRestoreResult | undefined> {
    const list = await this.refresh();
    const c = list.find((x) => x.checkpointId === checkpointId);
    const say = restorePrompt(c, filesSince(list, checkpointId), undo);
    const choice = await vscode.window.showWarningMessage(say.message, { modal: true, detail: say.detail }, say.button);
    if (choice !== say.button) return undefined;
    let r: CheckpointRestoreResult;
    try {
      r = await this.ctx.restoreCheckpoint(checkpointId);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.ctx.logError('restore', message);
      this.ctx.chat.post({ type: 'item', item: { kind: 'notice', text: `The restore did not run: ${message}` } });
      void vscode.window.showErrorMessage(`bravebot: the restore did not run: ${message}`);
      return undefined;
    } finally {
      void this.refresh();
    }
    const text = restoredWords(r, undo);
    // An undo is undone by restoring the checkpoint it kept in turn, from the list; the chat offers
    // Undo restore on a restore that changed something only, so a second click cannot flip the
    // files back and forth.
    const offerUndo = !undo && r.restored.length > 0;
    this.ctx.chat.post({ type: 'item', item: offerUndo ? { kind: 'restored', text, undoCheckpointId: r.undoCheckpointId } : { kind: 'restored', text } });
    void this.ctx.chat.reveal(false);
    return r;
  }

  /** bravebot: Checkpoints: the list as a quick pick, then what to do with the one picked. */
  async pick(): Promise<void> {
    const list = await this.refresh();
    if (list.length === 0) {
      void vscode.window.showInformationMessage('bravebot: no checkpoints yet in this session. One is kept before each turn that changes files.');
      return;
    }
    const rows = checkpointRows(list, Date.now() / 1000);
    const row = await vscode.window.showQuickPick(rows, { title: 'bravebot: checkpoints of this session', placeHolder: 'Newest first: the workspace before each turn (and before each restore)', matchOnDescription: true, matchOnDetail: true });
    if (!row) return;
    const c = list.find((x) => x.checkpointId === row.checkpointId);
    if (!c) return;
    const undo = c.kind === 'restore';
    type Action = vscode.QuickPickItem & { path?: string; restore?: boolean };
    const actions: Action[] = [
      { label: undo ? '$(discard) Undo restore…' : '$(discard) Restore to before this…', description: 'says which files go back before it changes any', restore: true },
      ...c.files.map((path) => ({ label: `$(diff) ${path}`, description: 'its version then against now', path })),
    ];
    const action = await vscode.window.showQuickPick(actions, { title: `bravebot: ${row.label}`, placeHolder: row.description });
    if (action?.restore) await this.restore(c.checkpointId, undo);
    else if (action?.path) await this.showDiff(c.checkpointId, action.path);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
