import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageQueue } from '../messageQueue';
import { addItem, addUser, applyUpdate, counted, emptyTranscript, mentions, offers } from '../webview/transcript';
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

// Verifies: VSC-132
test("the server's notice becomes a notice, never a remark in the untrusted frame", () => {
  let t = addUser(emptyTranscript(), 'hi');
  t = applyUpdate(t, { kind: 'notice', text: 'Nobody answered \u201cRun make\u201d within 6 s (questions.timeoutSeconds), so it was refused.' });
  t = applyUpdate(t, { kind: 'remark', text: 'a processor said this' });
  assert.deepEqual(t.items.slice(1), [
    { kind: 'notice', text: 'Nobody answered \u201cRun make\u201d within 6 s (questions.timeoutSeconds), so it was refused.' },
    { kind: 'remark', text: 'a processor said this' },
  ]);
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
  assert.equal(renderMarkdown('<b>x</b> `y`'), '<p>&lt;b&gt;x&lt;/b&gt; <code>y</code></p>\n');
  const code = renderMarkdown('```text\nfn a<T>() {}\n```');
  assert.ok(code.includes('<pre><code data-lang="text">fn a&lt;T&gt;() {}</code></pre>'), code);
  assert.ok(code.includes('data-code="copy"') && code.includes('data-code="insert"'), code);
});

