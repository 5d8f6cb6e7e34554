import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageQueue } from '../messageQueue';
import { addUser, applyUpdate, emptyTranscript, mentions } from '../webview/transcript';
import { renderMarkdown } from '../webview/markdown';
import { PromptHistory } from '../webview/history';
import type { SessionUpdate } from '../protocol';

// Verifies: VSC-2
test('messages posted before the view is ready are queued and delivered in order', () => {
  const q = new MessageQueue<number>();
  q.post(1);
  q.post(2);
  assert.equal(q.held, 2);
  const got: number[] = [];
  q.ready((m) => got.push(m));
  q.post(3);
  assert.deepEqual(got, [1, 2, 3]);
  q.detach();
  q.post(4);
  assert.equal(q.held, 1);
  q.ready((m) => got.push(m));
  assert.deepEqual(got, [1, 2, 3, 4]);
});

test('agent text deltas stream into one message; tool results fill their card', () => {
  const updates: SessionUpdate[] = [
    { kind: 'agentText', delta: 'Hel' },
    { kind: 'agentText', delta: 'lo' },
    { kind: 'toolCall', callId: 'c1', tool: 'read', why: 'look', routing: 'local' },
    { kind: 'quarantined', ref: 'r1', origin: 'web', lines: 3, bytes: 40, label: 'untrusted' },
    { kind: 'toolResult', callId: 'c1', status: 'ok', summary: '3 lines' },
    { kind: 'remark', text: 'for you' },
    { kind: 'turnEnded', stopReason: 'endTurn' },
  ];
  let t = addUser(emptyTranscript(), 'hi');
  assert.equal(t.busy, true);
  for (const u of updates) t = applyUpdate(t, u);
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'agent', 'tool', 'quarantined', 'remark', 'turnEnded']);
  assert.deepEqual(t.items[1], { kind: 'agent', text: 'Hello' });
  assert.deepEqual(t.items[2], { kind: 'tool', callId: 'c1', tool: 'read', why: 'look', status: 'ok', summary: '3 lines' });
  assert.equal(t.busy, false);
});

test('unknown update kinds leave the transcript alone', () => {
  const t = emptyTranscript();
  assert.equal(applyUpdate(t, { kind: 'nope' } as unknown as SessionUpdate), t);
});

test('@ mentions become files', () => {
  assert.deepEqual(mentions('look at @src/a.rs and @b.txt, @src/a.rs again'), ['src/a.rs', 'b.txt']);
});

// Verifies: VSC-2
test('markdown escapes model output and renders code blocks', () => {
  assert.equal(renderMarkdown('<b>x</b> `y`'), '<p>&lt;b&gt;x&lt;/b&gt; <code>y</code></p>');
  assert.equal(renderMarkdown('```rust\nfn a<T>() {}\n```'), '<pre><code data-lang="rust">fn a&lt;T&gt;() {}</code></pre>');
});

// Verifies: VSC-7
test('Up and Down walk the sent prompts and come back to the draft', () => {
  const h = new PromptHistory(['one'], 3);
  h.add('two');
  h.add('two');
  assert.deepEqual(h.list, ['one', 'two'], 'a repeat is kept once');
  assert.equal(h.previous('half typ'), 'two');
  assert.equal(h.previous('two'), 'one');
  assert.equal(h.previous('one'), undefined, 'nothing before the oldest');
  assert.equal(h.next(), 'two');
  assert.equal(h.next(), 'half typ', 'the draft comes back');
  assert.equal(h.next(), undefined);
  h.add('three');
  h.add('four');
  assert.deepEqual(h.list, ['two', 'three', 'four'], 'at most the limit, oldest dropped');
});
