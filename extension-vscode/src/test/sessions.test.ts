import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loopNotice, parseInterval, sessionRows } from '../sessions';
import { resumedGone, resumedTranscript, offers, withContext, withoutContext } from '../webview/transcript';
import { statusMarkdown } from '../statusView';
import { checkOutgoing, notify, request } from '../wire';
import type { ListedSession, StatusResult } from '../protocol';

const listed = (id: string, title: string, updated: number, cwd = '/ws'): ListedSession => ({ sessionId: id, title, created: updated - 60, updated, mode: 'ask', model: 'fake-model', cwd });

// Verifies: VSC-40
test('the session list shows each record by title and time, newest first, without the current one', () => {
  const now = 1_800_000_000;
  const rows = sessionRows([listed('s3', 'fix\nthe build', now - 30), listed('s2', '', now - 7200, '/elsewhere'), listed('s1', 'old', now - 3 * 86400)], 's9', '/ws', now);
  assert.deepEqual(rows.map((r) => [r.sessionId, r.label]), [['s3', 'fix the build'], ['s2', '(no title)'], ['s1', 'old']]);
  assert.equal(rows[0].description, `just now · ${new Date((now - 30) * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  assert.ok(rows[1].description.startsWith('2 h ago · '), rows[1].description);
  assert.ok(rows[2].description.startsWith('3 days ago · '), rows[2].description);
  assert.equal(rows[0].detail, 'mode ask · model fake-model · s3', 'the workspace root is not repeated');
  assert.equal(rows[1].detail, 'mode ask · model fake-model · in /elsewhere · s2');
  assert.deepEqual(sessionRows([listed('s9', 'me', now)], 's9', '/ws', now), [], 'the current session is not offered');
});

// Verifies: VSC-40
test('a resumed session is drawn from the transcript the server returns, and says its references are gone', () => {
  const t = resumedTranscript({ sessionId: 'abc', title: 'kiwi', cwd: '/ws', mode: 'plan', transcript: [
    { role: 'person', text: 'remember kiwi' }, { role: 'agent', text: 'I will remember **kiwi**.' }, { role: 'person', text: 'and?' }, { role: 'agent', text: 'kiwi' },
  ] });
  assert.deepEqual(t.items.map((i) => i.kind), ['notice', 'user', 'agent', 'user', 'agent', 'notice']);
  assert.equal((t.items[0] as { text: string }).text, 'Resumed the session “kiwi” (abc), mode plan, in /ws.');
  assert.equal((t.items[2] as { text: string }).text, 'I will remember **kiwi**.');
  assert.equal((t.items[5] as { text: string }).text, resumedGone);
  assert.equal(t.busy, false);
  // The last prompt offers Retry and Edit as any sent one does; the first does not.
  assert.deepEqual([offers(t, 1).edit, offers(t, 3)], [false, { resend: true, edit: true, retry: false }]);
});

// Verifies: VSC-42
test('a loop interval is read as seconds, minutes or hours, and the loop says what it does', () => {
  assert.deepEqual(['90', '90s', '10m', '1h', ' 2M ', '0', '-5', '1.5m', 'soon', ''].map(parseInterval), [90, 90, 600, 3600, 120, undefined, undefined, undefined, undefined, undefined]);
  assert.ok(loopNotice('started', {}).startsWith('Loop started, self-paced'));
  assert.ok(loopNotice('started', { intervalSeconds: 600 }).startsWith('Loop started, every 10 min:'));
  assert.equal(loopNotice('kept', { intervalSeconds: 3600 }), 'The server keeps the loop at every 1 h (held between loop.minSeconds and an hour).');
  assert.equal(loopNotice('stopped', { stopped: true, ticks: 3, quietTicks: 2 }), 'Loop stopped after 3 ticks, 2 of them quiet.');
  assert.equal(loopNotice('stopped', { stopped: true, ticks: 1, quietTicks: 0 }), 'Loop stopped after 1 tick, 0 of them quiet.');
});

// Verifies: VSC-43
test('Show Status lists the watches first, each with how often it fired', () => {
  const base = { model: { name: 'm' }, mode: 'ask', jobs: [], auditLog: null } as unknown as StatusResult;
  const shown = statusMarkdown({ ...base, watches: [{ path: 'build.log', fired: 0 }, { path: 'src/a.rs', fired: 1 }, { path: 'b', fired: 4 }] });
  // The watches follow the model, the mode, the files and the checks (VSC-80).
  assert.ok(shown.startsWith('# bravebot status\n\n## Model\n'), shown);
  assert.ok(shown.includes('\n## Watches\n\n- build.log: fired 0 times\n- src/a.rs: fired once\n- b: fired 4 times\n'), shown);
  assert.ok(shown.includes('"path": "build.log"'), 'the server answer follows as it was sent');
  assert.ok(statusMarkdown({ ...base, watches: [] }).includes('No file is watched.'));
});

// Verifies: VSC-46
test('a message goes out only as its table entry says: listed, of its kind, with its fields', async () => {
  const sent: string[] = [];
  const client = {
    sendRequest: async <R>(m: string, p: object): Promise<R> => (sent.push(`request ${m} ${JSON.stringify(p)}`), {} as R),
    sendNotification: async (m: string, p: object): Promise<void> => void sent.push(`notification ${m} ${JSON.stringify(p)}`),
  };
  await request(client, 'bravebot/session/new', { cwd: '/ws', incognito: true });
  await notify(client, 'bravebot/session/cancel', { sessionId: 's' });
  assert.deepEqual(sent, ['request bravebot/session/new {"cwd":"/ws","incognito":true}', 'notification bravebot/session/cancel {"sessionId":"s"}']);
  assert.throws(() => checkOutgoing('bravebot/session/cancel', 'request', { sessionId: 's' }), /is a notification, not a request/);
  assert.throws(() => checkOutgoing('bravebot/session/loop', 'request', { sessionId: 's', prompt: 'p', interval: 5 }), /has no field interval/);
  assert.throws(() => checkOutgoing('bravebot/session/frobnicate', 'request', {}), /not a method the extension sends/);
  await assert.rejects(async () => request(client, 'bravebot/session/end' as never, { session: 's' }), /has no field session/);
  assert.equal(sent.length, 2, 'nothing refused was sent');
});

// Verifies: VSC-40, VSC-44
test('a prompt sent with the editor context is recalled and resumed as the words the person typed', () => {
  // A record an earlier extension wrote, with the selection's text in the prompt.
  const old = 'why?\n\n(The file open in my editor: a.md.)\nWhat I selected in it (lines 2-3):\n```\nx\n\n(The file open in my editor: b.md.)\n```';
  assert.deepEqual(withoutContext(old), { text: 'why?', context: 'a.md, lines 2–3 selected' });
  assert.deepEqual(withoutContext(withContext('why?', { path: 'a.md', selection: { startLine: 2, endLine: 3 } })), { text: 'why?', context: 'a.md' });
  assert.deepEqual(withoutContext(withContext('fix it', { path: 'src/a.py' })), { text: 'fix it', context: 'src/a.py' });
  assert.deepEqual(withoutContext('plain words'), { text: 'plain words' });
  const t = resumedTranscript({ sessionId: 'a', title: 't', cwd: '/ws', mode: 'ask', transcript: [{ role: 'person', text: withContext('fix it', { path: 'src/a.py' }) }] });
  assert.deepEqual(t.items[1], { kind: 'user', text: 'fix it', context: 'src/a.py', sent: { text: 'fix it', files: [] } });
});
