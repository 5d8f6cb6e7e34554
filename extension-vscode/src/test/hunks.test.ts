import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HunkSelection, applyHunks, hunkMarks, previewStarts, proposalFromHunks, splitKeepEnds, textsOf } from '../hunks';
import type { HunkRange, QuestionTextsResult, Subject } from '../protocol';

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

// Verifies: VSC-72
test("the proposal is rebuilt from the original and the hunks' texts", () => {
  // A change, an insertion (no old lines), a removal (empty text) and an appended line.
  const o = 'a\nb\nc\nd\ne\n';
  const p = 'a\nB\nx\nc\ne\nf\n';
  const hs: HunkRange[] = [
    { oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, text: 'B\n' },
    { oldStart: 2, oldLines: 0, newStart: 2, newLines: 1, text: 'x\n' },
    { oldStart: 3, oldLines: 1, newStart: 4, newLines: 0, text: '' },
    { oldStart: 5, oldLines: 0, newStart: 5, newLines: 1, text: 'f\n' },
  ];
  assert.equal(proposalFromHunks(o, hs), p);
  // What the diff's hunks and lenses are then made from: every hunk kept gives it back.
  assert.equal(applyHunks(o, proposalFromHunks(o, hs) ?? '', hs, [0, 1, 2, 3]), p);
  assert.equal(applyHunks(o, proposalFromHunks(o, hs) ?? '', hs, [2]), 'a\nb\nc\ne\n');
  // A last line without a final line break, changed, given one, and left alone after a change.
  assert.equal(proposalFromHunks('a\nb', [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, text: 'B' }]), 'a\nB');
  assert.equal(proposalFromHunks('a\nb', [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, text: 'b\n' }]), 'a\nb\n');
  assert.equal(proposalFromHunks('a\nb', [{ oldStart: 0, oldLines: 1, newStart: 0, newLines: 1, text: 'A\n' }]), 'A\nb');
  // CRLF lines keep their \r: the split is after each \n, the texts carry their own breaks.
  assert.equal(
    proposalFromHunks('one\r\ntwo\r\nthree\r\n', [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 2, text: 'TWO\r\n2b\r\n' }]),
    'one\r\nTWO\r\n2b\r\nthree\r\n',
  );
  // A write to a new file: nothing before, one insertion; no hunks: the original as it is.
  assert.equal(proposalFromHunks('', [{ oldStart: 0, oldLines: 0, newStart: 0, newLines: 2, text: 'one\ntwo\n' }]), 'one\ntwo\n');
  assert.equal(proposalFromHunks('same\n', []), 'same\n');
});

// Verifies: VSC-72
test('hunks without texts, or that do not fit the original, rebuild nothing, so the texts are asked for', () => {
  assert.equal(proposalFromHunks('a\nb\n', [{ oldStart: 0, oldLines: 1, newStart: 0, newLines: 1 }]), undefined);
  assert.equal(proposalFromHunks('a\nb\n', [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 1, text: 'x\n' }]), undefined);
  assert.equal(proposalFromHunks('a\nb\nc\n', [
    { oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, text: 'B\n' },
    { oldStart: 0, oldLines: 1, newStart: 0, newLines: 1, text: 'A\n' },
  ]), undefined);
});

// Verifies: VSC-72
test("the texts come as sent, else from the open document at the question's version, else from the server", async () => {
  const hs: HunkRange[] = [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, text: 'B\n' }];
  const held = { original: 'server a\nb\n', proposed: 'server a\nB\n' };
  let asked = 0;
  const fetch = async (): Promise<QuestionTextsResult> => {
    asked++;
    return held;
  };
  const doc = { version: 7, getText: () => 'a\nb\nc\n' };
  const ask = (s: Subject): Promise<QuestionTextsResult> => textsOf(s, doc, fetch);
  assert.deepEqual(await ask({ original: 'o', proposed: 'p', hunks: hs }), { original: 'o', proposed: 'p' }, 'both texts sent');
  assert.deepEqual(await ask({ version: 7, hunks: hs }), { original: 'a\nb\nc\n', proposed: 'a\nB\nc\n' }, 'the buffer at its version');
  assert.equal(asked, 0, 'nothing asked of the server');
  assert.deepEqual(await ask({ version: 6, hunks: hs }), held, 'the person typed since');
  assert.deepEqual(await ask({ hunks: hs }), held, 'read from disk: no version');
  assert.deepEqual(await textsOf({ version: 7, hunks: hs }, undefined, fetch), held, 'the file is not open');
  assert.deepEqual(await ask({ version: 7, hunks: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 }] }), held, 'a hunk without its text');
  assert.equal(asked, 4, 'each of the four asked the server');
  await assert.rejects(textsOf({ hunks: hs }, undefined, () => Promise.reject(new Error('no question with that id is waiting'))), /no question with that id/);
});

// Verifies: VSC-86
test("the file's own editor marks each hunk's lines and where it stands", () => {
  const hunks = [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2 }, { oldStart: 5, oldLines: 0, newStart: 5, newLines: 1 }, { oldStart: 9, oldLines: 1, newStart: 10, newLines: 0 }];
  assert.deepEqual(hunkMarks(hunks, new Map(), 20), [
    { start: 1, end: 2, mark: 'pending' },
    { start: 5, end: 5, mark: 'pending' },
    { start: 9, end: 9, mark: 'pending' },
  ]);
  // Accept this hunk and Reject this hunk from Quick Fix show at once; lines past the end are held in.
  assert.deepEqual(hunkMarks(hunks, new Map([[0, true], [2, false]]), 7).map((m) => [m.start, m.end, m.mark]), [[1, 2, 'accepted'], [5, 5, 'pending'], [6, 6, 'rejected']]);
});
