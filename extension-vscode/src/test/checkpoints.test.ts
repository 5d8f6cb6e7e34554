import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkpointRows, filesSince, restorePrompt, restoredWords, restoreVersions, stamp } from '../checkpoints';
import { checkpointHtml, restoreDiffHtml, restoredHtml, versionsHtml } from '../webview/checkpointHtml';
import { addItem, addUser, applyUpdate, emptyTranscript } from '../webview/transcript';
import { cancelled, presentationOf, select } from '../questionKinds';
import type { Checkpoint, RequestPermissionParams } from '../protocol';

// Recorded as bravebot/checkpoint/list answers them: newest first.
const now = Date.UTC(2026, 11, 5, 5, 0, 0) / 1000;
const list: Checkpoint[] = [
  { checkpointId: 'c3', createdAt: now - 60, title: 'tidy a.txt again', kind: 'restore', files: ['a.txt'], removes: [] },
  { checkpointId: 'c2', createdAt: now - 300, title: 'add b.txt\nand more', kind: 'turn', files: ['b.txt', 'a.txt'], removes: ['b.txt'] },
  { checkpointId: 'c1', createdAt: now - 90000, title: 'tidy a.txt', kind: 'turn', files: ['a.txt', 'c.txt'], removes: ['b.txt'] },
  { checkpointId: 'c0', createdAt: now - 90060, title: 'what is this?', kind: 'turn', files: [], removes: ['b.txt'] },
];

// Verifies: VSC-88
test('the checkpoint list shows each one with its time, title and files', () => {
  assert.equal(stamp(now - 300, now), '04:55 UTC');
  assert.equal(stamp(now - 90000, now), '2026-12-04 04:00 UTC');
  assert.deepEqual(checkpointRows(list, now), [
    { label: 'Before the restore: tidy a.txt again', description: '04:59 UTC · 1 min ago · 1 file', detail: 'the restore changed a.txt', checkpointId: 'c3' },
    { label: 'add b.txt and more', description: '04:55 UTC · 5 min ago · 2 files', detail: 'the turn changed b.txt, a.txt', checkpointId: 'c2' },
    { label: 'tidy a.txt', description: '2026-12-04 04:00 UTC · 1 day ago · 2 files', detail: 'the turn changed a.txt, c.txt', checkpointId: 'c1' },
    { label: 'what is this?', description: '2026-12-04 03:59 UTC · 1 day ago · 0 files', detail: 'the turn changed no files', checkpointId: 'c0' },
  ]);
});

// Verifies: VSC-89
test('before a restore the person is told which files go back: every file changed since that checkpoint', () => {
  assert.deepEqual(filesSince(list, 'c1'), ['a.txt', 'b.txt', 'c.txt']);
  assert.deepEqual(filesSince(list, 'c3'), ['a.txt']);
  assert.equal(filesSince(list, 'gone'), undefined);
  const p = restorePrompt(list[2], filesSince(list, 'c1'), false);
  assert.equal(p.message, 'Restore the workspace to before “tidy a.txt”?');
  assert.match(p.detail, /These files go back to how they were then: a\.txt, b\.txt, c\.txt\. b\.txt did not exist then, so it is deleted\./);
  assert.match(p.detail, /you are asked first/);
  assert.match(p.detail, /Undo restore brings everything back/);
  assert.equal(p.button, 'Restore');
  const u = restorePrompt(list[0], filesSince(list, 'c3'), true);
  assert.equal(u.message, 'Undo the restore?');
  assert.match(u.detail, /before the restore: a\.txt\./);
  // Nothing is said of deleting where the restore deletes nothing.
  assert.doesNotMatch(u.detail, /deleted/);
  assert.equal(u.button, 'Undo the restore');
  assert.match(restorePrompt(undefined, undefined, false).detail, /^Every file changed since then goes back/);
});

