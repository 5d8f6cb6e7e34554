import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completeMention, mentionAt, rankMentions } from '../webview/mentionComplete';
import { mentions } from '../webview/transcript';

// Verifies: VSC-24
test('an @ mention being typed is found, ranked against the workspace files and completed into files', () => {
  assert.deepEqual(mentionAt('look at @sr', 11), { start: 8, query: 'sr' });
  assert.deepEqual(mentionAt('@', 1), { start: 0, query: '' });
  assert.equal(mentionAt('mail me@home', 12), undefined);
  assert.equal(mentionAt('look at @src now', 16), undefined);
  const paths = ['docs/app.md', 'src/app.py', 'src/main.py', 'tests/test_app.py', 'app.py'];
  assert.deepEqual(rankMentions(paths, 'app'), ['app.py', 'src/app.py', 'docs/app.md', 'tests/test_app.py']);
  assert.deepEqual(rankMentions(paths, 'SRC', 1), ['src/app.py']);
  const done = completeMention('fix @ap please', 7, 'src/app.py');
  assert.deepEqual(done, { text: 'fix @src/app.py please', cursor: 16 });
  assert.deepEqual(mentions(done.text), ['src/app.py']);
});