// Verifies: VSC-18
test('markdown renders lists, emphasis, tables and links, and never raw HTML, scripts, images or odd links', () => {
  const html = renderMarkdown('- *one*\n- **two**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[site](https://example.com) [bad](javascript:alert(1)) [file](file:///etc/passwd) ![i](https://x/y.png)\n\n<script>alert(1)</script><img src=x onerror=alert(1)>');
  assert.ok(html.includes('<ul>\n<li><em>one</em></li>\n<li><strong>two</strong></li>'), html);
  assert.ok(html.includes('<table>') && html.includes('<td>1</td>'), html);
  assert.ok(html.includes('<a href="https://example.com" title="https://example.com">site</a>'), html);
  assert.ok(!/href="(javascript|file):/.test(html), html);
  assert.ok(!html.includes('<img') && !html.includes('<script'), html);
  assert.ok(html.includes('&lt;script&gt;'), html);
  const ts = renderMarkdown('```ts\nconst a = "<x>";\n```');
  assert.ok(ts.includes('hljs-') && ts.includes('&lt;x&gt;') && !ts.includes('<x>'), ts);
});

// Verifies: VSC-7, VSC-44
test('Up and Down walk the sent prompts and come back to the draft', () => {
  const h = new PromptHistory([{ text: 'one', time: 1 }], 3);
  h.add('two', 2);
  h.add('two', 3);
  assert.deepEqual(h.list, ['one', 'two'], 'a repeat is kept once');
  assert.equal(h.walking, false);
  assert.equal(h.previous('half typ'), 'two');
  assert.equal(h.walking, true);
  assert.equal(h.previous('two'), 'one');
  assert.equal(h.previous('one'), undefined, 'nothing before the oldest');
  assert.equal(h.next(), 'two');
  assert.equal(h.next(), 'half typ', 'the draft comes back');
  assert.equal(h.next(), undefined);
  h.add('three', 4);
  h.add('four', 5);
  assert.deepEqual(h.list, ['two', 'three', 'four'], 'at most the limit, oldest dropped');
});

// Verifies: VSC-44
test('the server history of every session merges by time with the prompts it keeps no record of', () => {
  const h = new PromptHistory();
  // Sent from this view: one the server also has (a recorded session) and one it has not (incognito).
  h.add('fix the tests', 100.4);
  h.add('secret incognito prompt', 200);
  h.setServer([{ text: 'last week', time: 10 }, { text: 'from the other window', time: 150 }, { text: 'fix the tests', time: 100 }].sort((a, b) => a.time - b.time));
  assert.deepEqual(h.list, ['last week', 'fix the tests', 'from the other window', 'secret incognito prompt']);
  assert.equal(h.previous(''), 'secret incognito prompt');
  assert.equal(h.previous(''), 'from the other window');
  assert.equal(h.previous(''), 'fix the tests', 'the prompt sent here and recorded by the server is there once');
  assert.equal(h.previous(''), 'last week', 'a prompt of an earlier session is recalled');
  h.setServer([]);
  assert.equal(h.walking, false, 'a new list starts the walk anew');
});

// Verifies: VSC-14
test('run output joins the newest tool card, and its preview is the first lines', async () => {
  const { previewOf } = await import('../webview/transcript');
  let t = emptyTranscript();
  t = applyUpdate(t, { kind: 'toolCall', callId: 'c1', tool: 'run', why: 'w', routing: null });
  t = applyUpdate(t, { kind: 'runOutput', stream: 'stdout', text: 'a\nb\n', bytes: 4, trusted: false, label: 'U' });
  t = applyUpdate(t, { kind: 'toolResult', callId: 'c1', status: 'failed', summary: 'ran: exit 3' });
  assert.deepEqual(t.items, [{ kind: 'tool', callId: 'c1', tool: 'run', why: 'w', status: 'failed', summary: 'ran: exit 3', output: [{ stream: 'stdout', text: 'a\nb\n', bytes: 4, trusted: false }] }]);
  const long = Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n') + '\n';
  assert.deepEqual(previewOf(long, 3), { shown: 'l0\nl1\nl2', total: 30, cut: true });
  assert.deepEqual(previewOf('x\n', 3), { shown: 'x', total: 1, cut: false });
});

// Verifies: VSC-15
test('a transcript saved by another extension host is cleared with a notice', async () => {
  const { restoredTranscript } = await import('../webview/transcript');
  const saved = addUser(emptyTranscript(), 'hi');
  assert.equal(restoredTranscript(saved, 'e1', 'e1').transcript, saved);
  const r = restoredTranscript(saved, 'e1', 'e2');
  assert.equal(r.newSession, true);
  assert.equal(r.transcript.items.length, 1);
  assert.equal(r.transcript.items[0].kind, 'notice');
  assert.equal(restoredTranscript(emptyTranscript(), undefined, 'e2').newSession, false);
});

// Verifies: VSC-20
test('the editor context goes with a prompt as a name, and a selection as a place, never as text or files', async () => {
  const { withContext, contextLabel, promptRanges, sentLabel } = await import('../webview/transcript');
  assert.equal(withContext('fix it', undefined), 'fix it');
  assert.equal(withContext('fix it', { path: 'src/a.py' }), 'fix it\n\n(The file open in my editor: src/a.py.)');
  const sel = { path: 'a.md', selection: { startLine: 2, endLine: 3 } };
  // The selection's lines are not in the person's words: they go as a place, read from the file.
  assert.equal(withContext('why?', sel), 'why?\n\n(The file open in my editor: a.md.)');
  assert.deepEqual(promptRanges(sel, []), [{ path: 'a.md', startLine: 2, endLine: 3 }]);
  assert.deepEqual(promptRanges({ path: 'a.md' }, []), []);
  assert.deepEqual(promptRanges(undefined, [{ path: 'b.md', startLine: 1, endLine: 1 }]), [{ path: 'b.md', startLine: 1, endLine: 1 }]);
  assert.deepEqual(promptRanges(sel, [{ path: 'a.md', startLine: 2, endLine: 3 }]), [{ path: 'a.md', startLine: 2, endLine: 3 }], 'a place is sent once');
  assert.equal(contextLabel(sel), 'a.md, lines 2–3 selected');
  assert.equal(contextLabel({ path: 'a.md', selection: { startLine: 4, endLine: 4 } }), 'a.md, line 4 selected');
  assert.equal(sentLabel({ path: 'a.md' }, [{ path: 'b.md', startLine: 1, endLine: 2 }]), 'a.md; b.md, lines 1–2');
  assert.equal(sentLabel({ path: 'a.md' }, [{ path: 'a.md', startLine: 1, endLine: 2 }]), 'a.md, lines 1–2', 'the file is not named twice');
  assert.equal(sentLabel(undefined, []), undefined);
});

// Verifies: VSC-23
test('only the last message offers Retry and Edit, and only an error after it offers Retry', () => {
  const sent = { text: 'first', files: [] };
  let t = addUser(emptyTranscript(), 'first', undefined, sent);
  t = addItem(t, { kind: 'error', text: 'boom', retry: sent });
  // The error card carries the Retry; the message offers only Edit.
  assert.deepEqual([offers(t, 0), offers(t, 1)], [{ resend: false, edit: true, retry: false }, { resend: false, edit: false, retry: true }]);
  t = addUser(t, 'second', undefined, { text: 'second', files: ['a.txt'] });
  const none = { resend: false, edit: false, retry: false };
  assert.deepEqual([offers(t, 0), offers(t, 1), offers(t, 2)], [none, none, { resend: true, edit: true, retry: false }]);
});

// Verifies: MCP-31
test('a picture a server sent is drawn only as a data: URL of an allowed picture type with base64 data', async () => {
  const { attachPicture, pictureSrc } = await import('../webview/transcript');
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  assert.equal(pictureSrc({ mediaType: 'image/png', data: png }), `data:image/png;base64,${png}`);
  for (const [mediaType, data] of [
    ['image/svg+xml', 'PHN2Zz4='],
    ['text/html', 'PGI+'],
    ['image/png;x', png],
    ['image/png', '"><script>x</script>'],
    ['image/png', 'iVBORw0KGgo'],
    ['image/png', ''],
  ]) {
    assert.equal(pictureSrc({ mediaType, data }), undefined, `${mediaType} ${data}`);
  }
  let t = applyUpdate(emptyTranscript(), { kind: 'quarantined', ref: 'ref:1', origin: 'a picture', lines: 0, bytes: 96, label: '(U,priv)', picture: true });
  t = applyUpdate(t, { kind: 'quarantined', ref: 'ref:2', origin: 'web', lines: 1, bytes: 3, label: '(U,pub)' });
  t = attachPicture(t, 'ref:1', { mediaType: 'image/png', data: png });
  assert.deepEqual(t.items.map((i) => (i.kind === 'quarantined' ? i.picture?.mediaType : undefined)), ['image/png', undefined]);
});

// Verifies: VSC-2
test('a count in the chat is singular for one and plural otherwise', () => {
  assert.equal(counted(1, 'line'), '1 line');
  assert.equal(counted(0, 'line'), '0 lines');
  assert.equal(counted(37, 'byte'), '37 bytes');
});
