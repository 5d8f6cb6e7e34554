// Hunk selection for edit and write questions: which hunks of a proposal the person keeps, the
// `acceptedHunks` the server is sent, and the text that results, for the preview. Pure: no VS Code.

import type { HunkRange } from './protocol';

/** Splits text into lines that keep their line endings, so joining them gives the text back. */
export function splitKeepEnds(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
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
