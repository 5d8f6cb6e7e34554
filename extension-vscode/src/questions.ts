// Puts the server's questions to the person, one surface per kind (see questionKinds.ts): edit and
// write in VS Code's diff editor, everything else as a card in the sidebar (untrusted content inside
// its own frame, askUser with a box for the person's own words). Closing, dismissing or cancelling
// any of them refuses.

import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { HunkSelection, applyHunks, hunkMarks, previewStarts, textsOf, type HunkMark } from './hunks';
import type { AnswerArguments, AnswerResult, Outcome, RequestPermissionParams } from './protocol';
import { approvingOption, askedBy, cancelled, describe, diffAnswer, isApproving, presentationOf, reviewState, select } from './questionKinds';
import { answeredItem } from './webview/transcript';
import { Review } from './review';
import { restoreVersions } from './checkpoints';

export const proposalScheme = 'bravebot-proposal';
export const originalScheme = 'bravebot-original';

interface Pending {
  params: RequestPermissionParams;
  resolve: (o: Outcome) => void;
  hunks?: HunkSelection;
  proposalUri?: vscode.Uri;
  /** What the proposal side shows: the proposal with the hunks left out put back as they were. */
  shown?: string;
  /** The open document the proposal would change, when it had no unsaved changes when asked. */
  cleanTarget?: vscode.TextDocument;
  /** The verdicts given hunk by hunk from the file's own editor (code actions). */
  decided?: Map<number, boolean>;
}

/** How a waiting proposal's hunks are drawn in the file's own editor: lines marked, words after them. */
const markStyles: Record<HunkMark, vscode.DecorationRenderOptions> = {
  pending: {
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
    after: { contentText: '  bravebot proposes a change here: Ctrl+. to accept or reject it', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
  },
  accepted: {
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    after: { contentText: '  hunk accepted: it lands once every hunk has a verdict', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
  },
  rejected: {
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
    after: { contentText: '  hunk rejected: these lines stay as they are', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
  },
};

/** Writable in-memory documents holding proposals, so the person can edit one before accepting. */
class ProposalFs implements vscode.FileSystemProvider {
  private readonly files = new Map<string, Uint8Array>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  set(uri: vscode.Uri, text: string): void {
    this.files.set(keyOf(uri), new TextEncoder().encode(text));
  }
  delete(uri: vscode.Uri): void {
    this.files.delete(keyOf(uri));
  }
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(keyOf(uri));
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: 0, mtime: Date.now(), size: f.byteLength };
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {}
  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(keyOf(uri));
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f;
  }
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    this.files.set(keyOf(uri), content);
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions('proposals cannot be renamed');
  }
}

export class Questions implements vscode.Disposable, vscode.CodeLensProvider {
  private readonly pendingById = new Map<string, Pending>();
  private readonly fs = new ProposalFs();
  private readonly originals = new Map<string, string>();
  private readonly lensChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly marks = Object.fromEntries(Object.entries(markStyles).map(([k, o]) => [k, vscode.window.createTextEditorDecorationType(o)])) as Record<HunkMark, vscode.TextEditorDecorationType>;
  /** A proposal was just answered in its editor: the next card takes the keyboard focus. */
  private focusNextCard = false;
  /** Every file the turn proposed to change, and where its question stands. */
  readonly review = new Review((id) => this.reopen(id));

