import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainError } from '../explain';
import { modelsRequest, parseModels } from '../models';
import { auditMarkdown, labelWords } from '../auditView';

const settings = { serverPath: 'bravebot', baseUrl: 'http://127.0.0.1:9/v1' };

// Verifies: VSC-13
test('errors name the reason and the setting to change', () => {
  const missing = explainError('bravebot could not find its program: "bravebot" is not an executable file or a program on PATH (bravebot.serverPath)', settings);
  assert.match(missing.text, /"bravebot" was not found/);
  assert.match(missing.hint ?? '', /bravebot\.serverPath/);
  assert.equal(missing.action?.command, 'bravebot.locateServer');
  assert.equal(explainError('spawn bravebot ENOENT', settings).action?.command, 'bravebot.locateServer');
  const unreachable = explainError('model endpoint could not be reached at http://127.0.0.1:9/v1/chat/completions: connection refused', settings);
  assert.match(unreachable.text, /could not be reached/);
  assert.match(unreachable.hint ?? '', /bravebot\.model\.baseUrl \(now http:\/\/127\.0\.0\.1:9\/v1\)/);
  assert.match(explainError('x could not be reached', { ...settings, baseUrl: '' }).hint ?? '', /the default, since bravebot\.model\.baseUrl is empty/);
  assert.equal(explainError('model endpoint answered 401: bad key', settings).action?.command, 'bravebot.setApiKey');
  assert.match(explainError('model endpoint answered 500: boom', settings).hint ?? '', /Retry/);
  assert.match(explainError('model endpoint answered 404: no such model', settings).hint ?? '', /bravebot\.model\.name/);
});

// Verifies: VSC-12
test('the model list is asked for with the key in a header and read from either listing shape', () => {
  assert.deepEqual(modelsRequest('openai', 'http://h/v1/', 'k'), { url: 'http://h/v1/models', headers: { authorization: 'Bearer k' } });
  assert.deepEqual(modelsRequest('openai', 'http://h/v1', undefined), { url: 'http://h/v1/models', headers: {} });
  assert.deepEqual(modelsRequest('anthropic', 'https://a', 'k'), { url: 'https://a/v1/models', headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'k' } });
  assert.deepEqual(parseModels({ data: [{ id: 'b' }, { id: 'a' }, { id: 'a' }, { nope: 1 }] }), ['a', 'b']);
  assert.deepEqual(parseModels({ models: [{ name: 'llama3' }] }), ['llama3']);
  assert.deepEqual(parseModels(null), []);
  assert.deepEqual(parseModels('<html>'), []);
});

// Verifies: VSC-26, VSC-78
test('the audit trail is grouped by turn, each headed by when it began and its words', () => {
  let at = Date.parse('2026-12-01T14:02:00Z');
  const r = (detail: string, decision = 'allowed') => ({ gate: 'read', decision, detail, at: (at += 61_000) });
  const records = [r('AGENTS.md'), r('a.txt'), r('b.txt', 'refused'), r('c.txt')];
  const turns = [
    { at: new Date('2026-12-01T14:03:11.250Z'), text: 'read a and\nb', recordsBefore: 1 },
    { at: new Date('2026-12-01T14:05:00Z'), text: 'and c', recordsBefore: 3 },
  ];
  const md = auditMarkdown(records, turns, new Date('2026-12-01T14:06:00Z'));
  assert.ok(md.includes('## Before the first prompt\n\n- 14:03:01 · allowed · read · AGENTS.md\n'), md);
  assert.ok(md.includes('## Turn 1 · 2026-12-01 14:03:11 UTC · “read a and b”\n\n- 14:04:02 · allowed · read · a.txt\n- 14:05:03 · **refused** · read · b.txt\n'), md);
  assert.ok(md.includes('## Turn 2 · 2026-12-01 14:05:00 UTC · “and c”\n\n- 14:06:04 · allowed · read · c.txt\n'), md);
  // Gates read as words, their exact names listed at the end (VSC-78).
  const named = auditMarkdown([{ gate: 'routing', decision: 'allowed', detail: 'run (T,pub)', at }, { gate: 'promote', decision: 'refused', detail: 'x', at }], [], new Date(at));
  assert.ok(named.includes('- 14:06:04 · allowed · the agent chose what to do · run (trusted, public)\n'), named);
  assert.ok(named.includes("## The gates by their exact names\n\n- the agent chose what to do: routing\n- an argument of the agent's was endorsed: promote\n"), named);
  // Labels read as words, not the server's shorthand.
  assert.equal(labelWords('file_read produced (T,priv); b is (U,pub), not (X,y)'), 'file_read produced (trusted, private); b is (untrusted, public), not (X,y)');
});
