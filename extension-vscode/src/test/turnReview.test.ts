import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commentPrompt, hunkDescription, hunkLabel, hunkLine, parseHunks, reviewSummary, ReviewedMarks } from '../turnReview';

// As bravebot/checkpoint/diff answers it: the file before the turn against now, with context.
const diff = [
  '--- a/src/a.rs',
  '+++ b/src/a.rs',
  '@@ -1,5 +1,6 @@',
  ' fn a() {',
  '-    let x = 1;',
  '+    let count = 1;',
  '+    let more = 2;',
  '     b();',
  '     c();',
  ' }',
  '@@ -8,4 +9,3 @@',
  ' x',
  ' y',
  '-// gone',
  ' z',
  '',
].join('\n');

// Verifies: REVIEW-1, VSC-105
test('a changed file lists its hunks against the checkpoint, where each is now and what it did', () => {
  const hunks = parseHunks(diff);
  assert.equal(hunks.length, 2);
  // Where the hunk changed lines, its context left out.
  assert.deepEqual(hunks[0], { oldStart: 1, newStart: 1, first: 2, last: 3, added: 2, removed: 1 });
  assert.equal(hunkLabel(hunks[0]), 'lines 2-3');
  assert.equal(hunkDescription(hunks[0]), '+2 −1');
  assert.equal(hunkLine(hunks[0]), 2);
  // A hunk that only removes says where the removed lines were.
  assert.deepEqual(hunks[1], { oldStart: 8, newStart: 9, first: 11, last: 11, added: 0, removed: 1 });
  assert.equal(hunkLabel(hunks[1]), 'removed at line 11');
  assert.equal(hunkDescription(hunks[1]), '−1');
  assert.equal(hunkLabel(parseHunks('@@ -3 +3 @@\n-a\n+b\n')[0]), 'line 3');
  assert.deepEqual(parseHunks(''), []);
});

// Verifies: REVIEW-2, VSC-106
test('a reviewed mark is per session and per file, and a file changed again is no longer reviewed', () => {
  const m = new ReviewedMarks();
  assert.equal(m.isReviewed('s1', 'a.rs', 'one\n'), false);
  m.mark('s1', 'a.rs', 'one\n');
  assert.equal(m.isReviewed('s1', 'a.rs', 'one\n'), true);
  assert.equal(m.isReviewed('s2', 'a.rs', 'one\n'), false, 'another session has its own marks');
  assert.equal(m.isReviewed('s1', 'b.rs', 'one\n'), false, 'another file has its own mark');
  assert.equal(m.isReviewed('s1', 'a.rs', 'one\ntwo\n'), false, 'changed after the mark: not reviewed');
  // A removed file is reviewed as removed, and stops being so when it comes back.
  m.mark('s1', 'gone.rs', null);
  assert.equal(m.isReviewed('s1', 'gone.rs', null), true);
  assert.equal(m.isReviewed('s1', 'gone.rs', ''), false);
  m.unmark('s1', 'a.rs');
  assert.equal(m.isReviewed('s1', 'a.rs', 'one\n'), false);
  assert.equal(reviewSummary(3, 1), '1 of 3 reviewed');
  assert.equal(reviewSummary(1, 1), '1 file, all reviewed');
});

// Verifies: REVIEW-5, VSC-107
test('a comment sends the persons words and the range as a place, never the ranges text', () => {
  const c = commentPrompt('src/a.rs', 2, 5, '  rename x to count here \n');
  assert.deepEqual(c, { text: 'rename x to count here', ranges: [{ path: 'src/a.rs', startLine: 2, endLine: 5 }], label: 'comment on lines 2-5 of src/a.rs' });
  assert.equal(commentPrompt('a.rs', 3, 3, 'why?')?.label, 'comment on line 3 of a.rs');
  assert.equal(commentPrompt('a.rs', 1, 1, '   '), undefined, 'no words, nothing sent');
});
