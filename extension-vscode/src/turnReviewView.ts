// "Review This Turn" (issue 36): after a turn that changed files, a tree of each file the turn's
// checkpoint lists, with its hunks against the checkpoint made before the turn. A file opens the
// diff (then ↔ now), a hunk opens the file at its lines, and each file can be marked reviewed: the
// mark is the extension's own and lasts only while the file holds what it held when marked.
// Comment for the Agent (editor context menu) starts the next turn with the person's words and the
// selected range's place (turnReview.ts says what is sent).

import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import type { CheckpointDiffResult } from './protocol';
import { hunkDescription, hunkLabel, hunkLine, parseHunks, reviewSummary, ReviewedMarks, type ReviewHunk } from './turnReview';

interface FileEntry { path: string; now: string | null; hunks: ReviewHunk[]; error?: string }
type Node = { file: FileEntry } | { file: FileEntry; hunk: ReviewHunk };

export class TurnReview implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private checkpointId: string | undefined;
  private sessionId: string | undefined;
  private files: FileEntry[] = [];
  private readonly marks = new ReviewedMarks();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[] = [];
  private reloading: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly ctx: Ctx) {
    this.view = vscode.window.createTreeView('bravebot.turnReview', { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.changed,
      // A file of the list changed (typed, saved, or written by a later turn): its hunks are read
      // again, and a reviewed mark made on other text no longer shows.
      vscode.workspace.onDidChangeTextDocument((e) => this.touched(e.document.uri)),
      vscode.workspace.onDidSaveTextDocument((d) => this.touched(d.uri)),
    );
  }

  /** The turn that just ended changed `files`; `checkpointId` is the checkpoint made before it. */
  async load(sessionId: string, checkpointId: string, files: readonly string[]): Promise<void> {
    this.sessionId = sessionId;
    this.checkpointId = checkpointId;
    this.files = files.map((path) => ({ path, now: null, hunks: [] }));
    await this.readAll();
  }

  /** A new session: nothing to review. */
  clear(): void {
    this.checkpointId = undefined;
    this.files = [];
    void this.draw();
  }

  /** The paths listed now, for the e2e suite and the comment's check. */
  get paths(): string[] {
    return this.files.map((f) => f.path);
  }

  private touched(uri: vscode.Uri): void {
    if (uri.scheme !== 'file' || !this.files.some((f) => this.uriOf(f.path)?.toString() === uri.toString())) return;
    if (this.reloading) clearTimeout(this.reloading);
    this.reloading = setTimeout(() => void this.readAll(), 300);
  }

  private async readAll(): Promise<void> {
    const id = this.checkpointId;
    if (!id) return this.draw();
    await Promise.all(this.files.map(async (f) => {
      try {
        const d = await this.ctx.request<CheckpointDiffResult>('bravebot/checkpoint/diff', { checkpointId: id, path: f.path });
        f.now = d.now;
        f.hunks = parseHunks(d.diff);
        f.error = undefined;
      } catch (err) {
        f.error = err instanceof Error ? err.message : String(err);
      }
    }));
    await this.draw();
  }

  private reviewed(f: FileEntry): boolean {
    return this.sessionId !== undefined && f.error === undefined && this.marks.isReviewed(this.sessionId, f.path, f.now);
  }

  private uriOf(path: string): vscode.Uri | undefined {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    return root ? vscode.Uri.joinPath(root, path) : undefined;
  }

  getChildren(n?: Node): Node[] {
    if (!n) return this.files.map((file) => ({ file }));
    if ('hunk' in n) return [];
    return n.file.hunks.map((hunk) => ({ file: n.file, hunk }));
  }

  getTreeItem(n: Node): vscode.TreeItem {
    if ('hunk' in n) {
      const item = new vscode.TreeItem(hunkLabel(n.hunk), vscode.TreeItemCollapsibleState.None);
      item.description = hunkDescription(n.hunk);
      item.iconPath = new vscode.ThemeIcon('diff-modified');
      item.tooltip = `${n.file.path}, ${hunkLabel(n.hunk)}: open the file there`;
      item.command = { title: 'Open at the hunk', command: 'bravebot.openReviewHunk', arguments: [n.file.path, hunkLine(n.hunk)] };
      return item;
    }
    const f = n.file;
    const done = this.reviewed(f);
    const item = new vscode.TreeItem(f.path, f.hunks.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.id = `${this.checkpointId}:${f.path}`;
    const count = f.now === null && !f.error ? 'removed' : `${f.hunks.length} hunk${f.hunks.length === 1 ? '' : 's'}`;
    item.description = f.error ? `cannot show: ${f.error}` : `${count} · ${done ? 'reviewed' : 'not reviewed'}`;
    item.iconPath = new vscode.ThemeIcon(done ? 'pass-filled' : 'circle-large-outline');
    item.tooltip = `${f.path}: ${done ? 'reviewed' : 'not reviewed yet'}. Click to see its diff against the checkpoint before the turn.`;
    item.contextValue = done ? 'reviewedFile' : 'unreviewedFile';
    item.command = { title: 'Show the difference', command: 'bravebot.checkpointDiff', arguments: [this.checkpointId, f.path] };
    return item;
  }

  /** Mark as Reviewed / Mark as Not Reviewed on a file's row. */
  setReviewed(n: Node | undefined, reviewed: boolean): void {
    const f = n?.file;
    if (!f || !this.sessionId) return;
    if (reviewed) this.marks.mark(this.sessionId, f.path, f.now);
    else this.marks.unmark(this.sessionId, f.path);
    void this.draw();
  }

  async openHunk(path: string, line: number): Promise<void> {
    const uri = this.uriOf(path);
    if (!uri) return;
    const at = new vscode.Position(Math.max(0, line - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(at, at), preview: true });
  }

  private async draw(): Promise<void> {
    this.changed.fire();
    const reviewed = this.files.filter((f) => this.reviewed(f)).length;
    this.view.description = reviewSummary(this.files.length, reviewed) || undefined;
    // No badge: the activity bar's count is for what waits on the person (questions, proposals,
    // VSC-100); an unreviewed file is theirs to look at when they like, and the description says so.
    await vscode.commands.executeCommand('setContext', 'bravebot.hasTurnReview', this.files.length > 0);
  }

  dispose(): void {
    if (this.reloading) clearTimeout(this.reloading);
    for (const d of this.disposables) d.dispose();
  }
}