  constructor(private readonly ctx: Ctx) {
    this.disposables.push(
      this.review,
      vscode.workspace.registerFileSystemProvider(proposalScheme, this.fs, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(originalScheme, {
        provideTextDocumentContent: (uri) => this.originals.get(keyOf(uri)) ?? '',
      }),
      vscode.languages.registerCodeLensProvider({ scheme: proposalScheme }, this),
      ...Object.values(this.marks),
      vscode.window.onDidChangeVisibleTextEditors(() => this.drawMarks()),
      // Typing into a proposal changes what its lenses say (VSC-85).
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === proposalScheme) this.lensChanged.fire();
      }),
      // Closing the diff without answering refuses.
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === proposalScheme) {
            const id = questionIdOf(input.modified);
            if (id) this.finish(id, cancelled);
          }
        }
      }),
    );
  }

  get pending(): number {
    return this.pendingById.size;
  }

  /** The questions waiting as cards in the chat: a proposal is counted by Changes This Turn's own badge. */
  get waitingCards(): number {
    return [...this.pendingById.values()].filter((p) => presentationOf(p.params.kind) !== 'diff').length;
  }

  /** Asks one question; resolves with the outcome to send. The token is the server cancelling. */
  ask(params: RequestPermissionParams, token: vscode.CancellationToken): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const p: Pending = { params, resolve };
      this.pendingById.set(params.questionId, p);
      token.onCancellationRequested(() => this.finish(params.questionId, cancelled));
      const run = async (): Promise<void> => {
        switch (presentationOf(params.kind)) {
          case 'diff':
            return this.showDiff(p);
          case 'card':
          case 'content':
            return this.showCard(p);
        }
      };
      run().catch((err) => {
        this.ctx.output.appendLine(`the ${params.kind} question failed: ${String(err)}`);
        this.finish(params.questionId, cancelled);
      });
    });
  }

  /** The server stopped waiting for a question (ATTN-4): it is taken down, said in the chat as refused. */
  closed(questionId: string): void {
    this.finish(questionId, cancelled, 'refused: the server stopped waiting for an answer');
  }

  /** Answers a pending question once; later answers are ignored. `refusal` says a refusal in the chat. */
  finish(questionId: string, outcome: Outcome, refusal?: string): void {
    const p = this.pendingById.get(questionId);
    if (!p) return;
    this.pendingById.delete(questionId);
    p.resolve(outcome);
    if (presentationOf(p.params.kind) === 'diff') this.review.answered(p.params, outcome);
    this.ctx.chat.post({ type: 'questionDone', questionId });
    const option = outcome.outcome === 'selected' ? p.params.options.find((o) => o.optionId === outcome.optionId) : undefined;
    // What was asked and answered stays in the chat as one line (an edit's, with how much was kept).
    const kept = option && presentationOf(p.params.kind) === 'diff' && isApproving(option) ? reviewState(p.params, outcome) : 'accepted';
    const chosen = option && kept !== 'accepted' ? { ...option, name: `${option.name} (${kept})` } : option;
    this.ctx.chat.post({ type: 'item', item: answeredItem(p.params.title || p.params.kind, p.params.subject.command, chosen, refusal) });
    // An accepted edit to a buffer with no unsaved changes of the person's is saved once it lands,
    // so a program run next reads what the editor shows. Unsaved work of theirs is never saved.
    if (p.cleanTarget && !p.cleanTarget.isDirty && option && isApproving(option)) this.saveWhenLanded(p.cleanTarget);
    this.drawMarks();
    if (p.proposalUri) {
      void closeDiffTabs(p.proposalUri).then(() => p.proposalUri && this.fs.delete(p.proposalUri));
      this.originals.delete(keyOf(p.proposalUri));
      this.lensChanged.fire();
    }
  }

  /**
   * A code action answered the question, or gave one hunk its verdict. A per-hunk verdict is
   * mirrored in the hunk lenses; once the server says the question is answered (an option, or the
   * last hunk's verdict), the diff or card closes. The server ignores the reply that follows.
   */
  answeredElsewhere(a: AnswerArguments, result: AnswerResult | undefined): void {
    const p = this.pendingById.get(a.questionId);
    if (!p || result?.accepted === false) return;
    if (a.optionId === undefined && a.hunk !== undefined) {
      p.hunks?.set(a.hunk, a.verdict === 'accept');
      (p.decided ??= new Map()).set(a.hunk, a.verdict === 'accept');
      this.drawMarks();
      this.lensChanged.fire();
      if (result?.reason) {
        void this.showKept(p);
        return;
      }
      const approve = approvingOption(p.params);
      this.finish(a.questionId, p.hunks?.none() || !approve ? cancelled : select(p.params, approve.optionId, { acceptedHunks: p.hunks?.acceptedHunks() }));
      return;
    }
    this.finish(a.questionId, select(p.params, a.optionId, { text: a.text, acceptedHunks: a.acceptedHunks, editedText: a.editedText }));
  }

  refuseAll(): void {
    for (const id of [...this.pendingById.keys()]) this.finish(id, cancelled);
  }

  /** Refuses the questions shown as cards in the chat view (it went away). */
  refuseCards(): void {
    for (const [id, p] of [...this.pendingById]) {
      const surface = presentationOf(p.params.kind);
      if (surface === 'card' || surface === 'content') this.finish(id, cancelled);
    }
  }

  // edit / write -------------------------------------------------------------------------------

  private saveWhenLanded(doc: vscode.TextDocument): void {
    const listener = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document !== doc || e.contentChanges.length === 0) return;
      listener.dispose();
      clearTimeout(giveUp);
      void doc.save().then((saved) => {
        if (saved) this.ctx.output.appendLine(`${new Date().toISOString()} saved ${vscode.workspace.asRelativePath(doc.uri)} after the accepted edit landed`);
      });
    });
    // Only cleans up the listener if the server lands nothing (an answer it refused).
    const giveUp = setTimeout(() => listener.dispose(), 5 * 60 * 1000);
  }

  private async showDiff(p: Pending): Promise<void> {
    this.review.asked(p.params);
    const s = p.params.subject;
    const target = s.uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === vscode.Uri.parse(s.uri as string).toString()) : undefined;
    if (target && !target.isDirty) p.cleanTarget = target;
    if (!(await this.fillTexts(p, target))) return;
    // The file's own path, so the diff's breadcrumbs read as the file's; the question it answers
    // rides in the query, never shown as a breadcrumb (VSC-78).
    const shownPath = (s.path ?? 'proposal').replace(/\\/g, '/').replace(/^\/+/, '');
    p.proposalUri = vscode.Uri.from({ scheme: proposalScheme, path: `/${shownPath}`, query: encodeURIComponent(p.params.questionId) });
    p.hunks = new HunkSelection(s.hunks?.length ?? 0);
    p.shown = s.proposed ?? '';
    this.fs.set(p.proposalUri, p.shown);
    this.originals.set(keyOf(p.proposalUri), s.original ?? '');
    this.drawMarks();
    await this.openDiff(p);
  }

  /**
   * A question sent without its whole texts (WRITE-61) gets them here (textsOf), so everything
   * after sees a question like any other. When they cannot be had the question is refused and the
   * person told why. False when there is nothing to show (refused, or answered meanwhile).
   */
  private async fillTexts(p: Pending, target: vscode.TextDocument | undefined): Promise<boolean> {
    const s = p.params.subject;
    try {
      const texts = await textsOf(s, target, () => this.ctx.questionTexts(p.params.questionId));
      [s.original, s.proposed] = [texts.original, texts.proposed];
    } catch (err) {
      if (this.pendingById.get(p.params.questionId) !== p) return false;
      const message = err instanceof Error ? err.message : String(err);
      this.ctx.logError('question texts', message);
      this.finish(p.params.questionId, cancelled);
      // With a button the message stays until the person closes it.
      void vscode.window.showErrorMessage(`bravebot could not get the change it proposes to ${s.path ?? 'a file'}, so the change was refused: ${message}`, 'Show Log')
        .then((choice) => choice && this.ctx.output.show());
      return false;
    }
    return this.pendingById.get(p.params.questionId) === p;
  }

  private async openDiff(p: Pending): Promise<void> {
    if (!p.proposalUri) return;
    const originalUri = p.proposalUri.with({ scheme: originalScheme });
    const title = `${p.params.title || p.params.kind} (bravebot: accept or reject in the title bar)`;
    await vscode.commands.executeCommand('vscode.diff', originalUri, p.proposalUri, title, { preview: false });
    this.lensChanged.fire();
  }

  /** Goes to a waiting question (a notification's Show): its diff, or its card in the chat. */
  async reveal(questionId: string): Promise<void> {
    const p = this.pendingById.get(questionId);
    if (p && presentationOf(p.params.kind) === 'diff') await this.openDiff(p);
    else await this.ctx.chat.reveal(true);
  }

  /** Shows a waiting proposal's diff again (from the list of the turn's changes). */
  async reopen(questionId: string): Promise<void> {
    const p = this.pendingById.get(questionId);
    if (p) await this.openDiff(p);
  }

  /** Accept or Reject from the editor title of a proposal. */
  async answerProposal(approve: boolean, uri?: vscode.Uri): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    // Either side of the diff: the keybindings work with the cursor in the original too.
    const id = target && (target.scheme === proposalScheme || target.scheme === originalScheme) ? questionIdOf(target) : undefined;
    const p = id ? this.pendingById.get(id) : undefined;
    if (!p || !p.proposalUri) {
      void vscode.window.showInformationMessage('bravebot: no pending proposal in this editor');
      return;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.proposalUri?.toString());
    const text = doc?.getText();
    // Saving into the in-memory proposal keeps the closing diff from asking to save it.
    if (doc?.isDirty) await doc.save();
    this.focusNextCard = true;
    this.finish(p.params.questionId, diffAnswer(p.params, approve, text, p.hunks?.acceptedHunks(), p.shown));
  }

  toggleHunk(questionId: string, index: number): void {
    const p = this.pendingById.get(questionId);
    if (!p) return;
    p.hunks?.toggle(index);
    this.lensChanged.fire();
    void this.showKept(p);
  }

  /**
   * Redraws the proposal side with only the kept hunks, so a hunk left out shows as unchanged in
   * the diff. Words the person typed into the proposal are never overwritten: once they typed,
   * their text is what lands (VSC-5) and the side stays as they left it.
   */
  private async showKept(p: Pending): Promise<void> {
    const s = p.params.subject;
    const uri = p.proposalUri;
    if (!uri || !p.hunks) return;
    const preview = applyHunks(s.original ?? '', s.proposed ?? '', s.hunks ?? [], p.hunks.indices());
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (!doc) {
      p.shown = preview;
      this.fs.set(uri, preview);
      return;
    }
    if (doc.getText() !== p.shown || preview === p.shown) return;
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), preview);
    p.shown = preview;
    if (await vscode.workspace.applyEdit(edit)) await doc.save();
    this.lensChanged.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const id = questionIdOf(doc.uri);
    const p = id ? this.pendingById.get(id) : undefined;
    if (!p || !p.hunks) return [];
    const hunks = p.params.subject.hunks ?? [];
    const mod = process.platform === 'darwin' ? 'Cmd' : 'Ctrl';
    // Short, so the two on the first line fit a half-width diff; the keys ride in the lenses' words.
    const keys = new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
      title: `Reject (${mod}+Shift+Backspace)`,
      command: 'bravebot.rejectProposal',
      arguments: [doc.uri],
    });
    // Once the person typed into the proposal, their text lands whole (VSC-5): hunk choices no
    // longer apply, and the lenses say so rather than count hunks that will not be used.
    if (doc.getText() !== p.shown) {
      return [new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: `Accept your version whole (${mod}+Shift+Enter); hunk choices no longer apply`,
        tooltip: `${doc.lineCount} lines land`,
        command: 'bravebot.acceptProposal',
        arguments: [doc.uri],
      }), keys];
    }
    // Where each hunk sits in what the side shows (hunks left out show their original lines).
    const starts = doc.getText() === p.shown ? previewStarts(hunks, p.hunks.indices()) : hunks.map((h) => h.newStart);
    const lenses = hunks.map((_h, i) => {
      // Above the hunk's first line (a deletion: the line after it), within the document.
      const line = Math.min(starts[i], Math.max(doc.lineCount - 1, 0));
      const kept = p.hunks?.isAccepted(i);
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
        title: `hunk ${i + 1}: ${kept ? 'kept' : 'left out'} (toggle)`,
        command: 'bravebot.toggleHunk',
        arguments: [p.params.questionId, i],
      });
    });
    const kept = p.hunks.indices();
    const preview = applyHunks(p.params.subject.original ?? '', p.params.subject.proposed ?? '', hunks, kept);
    const lines = preview.split('\n').length;
    lenses.unshift(new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
      title: `Accept ${kept.length} of ${hunks.length} hunks (${mod}+Shift+Enter)`,
      tooltip: `${lines} lines after accepting`,
      command: 'bravebot.acceptProposal',
      arguments: [doc.uri],
    }), keys);
    return lenses;
  }

  /**
   * Marks, in every visible editor of a file with a waiting proposal, the lines each hunk would
   * change and where it stands (VSC-86), so the proposal shows beyond the Quick Fix light bulb.
   */
  private drawMarks(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const ranges: Record<HunkMark, vscode.Range[]> = { pending: [], accepted: [], rejected: [] };
      for (const p of this.pendingById.values()) {
        const uri = p.params.subject.uri;
        if (!p.proposalUri || !uri || editor.document.uri.toString() !== vscode.Uri.parse(uri).toString()) continue;
        for (const m of hunkMarks(p.params.subject.hunks ?? [], p.decided ?? new Map(), editor.document.lineCount)) {
          ranges[m.mark].push(new vscode.Range(m.start, 0, m.end, 0));
        }
      }
      for (const mark of Object.keys(ranges) as HunkMark[]) editor.setDecorations(this.marks[mark], ranges[mark]);
    }
  }

  // every other kind: a card in the sidebar ----------------------------------------------------

  private async showCard(p: Pending): Promise<void> {
    const s = p.params.subject;
    // A program reads files from disk: files with unsaved changes are named on a run's card.
    const unsaved = p.params.kind === 'run' ? unsavedFiles().map((d) => vscode.workspace.asRelativePath(d.uri)) : [];
    this.ctx.chat.post({
      unsaved,
      type: 'question',
      questionId: p.params.questionId,
      kind: p.params.kind,
      lines: describe(p.params),
      command: s.command,
      askedBy: askedBy(p.params),
      content: s.content,
      verdict: s.verdict,
      verdictText: s.verdictText,
      ownWords: p.params.kind === 'askUser',
      // A restore over the person's changes shows what it writes, what the agent left and the file now.
      versions: restoreVersions(p.params),
      diff: p.params.kind === 'restore' ? s.diff : undefined,
      copy: s.copy,
      options: p.params.options,
    });
    // After an answer by key in a proposal, the person's keyboard follows to the next question.
    const focus = this.focusNextCard;
    this.focusNextCard = false;
    await this.ctx.chat.reveal(focus);
  }

  /**
   * An answer from a sidebar card: an option, or the person's own words (askUser), which go with
   * the approving option (the server takes the words over the option's name). A dismissed card has
   * neither and refuses.
   */
  answerCard(questionId: string, optionId: string | undefined, text?: string): void {
    const p = this.pendingById.get(questionId);
    if (!p) return;
    const words = text?.trim();
    this.finish(questionId, words ? select(p.params, approvingOption(p.params)?.optionId, { text: words }) : select(p.params, optionId));
  }

  /**
   * Opens a waiting question's private copy of a picture or PDF in the editor's own viewer (an
   * image preview for a picture, VSC-115). Only the copy a waiting question named is opened: the
   * page asks by question, never by path.
   */
  async openCopy(questionId: string): Promise<void> {
    const path = this.pendingById.get(questionId)?.params.subject.copy?.path;
    if (!path) return;
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(path), { preview: true, preserveFocus: false });
  }

  dispose(): void {
    this.refuseAll();
    for (const d of this.disposables) d.dispose();
  }
}

/**
 * The open files of the workspace's folders with unsaved changes: what a program run there reads
 * from disk rather than as the editor shows it. Files outside the folders are left out, the
 * editor's own settings among them, which it holds unsaved for a moment while it writes them.
 */
export function unsavedFiles(): vscode.TextDocument[] {
  return vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(d.uri) !== undefined);
}

/** The question a proposal's (or its original's) document answers: its query. */
function questionIdOf(uri: vscode.Uri): string | undefined {
  return uri.query ? decodeURIComponent(uri.query) : undefined;
}

/** A proposal's document by its question and path: two questions about one file never share one. */
function keyOf(uri: vscode.Uri): string {
  return `${uri.query}${uri.path}`;
}

async function closeDiffTabs(proposal: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) =>
    t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === proposal.toString());
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}
