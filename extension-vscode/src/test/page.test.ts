import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatPage } from '../webview/page';

// Verifies: VSC-27
test('the chat page draws Send disabled and has no control that submits its form natively', () => {
  const html = chatPage({ cspSource: 'vscode-webview://x', nonce: 'n0nce', script: 'https://x/webview.js', style: 'https://x/chat.css' });
  const send = html.match(/<button id="send"[^>]*>/)?.[0] ?? '';
  assert.match(send, /\btype="button"/, send);
  assert.match(send, /\bdisabled\b/, send);
  // Inside the form every button says type="button": an untyped one would submit it.
  const form = html.slice(html.indexOf('<form'), html.indexOf('</form>'));
  const buttons = form.match(/<button\b[^>]*>/g) ?? [];
  assert.ok(buttons.length >= 3, form);
  for (const b of buttons) assert.match(b, /\btype="button"/, b);
  assert.doesNotMatch(form, /type="submit"|<input\b/, 'nothing that submits');
  assert.match(html, /script-src 'nonce-n0nce'/);
  assert.match(html, /<script nonce="n0nce" src="https:\/\/x\/webview.js">/);
});
