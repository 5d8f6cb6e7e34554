// How the chat draws a file the check held back from the agent (JUDGE-8): its path and the verdict
// in the extension's words, and the check's reasons in the untrusted frame. Pure, unit-tested.

import { escapeHtml } from './markdown';

/**
 * A file the check held back (VSC-74): the path and verdict in the extension's words, the check's
 * reasons in the untrusted frame, as a remark's are.
 */
export function heldBackHtml(it: { path: string; verdict: string; verdictText?: string }): string {
  return `<div class="meta held-back">${escapeHtml(it.path)} held back from the agent: the check judged it ${escapeHtml(it.verdict)}</div>` +
    `<div class="untrusted remark" role="note"><div class="frame-label">the check's reasons · unverified</div>${escapeHtml(it.verdictText || '(none given)')}</div>`;
}