// Verifies: VSC-91
test("a restore's result says what went back and what was skipped, with the reason", () => {
  const r = { restored: ['a.txt', 'new.txt'], removed: ['new.txt'], skipped: [{ path: 'b.txt', reason: 'you kept your changes' }], undoCheckpointId: 'c9' };
  assert.equal(restoredWords(r, false), 'Restored: a.txt is back as it was.\nnew.txt was deleted: it did not exist then.\nb.txt was left as it is: you kept your changes');
  assert.equal(restoredWords({ restored: ['n.txt', 'm.txt'], removed: ['n.txt', 'm.txt'], skipped: [], undoCheckpointId: 'c14' }, true), 'Restore undone.\nn.txt, m.txt were deleted: they did not exist before the restore.');
  assert.equal(restoredWords({ restored: ['a.txt'], removed: [], skipped: [], undoCheckpointId: 'c10' }, true), 'Restore undone: a.txt is back as before the restore.');
  assert.equal(restoredWords({ restored: [], removed: [], skipped: [], undoCheckpointId: 'c11' }, false), 'Restored: no file needed to change.');
  assert.equal(restoredWords({ restored: ['a.txt'], removed: [], skipped: [], undoCheckpointId: 'c12' }, false), 'Restored: a.txt is back as it was.');
  assert.equal(restoredWords({ restored: [], removed: [], skipped: [{ path: 'a.txt', reason: 'you kept your changes' }], undoCheckpointId: 'c13' }, false), 'Restored: no file went back.\na.txt was left as it is: you kept your changes');
  // The chat's line offers Undo restore for its own checkpoint; every word escaped.
  const html = restoredHtml({ text: 'Restored: <b>x</b>', undoCheckpointId: 'c"9' });
  assert.ok(html.includes('Restored: &lt;b&gt;x&lt;/b&gt;'), html);
  assert.ok(html.includes('data-undo="c&quot;9"') && html.includes('>Undo restore</button>'), html);
  assert.ok(!restoredHtml({ text: 'Restore undone' }).includes('data-undo'), 'an undo offers no second undo');
  // Once the restore is undone (or another restore ran), its own Undo restore is gone from the chat.
  let t = addItem(emptyTranscript(), { kind: 'restored', text: 'Restored: a.txt is back as it was.', undoCheckpointId: 'c2' });
  assert.equal(t.items[0].kind === 'restored' && t.items[0].undoCheckpointId, 'c2');
  t = addItem(t, { kind: 'restored', text: 'Restore undone: a.txt is back as before the restore.' });
  assert.deepEqual(t.items[0], { kind: 'restored', text: 'Restored: a.txt is back as it was.' });
  assert.ok(!restoredHtml(t.items[0] as { text: string }).includes('data-undo'), 'no stale Undo restore');
});

// Verifies: VSC-90
test("a turn's checkpoint offers Restore to before this turn in the chat; a restore's own and an empty one do not", () => {
  let t = addUser(emptyTranscript(), 'tidy a.txt');
  t = applyUpdate(t, { kind: 'checkpoint', checkpointId: 'c1', files: ['a.txt', '<b>.txt'] });
  t = applyUpdate(t, { kind: 'turnEnded', stopReason: 'endTurn' });
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'checkpoint', 'turnEnded']);
  assert.deepEqual(t.items[1], { kind: 'checkpoint', checkpointId: 'c1', files: ['a.txt', '<b>.txt'] });
  // Between turns (a restore's own checkpoint) nothing is added.
  assert.equal(applyUpdate(t, { kind: 'checkpoint', checkpointId: 'c2', files: ['a.txt'] }), t);
  // A turn that changed nothing has nothing to restore.
  const quiet = addUser(emptyTranscript(), 'what is this?');
  assert.equal(applyUpdate(quiet, { kind: 'checkpoint', checkpointId: 'c3', files: [] }), quiet);
  const html = checkpointHtml({ checkpointId: 'c1', files: ['a.txt', '<b>.txt'] });
  assert.ok(html.includes('This turn changed a.txt, &lt;b&gt;.txt.'), html);
  assert.ok(html.includes('data-restore="c1"') && html.includes('>Restore to before this turn</button>'), html);
});

function restoreQuestion(subject: RequestPermissionParams['subject']): RequestPermissionParams {
  return {
    sessionId: 's1', questionId: 'q7', kind: 'restore', title: 'Restore a.txt over your changes?', subject,
    options: [
      { optionId: 'restore', name: 'Restore it, replacing your changes', kind: 'allow_once' },
      { optionId: 'keep', name: 'Keep your changes', kind: 'reject_once' },
    ],
  };
}

// Verifies: VSC-92
test('a restore question is a card with its three versions, and an unknown or cancelled answer refuses', () => {
  const q = restoreQuestion({ path: 'a.txt', proposed: 'before\n', agent: 'agent\n', original: 'agent\nmine\n', diff: '-agent\n-mine\n+before\n' });
  assert.equal(presentationOf('restore'), 'card');
  assert.deepEqual(restoreVersions(q), [
    { label: 'what the restore writes', text: 'before\n' },
    { label: "what the agent's turn left", text: 'agent\n' },
    { label: 'the file now, with your changes', text: 'agent\nmine\n' },
  ]);
  // A restore that deletes the file says so instead of showing an empty text.
  assert.deepEqual(restoreVersions(restoreQuestion({ path: 'n.txt', agent: 'x', original: 'x y' }))?.[0], { label: 'what the restore writes: nothing, the file is deleted' });
  assert.equal(restoreVersions({ ...q, kind: 'edit' }), undefined);
  const html = restoreDiffHtml({ versions: restoreVersions(q), diff: q.subject.diff }) + versionsHtml({ versions: restoreVersions(q) });
  for (const part of ['what the restore changes in the file now', '-agent\n-mine\n+before\n', 'what the restore writes', "what the agent&#39;s turn left", 'the file now, with your changes', 'agent\nmine\n']) {
    assert.ok(html.includes(part), `${part} in ${html}`);
  }
  assert.equal(versionsHtml({}), '');
  assert.equal(restoreDiffHtml({ diff: 'x' }), '', 'only a restore question shows a restore diff');
  assert.deepEqual(select(q, 'keep'), { outcome: 'selected', optionId: 'keep' });
  assert.deepEqual(select(q, 'made-up'), cancelled);
  assert.deepEqual(select(q, undefined), cancelled);
});
