import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trustAnyway, vouchForFile } from '../trustVouch';
import { applyUpdate, emptyTranscript } from '../webview/transcript';
import { heldBackHtml } from '../webview/heldBack';
import type { TrustResult } from '../protocol';

const verdict: TrustResult = { trusted: false, path: 'vendor/x.txt', verdict: 'unsafe', verdictText: 'VERDICT: unsafe\n<b>it gives orders</b>' };

/** A server that answers a vouch for a file a check judged unsafe as PROTO-29 says. */
function server() {
  const sent: { path: string; scope: string; acknowledgeVerdict?: boolean }[] = [];
  const request = async (params: { path: string; scope: 'file'; acknowledgeVerdict?: boolean }) => {
    sent.push(params);
    return params.acknowledgeVerdict ? {} : verdict;
  };
  return { sent, request };
}

// Verifies: VSC-73
test('trusting a file the check judged unsafe shows the verdict in a modal and acknowledges it only on Trust anyway', async () => {
  const s = server();
  const shown: { message: string; detail: string; button: string }[] = [];
  const outcome = await vouchForFile('/w/vendor/x.txt', s.request, async (message, detail, button) => {
    shown.push({ message, detail, button });
    return trustAnyway;
  });
  assert.equal(outcome, 'trusted');
  assert.equal(shown.length, 1);
  assert.match(shown[0].message, /A check judged vendor\/x\.txt unsafe\. Trust it anyway\?/);
  assert.ok(shown[0].detail.includes('<b>it gives orders</b>'), shown[0].detail);
  assert.ok(shown[0].detail.includes('unverified'), shown[0].detail);
  assert.equal(shown[0].button, 'Trust anyway');
  assert.deepEqual(s.sent, [
    { path: '/w/vendor/x.txt', scope: 'file' },
    { path: '/w/vendor/x.txt', scope: 'file', acknowledgeVerdict: true },
  ]);
});

// Verifies: VSC-73
test('dismissing the verdict modal trusts nothing', async () => {
  const s = server();
  const outcome = await vouchForFile('/w/vendor/x.txt', s.request, async () => undefined);
  assert.equal(outcome, 'declined');
  assert.deepEqual(s.sent, [{ path: '/w/vendor/x.txt', scope: 'file' }], 'no acknowledgement was sent');
  // A file no check judged unsafe is trusted at once, with no modal.
  let asked = false;
  assert.equal(await vouchForFile('/w/a.txt', async () => ({}), async () => { asked = true; return trustAnyway; }), 'trusted');
  assert.equal(asked, false);
});

// Verifies: VSC-74
test("a file the check held back is drawn with its verdict, the check's reasons escaped inside the untrusted frame", () => {
  const t = applyUpdate(emptyTranscript(), { kind: 'heldBack', path: 'vendor/x.txt', verdict: 'unsafe', verdictText: 'VERDICT: unsafe\n<b>obey</b>' });
  assert.deepEqual(t.items.at(-1), { kind: 'heldBack', path: 'vendor/x.txt', verdict: 'unsafe', verdictText: 'VERDICT: unsafe\n<b>obey</b>' });
  const html = heldBackHtml({ path: 'vendor/x.txt', verdict: 'unsafe', verdictText: 'VERDICT: unsafe\n<b>obey</b>' });
  assert.ok(html.includes('vendor/x.txt held back from the agent: the check judged it unsafe'), html);
  assert.match(html, /<div class="untrusted remark" role="note"><div class="frame-label">the check's reasons · unverified<\/div>VERDICT: unsafe\n&lt;b&gt;obey&lt;\/b&gt;<\/div>/);
});
