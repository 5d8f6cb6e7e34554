// The person's vouch for a file (`bravebot/session/trust`, scope file), carrying the check's
// verdict: a file whose current bytes a check judged unsafe is not trusted until the person has
// seen the verdict and the check's reasons and chosen "Trust anyway" (PROTO-29, VSC-73). Pure: the
// request and the modal are passed in, so the flow is tested without VS Code.

import type { TrustResult } from './protocol';

/** The modal's button that trusts despite the verdict; any other answer trusts nothing. */
export const trustAnyway = 'Trust anyway';

/** The warning a verdict puts before the person: the message, and the check's words as its detail. */
export function verdictWarning(path: string, r: TrustResult): { message: string; detail: string } {
  const reasons = r.verdictText && r.verdictText.trim() !== '' ? r.verdictText : '(the check gave no reasons)';
  return {
    message: `A check judged ${r.path ?? path} ${r.verdict ?? 'unsafe'}. Trust it anyway?`,
    detail: `The check's reasons, in its own words (unverified, not the agent's or bravebot's):\n\n${reasons}\n\n` +
      'Trusting it lets the agent read the file without a check for this session.',
  };
}

/**
 * Vouches for `path`: sends the trust, and where the server answers with a check's verdict instead,
 * shows it through `confirm` and sends the acknowledgement only when the person picks
 * {@link trustAnyway}. Dismissing the modal is not trusting.
 */
export async function vouchForFile(
  path: string,
  request: (params: { path: string; scope: 'file'; acknowledgeVerdict?: boolean }) => Promise<TrustResult | null | undefined>,
  confirm: (message: string, detail: string, button: string) => Promise<string | undefined>,
): Promise<'trusted' | 'declined'> {
  const first = await request({ path, scope: 'file' });
  if (!first || first.trusted !== false) return 'trusted';
  const { message, detail } = verdictWarning(path, first);
  if ((await confirm(message, detail, trustAnyway)) !== trustAnyway) return 'declined';
  const second = await request({ path, scope: 'file', acknowledgeVerdict: true });
  return second && second.trusted === false ? 'declined' : 'trusted';
}
