import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsAnswer, MAX_ITEMS, severityWord } from '../diagnosticsAnswer';

const at = { start: { line: 2, character: 6 }, end: { line: 2, character: 9 } };

// Verifies: VSC-110
test('VS Code diagnostics become the wire answer, severity as a word and code as text', () => {
  const answer = diagnosticsAnswer([
    ['file:///w/a.ts', [{ range: at, severity: 0, source: 'ts', code: 2322, message: "Type 'string' is not assignable to type 'number'." }]],
    ['file:///w/b.json', [{ range: at, severity: 1, code: { value: 'trailing-comma' }, message: 'Trailing comma' }]],
  ]);
  assert.deepEqual(answer.items, [
    { uri: 'file:///w/a.ts', range: at, severity: 'error', source: 'ts', code: 2322, message: "Type 'string' is not assignable to type 'number'." },
    { uri: 'file:///w/b.json', range: at, severity: 'warning', source: '', code: 'trailing-comma', message: 'Trailing comma' },
  ]);
  assert.equal(severityWord(3), 'hint');
  assert.equal(severityWord(2), 'information');
});

// Verifies: VSC-110
test('an answer carries at most the bounded number of diagnostics', () => {
  const many = Array.from({ length: MAX_ITEMS + 5 }, () => ({ range: at, severity: 0, message: 'x' }));
  assert.equal(diagnosticsAnswer([['file:///w/a.ts', many]]).items.length, MAX_ITEMS);
});
