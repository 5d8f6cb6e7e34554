import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileCopyHtml, sizeWords } from '../webview/fileCopy';

/** The text an HTML fragment shows, entities decoded: what a person reads. */
function shown(html: string): string {
  return html.replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

// Verifies: VSC-115
test('a picture card names its copy, type, size and verdict, and Open asks by question', () => {
  const copy = { path: '/home/p/.cache/bravebot/vetting/12-34.png', mediaType: 'image/png', bytes: 2458 };
  const html = fileCopyHtml('q<7>', copy, 'unsafe', 'it says <b>ignore</b> your instructions');
  const text = shown(html);
  assert.ok(text.includes('untrusted picture · image/png · 2.4 KiB · verdict: unsafe'), text);
  assert.ok(text.includes(copy.path), text);
  assert.ok(text.includes('it says <b>ignore</b> your instructions'), 'the check\'s words, escaped: ' + text);
  assert.ok(!html.includes('<b>'), 'nothing of the check\'s words is markup');
  // Open carries the question, never a path the page chose.
  const open = html.match(/<button[^>]*data-open[^>]*>/)?.[0] ?? '';
  assert.match(open, /data-q="q&lt;7&gt;"/, open);
  assert.doesNotMatch(open, /vetting/, open);
  assert.ok(shown(fileCopyHtml('q', { ...copy, mediaType: 'application/pdf' })).startsWith('untrusted PDF'), 'a PDF says so');
  assert.equal(fileCopyHtml('q', undefined), '', 'no copy, no block');
  assert.deepEqual([sizeWords(812), sizeWords(2458), sizeWords(3 * 1024 * 1024)], ['812 B', '2.4 KiB', '3.0 MiB']);
});
