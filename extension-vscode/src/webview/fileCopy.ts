// A picture's or PDF's private copy on a vetContent card (PIC-4, VSC-115): where the copy is, its
// type and size, the check's word, and Open. No byte of the file is drawn in the page; Open asks
// the extension by question id, and the extension opens only the copy that question named. Pure,
// unit-tested.

import { escapeHtml } from './markdown';

/** A private copy of a file, as `subject.copy` carries it. */
export interface FileCopyShown { path: string; mediaType: string; bytes: number }

/** "812 B", "2.4 KiB", "1.1 MiB". */
export function sizeWords(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The copy's block on a question card, inside the untrusted frame; empty without a copy. */
export function fileCopyHtml(questionId: string, copy: FileCopyShown | undefined, verdict?: string, verdictText?: string): string {
  if (!copy) return '';
  const kind = copy.mediaType === 'application/pdf' ? 'PDF' : 'picture';
  return `<div class="file-copy untrusted"><div class="frame-label">untrusted ${kind} · ${escapeHtml(copy.mediaType)} · ${escapeHtml(sizeWords(copy.bytes))}${verdict ? ` · verdict: ${escapeHtml(verdict)}` : ''}</div>` +
    `<div class="copy-path">private copy, removed when you answer: <code class="literal">${escapeHtml(copy.path)}</code></div>` +
    `<button class="secondary open-copy" data-q="${escapeHtml(questionId)}" data-open="1" title="Open the copy in the editor's own viewer; this answers nothing">Open</button>` +
    (verdictText ? `<div class="frame-label">the check's words</div><pre class="check-words">${escapeHtml(verdictText)}</pre>` : '') + '</div>';
}
