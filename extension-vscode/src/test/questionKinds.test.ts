import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describe as describeQuestion, diffAnswer, presentationOf, presentations, questionKinds, reviewState, select } from '../questionKinds';
import type { QuestionKind, RequestPermissionParams } from '../protocol';

// The kinds of CONTRACT §3, written out here so that a kind dropped from the table fails.
const contractKinds: QuestionKind[] = ['write', 'edit', 'run', 'fetch', 'lspStart', 'readOutput', 'vetContent', 'trustRead', 'delegate', 'askUser', 'mcpStart', 'mcpTools', 'mcpCall', 'restore'];

function question(kind: QuestionKind, subject: RequestPermissionParams['subject'] = {}): RequestPermissionParams {
  return {
    sessionId: 's1', questionId: 'q1', kind, title: `${kind} something`, subject,
    options: [
      { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
      { optionId: 'always', name: 'Allow for session', kind: 'allow_always' },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
    ],
  };
}

// Verifies: VSC-10
test('every question kind of the contract has a handler, and nothing else', () => {
  assert.deepEqual([...questionKinds].sort(), [...contractKinds].sort());
});

test('the surface of each kind', () => {
  assert.deepEqual(presentations, {
    write: 'diff', edit: 'diff', run: 'card', readOutput: 'content', vetContent: 'content',
    fetch: 'card', lspStart: 'card', trustRead: 'card', delegate: 'card', askUser: 'card',
    mcpStart: 'card', mcpTools: 'content', mcpCall: 'card', restore: 'card',
  });
  assert.equal(presentationOf('somethingNew'), 'card', 'an unknown kind still shows its options');
});

// Verifies: VSC-6
test('selecting an option that was not offered refuses', () => {
  const q = question('run');
  assert.deepEqual(select(q, 'always'), { outcome: 'selected', optionId: 'always' });
  assert.deepEqual(select(q, 'made-up'), { outcome: 'cancelled' });
  assert.deepEqual(select(q, undefined), { outcome: 'cancelled' });
});

// Verifies: VSC-10
test('askUser answers carry the text', () => {
  assert.deepEqual(select(question('askUser'), 'once', { text: 'yes' }), { outcome: 'selected', optionId: 'once', text: 'yes' });
});

// Verifies: VSC-5
test('diff answers: accept, partial, edited, reject, nothing kept', () => {
  const q = question('edit', { original: 'a\n', proposed: 'b\n' });
  assert.deepEqual(diffAnswer(q, true, 'b\n', undefined), { outcome: 'selected', optionId: 'once' });
  assert.deepEqual(diffAnswer(q, true, 'b\n', [1]), { outcome: 'selected', optionId: 'once', acceptedHunks: [1] });
  assert.deepEqual(diffAnswer(q, true, 'c\n', [1]), { outcome: 'selected', optionId: 'once', editedText: 'c\n' });
  assert.deepEqual(diffAnswer(q, false, 'c\n', undefined), { outcome: 'selected', optionId: 'no' });
  assert.deepEqual(diffAnswer(q, true, 'b\n', []), { outcome: 'cancelled' });
});

test('a diff question without a rejecting option refuses by cancelling', () => {
  const q = { ...question('write'), options: [{ optionId: 'once', name: 'Write', kind: 'allow_once' as const }] };
  assert.deepEqual(diffAnswer(q, false, undefined, undefined), { outcome: 'cancelled' });
});

// Verifies: VSC-10
test('fetch shows the host on its own line', () => {
  const lines = describeQuestion(question('fetch', { host: 'example.org', url: 'https://example.org/x' }));
  assert.ok(lines.includes('host: example.org'));
});

// Verifies: VSC-10
test("the agent's question stands on a line of its own under the title", () => {
  const lines = describeQuestion(question('askUser', { question: 'Tabs or spaces?' }));
  assert.equal(lines[1], 'Tabs or spaces?');
});

// Verifies: VSC-25
test('the list of changes says in words where each answered proposal stands', () => {
  const q = question('edit', { original: 'a\n', proposed: 'b\n', hunks: [{ oldStart: 0, oldLines: 1, newStart: 0, newLines: 1 }, { oldStart: 3, oldLines: 1, newStart: 3, newLines: 1 }] });
  assert.equal(reviewState(q, { outcome: 'selected', optionId: 'once' }), 'accepted');
  assert.equal(reviewState(q, { outcome: 'selected', optionId: 'once', acceptedHunks: [1] }), 'accepted 1 of 2 hunks');
  assert.equal(reviewState(q, { outcome: 'selected', optionId: 'once', editedText: 'c\n' }), 'accepted, your version');
  assert.equal(reviewState(q, { outcome: 'selected', optionId: 'no' }), 'rejected');
  assert.equal(reviewState(q, { outcome: 'cancelled' }), 'not answered (refused)');
});
