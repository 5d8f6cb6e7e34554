// Checkpoints as the person sees them (issue 34): the list's rows, what a restore will do said
// before it does it, what it did said after, and the three versions a `restore` question shows.
// Pure, so it is tested without VS Code; checkpointView.ts and ctx.ts draw and send.

import type { Checkpoint, CheckpointRestoreResult, RequestPermissionParams } from './protocol';
import { ago } from './sessions';

/** A checkpoint as one line: what it is before, when, and how many files it covers. */
export interface CheckpointRow { label: string; description: string; detail: string; checkpointId: string }

/** `12:34 UTC` on the day, or the date and time when it is not today's (UTC both). */
export function stamp(seconds: number, now: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  const today = new Date(now * 1000).toISOString().slice(0, 10);
  return iso.slice(0, 10) === today ? `${iso.slice(11, 16)} UTC` : `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** What a checkpoint is before: the turn's prompt, or the restore it would undo. */
export function checkpointLabel(c: Checkpoint): string {
  const title = c.title.replace(/\s+/g, ' ').trim();
  if (c.kind === 'restore') return title ? `Before the restore: ${title}` : 'Before a restore';
  return title === '' ? '(a turn without words)' : title;
}

/** The files as a list in words: `a.txt, b.txt`, or that there are none. */
export function filesWords(files: readonly string[]): string {
  return files.length === 0 ? 'no files' : files.join(', ');
}

export function checkpointRows(checkpoints: readonly Checkpoint[], now: number): CheckpointRow[] {
  return checkpoints.map((c) => ({
    label: checkpointLabel(c),
    description: `${stamp(c.createdAt, now)} · ${ago(c.createdAt, now)} · ${c.files.length === 1 ? '1 file' : `${c.files.length} files`}`,
    detail: c.kind === 'restore' ? `the restore changed ${filesWords(c.files)}` : `the turn changed ${filesWords(c.files)}`,
    checkpointId: c.checkpointId,
  }));
}

/**
 * The files a restore to `id` puts back: every file changed since that checkpoint, which is what
 * that turn and every later one (or restore) changed. The list comes newest first, so these are
 * the files of the rows up to and including `id`'s. Undefined when `id` is not listed.
 */
export function filesSince(checkpoints: readonly Checkpoint[], id: string): string[] | undefined {
  const at = checkpoints.findIndex((c) => c.checkpointId === id);
  if (at < 0) return undefined;
  const out: string[] = [];
  for (const c of checkpoints.slice(0, at + 1)) for (const f of c.files) if (!out.includes(f)) out.push(f);
  return out;
}

/** What the confirmation says before a restore (or an undo of one) changes files. */
export interface RestorePrompt { message: string; detail: string; button: string }

export function restorePrompt(c: Checkpoint | undefined, files: readonly string[] | undefined, undo: boolean): RestorePrompt {
  const which = c ? `“${checkpointLabel(c)}”` : 'that checkpoint';
  const removes = c?.removes ?? [];
  const message = undo ? 'Undo the restore?' : `Restore the workspace to before ${which}?`;
  const what = files === undefined
    ? 'Every file changed since then goes back to how it was.'
    : files.length === 0
      ? 'Nothing was changed since then: no file goes back.'
      : `These files go back to how they were ${undo ? 'before the restore' : 'then'}: ${files.join(', ')}.` +
        (removes.length ? ` ${removes.join(', ')} did not exist ${undo ? 'before the restore' : 'then'}, so ${removes.length === 1 ? 'it is' : 'they are'} deleted.` : '');
  const detail = [
    what,
    'Files the agent did not change are left alone. An open file is changed in its editor, so Undo there works too.',
    'Where you changed a file after the agent did, you are asked first and can keep your changes.',
    undo ? 'This is itself kept as a checkpoint.' : 'The restore is itself kept as a checkpoint: Undo restore brings everything back.',
  ].join('\n\n');
  return { message, detail, button: undo ? 'Undo the restore' : 'Restore' };
}

/** What the chat says once a restore has run: what went back and what was skipped, and why. */
export function restoredWords(r: CheckpointRestoreResult, undo: boolean): string {
  const done = undo ? 'Restore undone' : 'Restored';
  // A file that did not exist then went back by being deleted: it is said so, not "back".
  const removed = r.removed ?? [];
  const returned = r.restored.filter((p) => !removed.includes(p));
  const one = returned.length === 1;
  const back = returned.length
    ? `${done}: ${returned.join(', ')} ${one ? 'is' : 'are'} back as ${undo ? 'before the restore' : one ? 'it was' : 'they were'}.`
    : removed.length ? `${done}.` : `${done}: ${r.skipped.length ? 'no file went back' : 'no file needed to change'}.`;
  const deleted = removed.length ? [`${removed.join(', ')} ${removed.length === 1 ? 'was' : 'were'} deleted: ${removed.length === 1 ? 'it' : 'they'} did not exist ${undo ? 'before the restore' : 'then'}.`] : [];
  const skipped = r.skipped.map((s) => `${s.path} was left as it is: ${s.reason}`);
  return [back, ...deleted, ...skipped].join('\n');
}

/** One of the versions a `restore` question shows; `text` undefined: the file would not exist. */
export interface Version { label: string; text?: string }

/**
 * The three versions of a `restore` question, in the order a person compares them: what the
 * restore writes, what the agent's turn left, and the file now with the person's changes.
 * Undefined for any other question.
 */
export function restoreVersions(p: RequestPermissionParams): Version[] | undefined {
  if (p.kind !== 'restore') return undefined;
  const s = p.subject;
  return [
    s.proposed === undefined ? { label: 'what the restore writes: nothing, the file is deleted' } : { label: 'what the restore writes', text: s.proposed },
    { label: "what the agent's turn left", text: s.agent ?? '' },
    { label: 'the file now, with your changes', text: s.original ?? '' },
  ];
}
