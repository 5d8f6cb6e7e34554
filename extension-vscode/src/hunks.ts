// Hunk selection for edit and write questions: the texts a question stands for, which hunks of a
// proposal the person keeps, the `acceptedHunks` the server is sent, and the text that results, for
// the preview. Pure: no VS Code.

import type { HunkRange, QuestionTextsResult, Subject } from './protocol';

/** Splits text into lines that keep their line endings, so joining them gives the text back. */
export function splitKeepEnds(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * The proposal a question without whole texts stands for (WRITE-61): `original` split after each
 * "\n", each hunk's `oldLines` lines from `oldStart` replaced by its `text`. Undefined when a hunk
 * carries no text or does not fit the original (in order, within its lines), so the whole texts are
 * asked for instead.
 */
export function proposalFromHunks(original: string, hunks: HunkRange[]): string | undefined {
  const old = splitKeepEnds(original);
  const out: string[] = [];
  let cursor = 0;
  for (const h of hunks) {
    if (typeof h.text !== 'string' || h.oldStart < cursor || h.oldStart + h.oldLines > old.length) return undefined;
    out.push(old.slice(cursor, h.oldStart).join(''), h.text);
    cursor = h.oldStart + h.oldLines;
  }
  out.push(old.slice(cursor).join(''));
  return out.join('');
}

/** What an open document offers: its version (as synchronised to the server) and its text. */
export interface OpenText { version: number; getText(): string }

/**
 * The whole texts of an edit or write question (WRITE-61): as sent; else rebuilt from the open
 * document while it is at the question's `version`; else `fetch`ed from the server (the file is not
 * open, the person typed since, or the hunks do not rebuild). A failed fetch is passed on.
 */
export async function textsOf(s: Subject, doc: OpenText | undefined, fetch: () => Promise<QuestionTextsResult>): Promise<QuestionTextsResult> {
  if (s.original !== undefined && s.proposed !== undefined) return { original: s.original, proposed: s.proposed };
  if (doc && s.version !== undefined && doc.version === s.version) {
    const original = doc.getText();
    const proposed = proposalFromHunks(original, s.hunks ?? []);
    if (proposed !== undefined) return { original, proposed };
  }
  return fetch();
}

/**
 * Applies the accepted hunks of `proposed` to `original`; rejected hunks keep the original lines.
 * Hunks are as the server sends them (specs/edits.md): 0-based first changed line and a count on
 * each side, in order and not overlapping; an insertion has no old lines and sits before
 * `oldStart`.
 */
export function applyHunks(original: string, proposed: string, hunks: HunkRange[], accepted: Iterable<number>): string {
  const keep = new Set(accepted);
  const old = splitKeepEnds(original);
  const neu = splitKeepEnds(proposed);
  const out: string[] = [];
  let cursor = 0;
  hunks.forEach((h, i) => {
    const oldAt = h.oldStart;
    out.push(...old.slice(cursor, oldAt));
    if (keep.has(i)) {
      out.push(...neu.slice(h.newStart, h.newStart + h.newLines));
    } else {
      out.push(...old.slice(oldAt, oldAt + h.oldLines));
    }
    cursor = oldAt + h.oldLines;
  });
  out.push(...old.slice(cursor));
  return out.join('');
}

/**
 * Where each hunk starts in the preview (`applyHunks` with `accepted`): 0-based lines. A hunk left
 * out shows its original lines there, so the lines after it shift by what it no longer changes.
 */
export function previewStarts(hunks: HunkRange[], accepted: Iterable<number>): number[] {
  const keep = new Set(accepted);
  let shift = 0;
  return hunks.map((h, i) => {
    const at = h.oldStart + shift;
    shift += (keep.has(i) ? h.newLines : h.oldLines) - h.oldLines;
    return at;
  });
}

/** The person's per-hunk choices; every hunk starts accepted. */
export class HunkSelection {
  private readonly accepted: boolean[];

  constructor(readonly count: number) {
    this.accepted = new Array<boolean>(count).fill(true);
  }

  isAccepted(i: number): boolean {
    return this.accepted[i] === true;
  }

  set(i: number, accepted: boolean): void {
    if (i >= 0 && i < this.count) this.accepted[i] = accepted;
  }

  toggle(i: number): void {
    this.set(i, !this.isAccepted(i));
  }

  indices(): number[] {
    return this.accepted.flatMap((a, i) => (a ? [i] : []));
  }

  /** True when no hunk is kept: accepting then means nothing lands, so it is a refusal. */
  none(): boolean {
    return this.indices().length === 0;
  }

  /**
   * The `acceptedHunks` field to send: omitted when every hunk is kept (the whole proposal lands),
   * otherwise the kept indices in order.
   */
  acceptedHunks(): number[] | undefined {
    const kept = this.indices();
    return kept.length === this.count ? undefined : kept;
  }
}

/** Where a hunk stands in the file's own editor: waiting, or given its verdict by a code action. */
export type HunkMark = 'pending' | 'accepted' | 'rejected';

/**
 * The lines of the file's own editor (0-based, inclusive) each hunk of a waiting proposal covers,
 * with where it stands: its `oldLines` from `oldStart`, or the line it goes before when it only
 * adds lines. `decided` holds the verdicts the person gave hunk by hunk.
 */
export function hunkMarks(hunks: HunkRange[], decided: ReadonlyMap<number, boolean>, lineCount: number): { start: number; end: number; mark: HunkMark }[] {
  const last = Math.max(lineCount - 1, 0);
  return hunks.map((h, i) => {
    const start = Math.min(h.oldStart, last);
    const end = Math.min(h.oldLines > 0 ? h.oldStart + h.oldLines - 1 : h.oldStart, last);
    const v = decided.get(i);
    return { start, end, mark: v === undefined ? 'pending' : v ? 'accepted' : 'rejected' };
  });
}
