// Hunk selection for edit and write questions: which hunks of a proposal the person keeps, the
// `acceptedHunks` the server is sent, and the text that results, for the preview. Pure: no VS Code.

import type { HunkRange } from './protocol';

/** Splits text into lines that keep their line endings, so joining them gives the text back. */
export function splitKeepEnds(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The 0-based index of a hunk's first line on one side (a zero-length hunk starts after its line). */
function startIndex(start: number, count: number): number {
  return count === 0 ? start : Math.max(start - 1, 0);
}

/**
 * Applies the accepted hunks of `proposed` to `original`; rejected hunks keep the original lines.
 * Hunks must be in order and not overlap, as a unified diff gives them.
 */
export function applyHunks(original: string, proposed: string, hunks: HunkRange[], accepted: Iterable<number>): string {
  const keep = new Set(accepted);
  const old = splitKeepEnds(original);
  const neu = splitKeepEnds(proposed);
  const out: string[] = [];
  let cursor = 0;
  hunks.forEach((h, i) => {
    const oldAt = startIndex(h.oldStart, h.oldLines);
    out.push(...old.slice(cursor, oldAt));
    if (keep.has(i)) {
      const newAt = startIndex(h.newStart, h.newLines);
      out.push(...neu.slice(newAt, newAt + h.newLines));
    } else {
      out.push(...old.slice(oldAt, oldAt + h.oldLines));
    }
    cursor = oldAt + h.oldLines;
  });
  out.push(...old.slice(cursor));
  return out.join('');
}

/** The hunk whose new-side range holds the 1-based `line` of the proposal, if any. */
export function hunkAtProposalLine(hunks: HunkRange[], line: number): number | undefined {
  const i = hunks.findIndex((h) =>
    h.newLines === 0 ? line === h.newStart || line === h.newStart + 1 : line >= h.newStart && line < h.newStart + h.newLines);
  return i < 0 ? undefined : i;
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
