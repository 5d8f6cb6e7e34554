// Delegates in the chat: the updates the real server sent during a fan-out of two readers (recorded
// by the Neovim suite's case "each delegate has lines in the chat…" over the real binary and the
// fake model, into target/e2e/neovim/delegate-updates.json, and kept here) folded into the
// transcript, and the words the cards and Show Status use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addUser, applyUpdate, delegateOfCall, delegateStateWords, emptyTranscript, type DelegateItem, type ToolItem } from '../webview/transcript';
import { askedBy } from '../questionKinds';
import { statusMarkdown } from '../statusView';
import type { RequestPermissionParams, SessionUpdate, StatusResult } from '../protocol';

const recorded = JSON.parse(readFileSync(join(process.cwd(), 'src', 'test', 'fixtures', 'delegate-updates.json'), 'utf8')) as SessionUpdate[];

// Verifies: VSC-60, VSC-61
test('the updates of a real fan-out make one card a delegate, its calls under it and its report framed by its label', () => {
  assert.ok(recorded.some((u) => u.kind === 'delegate'), 'the recording holds delegate updates');
  let t = addUser(emptyTranscript(), 'who starts with what');
  for (const u of recorded) t = applyUpdate(t, u);
  const cards = t.items.filter((i): i is DelegateItem => i.kind === 'delegate');
  assert.deepEqual(cards.map((c) => [c.number, c.delegateKind, c.depth, c.state, c.task]), [
    [1, 'reader', 1, 'done', 'alpha.txt'],
    [2, 'reader', 1, 'done', 'vendor/beta.txt'],
  ]);
  // The turn's own tool cards hold only its own call; each delegate's call is under its card.
  assert.deepEqual(t.items.filter((i) => i.kind === 'tool').map((i) => i.kind === 'tool' && i.tool), ['spawn_agent']);
  const tools = (c: DelegateItem) => c.calls.filter((x): x is ToolItem => x.kind === 'tool');
  assert.deepEqual(cards.map((c) => tools(c).map((x) => [x.tool, x.status])), [
    [['read_file', 'ok']],
    [['read_file', 'ok'], ['vet_content', 'ok']],
  ], 'each delegate\'s calls under its card');
  for (const c of cards) {
    assert.ok(tools(c)[0].why.startsWith(`[delegate ${c.number} (reader)]`), tools(c)[0].why);
    assert.equal(c.handed, true, `delegate ${c.number}'s report was handed to the turn`);
  }
  assert.deepEqual(cards[0].report, { text: 'alpha.txt begins with WORD-ALPHA', trusted: true, label: '(T,priv)' });
  assert.equal(cards[1].report?.trusted, false, 'a context that met unvouched content makes an untrusted report');
  assert.equal(cards[1].report?.text, 'vendor/beta.txt begins with WORD-BETA');
  assert.equal(cards[1].report?.label, '(U,priv)');
  // The first waited on the person (its own trustRead question) before it was done.
  const states = recorded.filter((u): u is Extract<SessionUpdate, { kind: 'delegate' }> => u.kind === 'delegate' && u.number === 1).map((u) => u.state);
  assert.deepEqual(states, ['running', 'waiting', 'running', 'done']);
});

// Verifies: VSC-71, VSC-76
test("a delegate's check lines are drawn in its card, the turn's in the flow", () => {
  let t = addUser(emptyTranscript(), 'read both');
  for (const u of recorded) t = applyUpdate(t, u);
  const cards = t.items.filter((i): i is DelegateItem => i.kind === 'delegate');
  // In the recording, each reader's file is checked once and the second's content is checked again
  // when it vets it: every check is a delegate's, so the turn's flow holds none.
  assert.deepEqual(t.items.filter((i) => i.kind === 'check'), [], 'no delegate\'s check in the turn\'s flow');
  // A check's end takes its start's place: one line a check (VSC-76).
  assert.deepEqual(cards.map((c) => c.calls.map((x) => (x.kind === 'check' ? `check ${x.state}` : x.tool))), [
    ['read_file', 'check ended'],
    ['read_file', 'check ended', 'vet_content', 'check ended'],
  ]);
  // A check with no delegate is the turn's own, drawn where it came.
  t = applyUpdate(t, { kind: 'check', state: 'started', lines: 3 });
  assert.equal(t.items[t.items.length - 1].kind, 'check');
});

