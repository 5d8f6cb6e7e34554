// How the chat draws checkpoints (issue 34): the files a turn changed with "Restore to before this
// turn", a restore's result with "Undo restore", and a restore question's versions. Pure, unit-tested.
// Every text is escaped: a path, a reason or a file's text is drawn, never read as markup.

import { escapeHtml } from './markdown';

/** What the turn changed, from its checkpoint, and the way back; the extension asks before it changes a file. */
export function checkpointHtml(it: { checkpointId: string; files: string[] }): string {
  const id = escapeHtml(it.checkpointId);
  return `<div class="checkpoint" role="note" data-checkpoint="${id}"><span class="meta">This turn changed ${escapeHtml(it.files.join(', '))}.</span> ` +
    `<button class="secondary" data-restore="${id}" title="Asks first, naming the files that go back">Restore to before this turn</button></div>`;
}

/** What a restore did and skipped, and Undo restore. */
export function restoredHtml(it: { text: string; undoCheckpointId?: string }): string {
  return `<div class="restored notice" role="status"><div class="restored-text">${escapeHtml(it.text)}</div>` +
    (it.undoCheckpointId ? `<button class="secondary" data-undo="${escapeHtml(it.undoCheckpointId)}" title="Asks first, naming the files that go back">Undo restore</button>` : '') + '</div>';
}

/** What a restore question's restore changes in the file now, above its buttons; none for other kinds. */
export function restoreDiffHtml(q: { versions?: unknown[]; diff?: string }): string {
  if (!q.versions || !q.diff) return '';
  return `<details class="version restore-diff" open><summary>what the restore changes in the file now</summary><pre class="literal">${escapeHtml(q.diff)}</pre></details>`;
}

/**
 * A restore question's three versions, each open, under its buttons (as a run's plan is), so the
 * answers stay in sight above them; none for other kinds.
 */
export function versionsHtml(q: { versions?: { label: string; text?: string }[] }): string {
  if (!q.versions) return '';
  return '<div class="versions">' + q.versions.map((v) => v.text === undefined
    ? `<div class="version absent">${escapeHtml(v.label)}</div>`
    : `<details class="version" open><summary>${escapeHtml(v.label)}</summary><pre class="literal">${escapeHtml(v.text)}</pre></details>`).join('') + '</div>';
}
