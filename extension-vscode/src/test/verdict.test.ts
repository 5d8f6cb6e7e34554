import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verdictWarning, verdictWarningHtml } from '../webview/verdict';

// Verifies: VSC-128
test('a card tells an inconclusive check from an unsafe one, and a safe one draws no banner', () => {
  const inconclusive = verdictWarningHtml('inconclusive');
  const unsafe = verdictWarningHtml('unsafe');
  assert.match(inconclusive, /^<div class="verdict-warning verdict-inconclusive" role="alert">/);
  assert.match(inconclusive, /The check did not finish, so nobody has judged this content\./);
  assert.doesNotMatch(inconclusive, /unsafe/);
  assert.match(unsafe, /^<div class="verdict-warning verdict-unsafe" role="alert">/);
  assert.match(unsafe, /judged this content unsafe/);
  assert.notEqual(verdictWarning('inconclusive'), verdictWarning('unsafe'));
  assert.equal(verdictWarningHtml('safe'), '');
  assert.equal(verdictWarningHtml(undefined), '');
  // A word this extension does not know warns of nothing it cannot name.
  assert.equal(verdictWarningHtml('<b>'), '');
});