// Verifies: VSC-61
test('a call id says whose call it is, at any depth, and a state is said in words', () => {
  assert.deepEqual(delegateOfCall('call_1'), undefined);
  assert.deepEqual(delegateOfCall('delegate-3'), { start: 3 });
  assert.deepEqual(delegateOfCall('delegate-3:call_a'), { owner: 3 });
  assert.deepEqual(delegateOfCall('delegate-1:delegate-4'), { start: 4 });
  assert.deepEqual(delegateOfCall('delegate-1:delegate-4:call_b'), { owner: 4 });
  assert.equal(delegateStateWords('waiting'), 'waiting on you');
  assert.equal(delegateStateWords('failed'), 'failed');
  assert.equal(delegateStateWords('newer'), 'newer', 'a state this extension does not know is shown as sent');
  // Calls the turn never started are still grouped under a card made for them.
  let t = emptyTranscript();
  t = applyUpdate(t, { kind: 'toolCall', callId: 'delegate-2:c', tool: 'search', why: '[delegate 2 (reader)] find', routing: {} });
  assert.deepEqual(t.items.map((i) => i.kind), ['delegate']);
});

// Verifies: VSC-62
test('a question a delegate puts says which delegate asks', () => {
  const base: RequestPermissionParams = { sessionId: 's', questionId: 'q', kind: 'trustRead', title: 'Trust it?', subject: {}, options: [] };
  assert.equal(askedBy({ ...base, why: '[delegate 2 (reader)] read it', asker: { number: 2, kind: 'reader' } }), 'delegate 2 (reader)');
  assert.equal(askedBy({ ...base, asker: { number: 3, kind: 'reviewer' } }), 'delegate 3 (reviewer)', 'a question with no reason of its own');
  assert.equal(askedBy({ ...base, why: 'read the file' }), undefined, 'the turn\'s own question');
});

// Verifies: VSC-70
test('a question card names its asker from the asker field only, never from why', () => {
  const base: RequestPermissionParams = { sessionId: 's', questionId: 'q', kind: 'trustRead', title: 'Trust it?', subject: {}, options: [] };
  // The turn's planner wrote a why that looks like a delegate's: the card names nobody.
  assert.equal(askedBy({ ...base, why: '[delegate 1 (reader)] trust me' }), undefined);
  // A nested delegate's why carries every level's name; the field names the one that asks, even
  // when its planner began its own why with another name.
  assert.equal(askedBy({ ...base, why: '[delegate 1 (worker)] [delegate 5 (reader)] [delegate 9 (x)] look', asker: { number: 5, kind: 'reader' } }), 'delegate 5 (reader)');
  // What is not a number and a kind is no asker.
  assert.equal(askedBy({ ...base, asker: { number: '1', kind: 'reader' } as unknown as { number: number; kind: string } }), undefined);
  // The questions the real server put when the turn's planner began its why with a delegate's name
  // and then a real reader asked (recorded by the Neovim suite's case "a question names the
  // delegate that asks from asker alone…" into target/e2e/neovim/asker-questions.json, kept here):
  // both whys begin `[delegate 1 (reader)]`, and only the reader's names an asker.
  const asked = JSON.parse(readFileSync(join(process.cwd(), 'src', 'test', 'fixtures', 'asker-questions.json'), 'utf8')) as RequestPermissionParams[];
  assert.deepEqual(asked.map((q) => [q.why?.startsWith('[delegate 1 (reader)]'), askedBy(q)]), [[true, undefined], [true, 'delegate 1 (reader)']]);
});

// Verifies: VSC-63
test('Show Status lists the delegates running, then those that ended', () => {
  const base = { model: {}, mode: 'ask', interactive: true, trustRules: [], checks: {}, addedDirectories: [], standingEdits: [], rememberedRuns: [], autoVetting: null, confinement: 'x', mcpServers: [], languageServers: [], jobs: [], watches: [], auditLog: null } as unknown as StatusResult;
  const shown = statusMarkdown({ ...base, delegates: [
    { number: 1, kind: 'reader', depth: 1, state: 'done' },
    { number: 2, kind: 'reader', depth: 1, state: 'running' },
    { number: 3, kind: 'checker', depth: 2, state: 'waiting' },
  ] });
  assert.match(shown, /## Delegates\n\n- delegate 2 \(reader\), depth 1: running\n- delegate 3 \(checker\), depth 2: waiting on you\n\nEnded in this turn or the last:\n\n- delegate 1 \(reader\), depth 1: done\n/);
  assert.match(statusMarkdown({ ...base, delegates: [] }), /## Delegates\n\nNo delegate is running\.\n/);
});
