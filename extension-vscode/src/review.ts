// The files a turn proposed to change, in a tree view of their own ("Changes this turn"): each
// with where its question stands (waiting, accepted, some hunks, the person's version, rejected,
// not answered). Clicking a waiting one shows its diff again; an answered one opens the file.

import * as vscode from 'vscode';
import type { Outcome, RequestPermissionParams } from './protocol';
import { reviewState } from './questionKinds';

interface Entry {
  questionId: string;
  path: string;
  uri?: vscode.Uri;
  state: string;
  pending: boolean;
}

export class Review implements vscode.TreeDataProvider<Entry>, vscode.Disposable {
  private entries: Entry[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Entry>;

  constructor(private readonly reopen: (questionId: string) => Promise<void>) {
    this.view = vscode.window.createTreeView('bravebot.review', { treeDataProvider: this });
    void this.draw();
  }

  /** A new turn: its list starts empty. */
  clear(): void {
    this.entries = [];
    void this.draw();
  }

  asked(p: RequestPermissionParams): void {
    const uri = p.subject.uri ? vscode.Uri.parse(p.subject.uri) : undefined;
    this.entries.push({ questionId: p.questionId, path: p.subject.path ?? uri?.fsPath ?? '?', uri, state: 'waiting for you', pending: true });
    void this.draw();
  }

  answered(p: RequestPermissionParams, outcome: Outcome): void {
    const e = this.entries.find((x) => x.questionId === p.questionId);
    if (!e) return;
    e.state = reviewState(p, outcome);
    e.pending = false;
    void this.draw();
  }

  getChildren(): Entry[] {
    return this.entries;
  }

  getTreeItem(e: Entry): vscode.TreeItem {
    const item = new vscode.TreeItem(e.path, vscode.TreeItemCollapsibleState.None);
    item.description = e.state;
    item.tooltip = `${e.path}: ${e.state}${e.pending ? ' (click to review)' : ''}`;
    item.iconPath = new vscode.ThemeIcon(e.pending ? 'diff' : e.state.startsWith('accepted') ? 'check' : 'close');
    item.command = e.pending
      ? { title: 'Review', command: 'bravebot.reviewProposal', arguments: [e.questionId] }
      : e.uri ? { title: 'Open', command: 'vscode.open', arguments: [e.uri] } : undefined;
    return item;
  }

  async show(questionId: string): Promise<void> {
    await this.reopen(questionId);
  }

  private async draw(): Promise<void> {
    this.changed.fire();
    const waiting = this.entries.filter((e) => e.pending).length;
    this.view.badge = waiting ? { value: waiting, tooltip: `${waiting} proposed change(s) waiting for you` } : undefined;
    // The list opens collapsed, so the chat and its cards keep their room: its header says what is in it.
    this.view.description = this.entries.length ? `${this.entries.length} file${this.entries.length === 1 ? '' : 's'}${waiting ? `, ${waiting} waiting` : ''}` : undefined;
    await vscode.commands.executeCommand('setContext', 'bravebot.hasProposals', this.entries.length > 0);
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
