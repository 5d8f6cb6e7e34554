// Reviewing what a turn changed (issue 36): the hunks of each file against the checkpoint made
// before the turn, the person's "reviewed" marks (the extension's own state, per session and per
// file, lost as soon as the file changes again), and the prompt a comment on a range sends. Pure,
// so it is tested without VS Code; turnReviewView.ts draws and sends.

import type { PromptRange } from './protocol';

/**
 * One hunk of a unified diff: where its header puts it before and after, and, in the file now
 * (1-based), the first and last lines it changed (`first` where it only removed lines: the line
 * that now follows them), with how many lines it adds and removes.
 */
export interface ReviewHunk { oldStart: number; newStart: number; first: number; last: number; added: number; removed: number }

/**
 * The hunks of a unified diff (as `bravebot/checkpoint/diff` answers it): one per `@@` header,
 * its context lines left out of where it is.
 */
export function parseHunks(diff: string): ReviewHunk[] {
  const out: ReviewHunk[] = [];
  let current: ReviewHunk | undefined;
  // The line of the file now that the next line of the hunk stands at.
  let at = 0;
  let changed = false;
  for (const line of diff.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h) {
      at = Number(h[2]);
      changed = false;
      current = { oldStart: Number(h[1]), newStart: at, first: at, last: at, added: 0, removed: 0 };
      out.push(current);
      continue;
    }
    if (!current) continue;
    if (line.startsWith('+') && !line.startsWith('+++')) {
      if (!changed) current.first = at;
      changed = true;
      current.added++;
      current.last = at;
      at++;
    } else if (line.startsWith('-') && !line.startsWith('---')) {
      if (!changed) current.first = at;
      if (current.added === 0) current.last = at;
      changed = true;
      current.removed++;
    } else if (line.startsWith(' ')) {
      at++;
    }
  }
  return out;
}

/** A hunk as a row: the lines it changed as they are now, or where it removed lines. */
export function hunkLabel(h: ReviewHunk): string {
  return h.added === 0 ? `removed at line ${h.first}` : linesWords(h.first, h.last);
}

export function hunkDescription(h: ReviewHunk): string {
  return [h.added ? `+${h.added}` : '', h.removed ? `−${h.removed}` : ''].filter(Boolean).join(' ');
}

/** The first line a hunk changed in the file now, 1-based: where opening it puts the cursor. */
export function hunkLine(h: ReviewHunk): number {
  return Math.max(1, h.first);
}

/**
 * The person's reviewed marks: per session, per file, each with the file's text when it was
 * marked. A mark answers only while the file still holds that text: a file changed again (by the
 * agent or anybody) is no longer reviewed.
 */
export class ReviewedMarks {
  private readonly marks = new Map<string, string>();

  private static key(sessionId: string, path: string): string {
    return `${sessionId}\u0000${path}`;
  }

  mark(sessionId: string, path: string, text: string | null): void {
    this.marks.set(ReviewedMarks.key(sessionId, path), text ?? '\u0000absent');
  }

  unmark(sessionId: string, path: string): void {
    this.marks.delete(ReviewedMarks.key(sessionId, path));
  }

  isReviewed(sessionId: string, path: string, text: string | null): boolean {
    return this.marks.get(ReviewedMarks.key(sessionId, path)) === (text ?? '\u0000absent');
  }
}

/** What the review list's header says: how many files, how many of them reviewed. */
export function reviewSummary(files: number, reviewed: number): string {
  if (files === 0) return '';
  return reviewed === files ? `${files} file${files === 1 ? '' : 's'}, all reviewed` : `${reviewed} of ${files} reviewed`;
}

/** `line 3` or `lines 3-7`: a range in words. */
export function linesWords(startLine: number, endLine: number): string {
  return startLine === endLine ? `line ${startLine}` : `lines ${startLine}-${endLine}`;
}

/** What a comment on a range sends: the person's words and where they point, never the range's text. */
export interface CommentPrompt { text: string; ranges: PromptRange[]; label: string }

/**
 * The prompt a comment starts (REVIEW-5): the person's words as they typed them (trusted: theirs)
 * and the range as a place, so the agent reads its lines from the file under the file's own label.
 * Undefined when there are no words to send.
 */
export function commentPrompt(path: string, startLine: number, endLine: number, words: string): CommentPrompt | undefined {
  const text = words.trim();
  if (text === '') return undefined;
  return { text, ranges: [{ path, startLine, endLine }], label: `comment on ${linesWords(startLine, endLine)} of ${path}` };
}
