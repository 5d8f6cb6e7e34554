// Show Status as the person reads it: what the session watches first (each watch's path and how
// many times it fired), the delegates running (then those that ended), then everything the server
// reported, as it sent it. Pure, so it is tested without VS Code.

import type { StatusResult, TrustRuleStatus } from './protocol';
import { budgetLine, endpointWords, modelLine } from './modelShown';
import { usageLines } from './webview/usage';

const modeWords: Record<string, string> = {
  ask: 'ask: every change is asked about',
  acceptEdits: 'accept edits: edits land unasked, everything else is asked',
  plan: 'plan: nothing changes',
};

/** Whose a trust rule is, in words. */
function ruleLine(r: TrustRuleStatus): string {
  const who: Record<string, string> = {
    person: 'you vouched for it', checker: 'a check judged it safe', personDeny: 'you keep the agent from it',
    settingsDeny: 'the settings keep the agent from it', agentWrite: 'the agent wrote it', default: 'the default',
  };
  const what = r.scope === 'directory' ? `${r.path}/ (the folder)` : r.path;
  return `- ${what}: ${r.trusted ? 'trusted' : 'not trusted'}, ${who[r.origin] ?? r.origin}`;
}

/** A watch as `session/status` lists it (LOOP-6). */
interface WatchShown { path?: unknown; fired?: unknown }

function watchLine(w: WatchShown): string {
  const fired = typeof w.fired === 'number' ? w.fired : 0;
  return `- ${String(w.path ?? '?')}: fired ${fired === 1 ? 'once' : `${fired} times`}`;
}

/** A delegate as `session/status` lists it (DELEG-10, DELEG-60). */
interface DelegateShown { number?: unknown; kind?: unknown; depth?: unknown; state?: unknown }

function delegateLine(d: DelegateShown): string {
  const state = String(d.state ?? '?');
  const words = state === 'waiting' ? 'waiting on you' : state;
  return `- delegate ${String(d.number ?? '?')} (${String(d.kind ?? '?')}), depth ${String(d.depth ?? '?')}: ${words}`;
}

export function statusMarkdown(s: StatusResult): string {
  const watches = (s.watches ?? []) as WatchShown[];
  const delegates = (s.delegates ?? []) as DelegateShown[];
  const running = delegates.filter((d) => d.state === 'running' || d.state === 'waiting');
  const rules = s.trustRules ?? [];
  const vouched = vouchedRules(s);
  return [
    '# bravebot status',
    '',
    '## Model',
    '',
    s.model ? modelLine(s.model) : 'The server did not say.',
    ...(s.model && budgetLine(s.model) ? ['', budgetLine(s.model) as string] : []),
    '',
    '## Watches',
    '',
    ...(watches.length ? watches.map(watchLine) : ['No file is watched. The agent can watch one when you ask to be told of a change.']),
    '',
    '## Delegates',
    '',
    ...(running.length ? running.map(delegateLine) : ['No delegate is running.']),
    ...(delegates.length > running.length ? ['', 'Ended in this turn or the last:', '', ...delegates.filter((d) => !running.includes(d)).map(delegateLine)] : []),
    '',
    '## Mode',
    '',
    modeWords[s.mode] ?? s.mode,
    '',
    '## Files and folders',
    '',
    ...(rules.length ? rules.map(ruleLine) : ['No rule yet: every file is read through a check.']),
    ...(vouched.length ? ['', 'To take a vouch back: command bravebot: Keep a File From the Agent… (the agent then reads it no more in this session).'] : []),
    '',
    '## Checks',
    '',
    s.checks ? `${s.checks.enabled ? 'On' : 'Off'}: ${s.checks.made} made, ${s.checks.saved} saved by a remembered verdict.` : 'The server did not say.',
    ...(s.checks?.model ? ['', `Checks go to ${s.checks.model.source === 'planner' ? "the planner's model" : 'their own model (vetting.model)'}: ${endpointWords(s.checks.model)}.`] : []),
    ...(s.checks?.timeoutSeconds !== undefined ? ['', `A check may take up to ${s.checks.timeoutSeconds} s (vetting.timeoutSeconds); one that takes longer is inconclusive.`] : []),
    ...(s.checks && s.checks.store !== undefined ? ['', s.checks.store ? `Verdicts are kept for later sessions in ${s.checks.store}.` : 'Verdicts are not kept after this session.'] : []),
    '',
    '## Usage',
    '',
    ...(s.usage ? usageLines(s.usage).map((l) => `- ${l.label}: ${l.text}`) : ['The server did not say.']),
    '',
    '## Everything the server reports, exactly',
    '',
    // Indented rather than fenced: the view is read as text, where fences would show as backticks.
    ...JSON.stringify(s, null, 2).split('\n').map((l) => `    ${l}`),
    '',
  ].join('\n');
}

/** What the person vouched for this session: the rules Keep a File From the Agent offers to take back. */
export function vouchedRules(s: Pick<StatusResult, 'trustRules'>): TrustRuleStatus[] {
  return (s.trustRules ?? []).filter((r) => r.origin === 'person' && r.trusted);
}

/** The one request that takes a vouch back (PROTO-28): the person's deny rule on the same path and scope. */
export function keepFromAgentParams(r: Pick<TrustRuleStatus, 'path' | 'scope'>): { path: string; scope: 'file' | 'directory'; deny: true } {
  return { path: r.path, scope: r.scope === 'directory' ? 'directory' : 'file', deny: true };
}
