import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badge, notification, questionTimeout, type Watching } from '../attention';
import { answeredItem, applyUpdate, emptyTranscript } from '../webview/transcript';

const on = { questions: true, turnEnd: true };
const looking: Watching = { focused: true, chatVisible: true };
const away: Watching = { focused: false, chatVisible: true };
const hidden: Watching = { focused: true, chatVisible: false };

// Verifies: VSC-100
test('a question or a turn end is notified when the window is not focused or the chat is hidden, and never while the person looks at the chat', () => {
  const q = { kind: 'question', title: 'Run\ncargo test?' } as const;
  assert.equal(notification(q, looking, on), undefined);
  assert.equal(notification(q, away, on), 'bravebot asks: Run cargo test?');
  assert.equal(notification(q, hidden, on), 'bravebot asks: Run cargo test?');
  assert.equal(notification({ ...q, askedBy: 'delegate 2 (reader)' }, hidden, on), 'bravebot asks (asked by delegate 2 (reader)): Run cargo test?');
  assert.equal(notification({ kind: 'question', title: '' }, hidden, on), 'bravebot asks: a question waits for you');
  const end = (stopReason: 'endTurn' | 'cancelled' | 'maxRounds' | 'error') => notification({ kind: 'turnEnd', stopReason }, away, on);
  assert.deepEqual([end('endTurn'), end('maxRounds'), end('error'), end('cancelled')], [
    'bravebot finished its turn.',
    'bravebot stopped: the turn reached its round limit.',
    'bravebot stopped: the turn ended in an error.',
    undefined,
  ]);
  assert.equal(notification({ kind: 'turnEnd', stopReason: 'endTurn' }, looking, on), undefined);
});

// Verifies: VSC-102
test('each kind of notification is turned off by its own setting', () => {
  const q = { kind: 'question', title: 'Write a.txt?' } as const;
  const e = { kind: 'turnEnd', stopReason: 'endTurn' } as const;
  assert.equal(notification(q, away, { questions: false, turnEnd: true }), undefined);
  assert.equal(notification(e, away, { questions: false, turnEnd: true }), 'bravebot finished its turn.');
  assert.equal(notification(e, away, { questions: true, turnEnd: false }), undefined);
  assert.equal(notification(q, away, { questions: true, turnEnd: false }), 'bravebot asks: Write a.txt?');
});

// Verifies: VSC-101
test('the chat badge counts the questions waiting and is gone when none waits', () => {
  assert.equal(badge(0), undefined);
  assert.deepEqual(badge(1), { value: 1, tooltip: 'bravebot: 1 question waits for you in the chat' });
  assert.deepEqual(badge(3), { value: 3, tooltip: 'bravebot: 3 questions wait for you in the chat' });
});

// Verifies: VSC-103
test('a question the server stopped waiting for is said in the chat as refused, and the update itself draws nothing', () => {
  const item = answeredItem('Run touch made.txt?', 'touch made.txt', undefined, 'refused: the server stopped waiting for an answer');
  assert.deepEqual(item, { kind: 'answered', title: 'Run touch made.txt?', answer: 'refused: the server stopped waiting for an answer', refused: true, command: 'touch made.txt' });
  const t = applyUpdate(emptyTranscript(), { kind: 'questionClosed', questionId: 'q1' });
  assert.deepEqual(t, emptyTranscript());
});

// Verifies: VSC-104
test('bravebot.questions.timeoutSeconds is sent only as a whole number of seconds within a week', () => {
  assert.deepEqual([30, 1, 604800, 0, -5, 2.5, 604801, '30', undefined, null].map(questionTimeout), [30, 1, 604800, undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
});
