import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HunkSelection, applyHunks, previewStarts, splitKeepEnds } from '../hunks';
import type { HunkRange } from '../protocol';

// Hunks as the server sends them: 0-based first changed line, counts on each side.
// original: a b c d e f ; proposed: a B c d e2 f g (hunk 0 changes line 1, hunk 1 changes lines 4-5
// and appends g)
const original = 'a\nb\nc\nd\ne\nf\n';
const proposed = 'a\nB\nc\nd\ne2\nf\ng\n';
const hunks: HunkRange[] = [
  { oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 },
  { oldStart: 4, oldLines: 2, newStart: 4, newLines: 3 },
];

test('splitKeepEnds round-trips text with and without a final newline', () => {
  for (const t of ['', 'x', 'x\n', 'a\nb', 'a\n\nb\n']) assert.equal(splitKeepEnds(t).join(''), t);
});

test('all hunks accepted gives the proposal', () => {
  assert.equal(applyHunks(original, proposed, hunks, [0, 1]), proposed);
});

test('no hunk accepted gives the original', () => {
  assert.equal(applyHunks(original, proposed, hunks, []), original);
});

// Verifies: VSC-4
test('one hunk accepted applies only that hunk', () => {
  assert.equal(applyHunks(original, proposed, hunks, [0]), 'a\nB\nc\nd\ne\nf\n');
  assert.equal(applyHunks(original, proposed, hunks, [1]), 'a\nb\nc\nd\ne2\nf\ng\n');
});

test('pure insertion and pure deletion hunks', () => {
  // insert "x" before b (0-based line 1); delete c (0-based line 2)
  const o = 'a\nb\nc\n';
  const p = 'a\nx\nb\n';
  const hs: HunkRange[] = [
    { oldStart: 1, oldLines: 0, newStart: 1, newLines: 1 },
    { oldStart: 2, oldLines: 1, newStart: 3, newLines: 0 },
  ];
  assert.equal(applyHunks(o, p, hs, [0, 1]), p);
  assert.equal(applyHunks(o, p, hs, [0]), 'a\nx\nb\nc\n');
  assert.equal(applyHunks(o, p, hs, [1]), 'a\nb\n');
});

test('a write to a new file is one insertion hunk', () => {
  const hs: HunkRange[] = [{ oldStart: 0, oldLines: 0, newStart: 0, newLines: 2 }];
  assert.equal(applyHunks('', 'one\ntwo\n', hs, [0]), 'one\ntwo\n');
  assert.equal(applyHunks('', 'one\ntwo\n', hs, []), '');
});

test('HunkSelection builds acceptedHunks', () => {
  const s = new HunkSelection(3);
  assert.equal(s.acceptedHunks(), undefined, 'all kept: the field is omitted');
  s.toggle(1);
  assert.deepEqual(s.acceptedHunks(), [0, 2]);
  s.toggle(0);
  s.toggle(2);
  assert.deepEqual(s.acceptedHunks(), []);
  assert.equal(s.none(), true);
  s.set(7, true);
  assert.deepEqual(s.indices(), [], 'out of range indices are ignored');
});

// Verifies: VSC-21
test('a hunk left out shows its original lines, and the hunks after it move with it', () => {
  // Hunk 0 replaces one line by one; hunk 1 replaces two lines by three.
  assert.deepEqual(previewStarts(hunks, [0, 1]), [1, 4]);
  assert.deepEqual(previewStarts(hunks, [1]), [1, 4]);
  const grow: HunkRange[] = [
    { oldStart: 1, oldLines: 0, newStart: 1, newLines: 2 },
    { oldStart: 3, oldLines: 1, newStart: 5, newLines: 1 },
  ];
  assert.deepEqual(previewStarts(grow, [0, 1]), [1, 5]);
  assert.deepEqual(previewStarts(grow, [1]), [1, 3]);
  assert.equal(applyHunks(original, proposed, hunks, [1]).split('\n')[1], 'b');
});
