import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addConfinementLine, addItem, emptyTranscript } from '../webview/transcript';

// Verifies: VSC-129
test("a session's chat opens with one line naming the platform's confinement and what the session confines", () => {
  const said = 'Landlock ABI 5 and seccomp: writes and network can be confined; this session confines no MCP server: it started none; runs: asked';
  const opened = addItem(emptyTranscript(), { kind: 'user', text: 'build it' });
  const t = addConfinementLine(opened, said);
  assert.deepEqual(t.items.map((i) => i.kind), ['confinement', 'user'], 'above the prompt that opened the session');
  assert.deepEqual(t.items[0], { kind: 'confinement', text: `Confinement: ${said}` });
  // Once: a later status adds nothing, and an empty one draws nothing.
  assert.equal(addConfinementLine(t, said).items.length, 2);
  assert.equal(addConfinementLine(opened, '').items.length, 1);
});
