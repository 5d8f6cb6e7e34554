// The banner at the top of a question card whose content a check judged unsafe or could not judge
// (VSC-7, VSC-128): the three outcomes are told apart on screen, and a safe verdict draws none.
// Pure, unit-tested.

import { escapeHtml } from './markdown';

/** The banner's words for a check's verdict; empty where there is nothing to warn of. */
export function verdictWarning(verdict: string | undefined): string {
  if (verdict === 'unsafe') return 'The check judged this content unsafe: it may try to give the agent orders. Keep it from the agent unless you have read it yourself.';
  if (verdict === 'inconclusive') return 'The check did not finish, so nobody has judged this content. Keep it from the agent unless you have read it yourself.';
  return '';
}

/** The banner as the card draws it, or nothing. */
export function verdictWarningHtml(verdict: string | undefined): string {
  const warning = verdictWarning(verdict);
  return warning ? `<div class="verdict-warning verdict-${escapeHtml(verdict ?? '')}" role="alert">${escapeHtml(warning)}</div>` : '';
}
