// Auto-vetting as the person sees it in VS Code: the banner at the top of the chat, the status
// bar's word, and the Quick Pick that turns the mode on or off (VET-23, VET-24). Pure, so it is
// tested without VS Code.

import type { AutoVettingStatus } from './protocol';

/** Where a switch is, in words: the one the server named, and what it is. */
export function sourceWords(source: string): string {
  switch (source) {
    case '--vet': return 'bravebot exec --vet';
    case '~/.bravebot/vetting': return 'your recorded choice in ~/.bravebot/vetting';
    case '~/.bravebot/settings.json': return 'vetting.auto in ~/.bravebot/settings.json';
    default: return source;
  }
}

/**
 * The chat's line for the mode: on at the top of a session that opened with it (`opening`), or
 * where it was turned on or off mid-session. A session that opened asking as usual says nothing:
 * `undefined`.
 */
export function bannerText(s: AutoVettingStatus, opening: boolean): string | undefined {
  if (opening && !s.on) return undefined;
  if (s.on) {
    return `Auto-vetting is ${opening ? '' : 'now '}on (${sourceWords(s.source)}): where a check finds nothing, content nobody vouched for reaches the agent without a card asking you.`;
  }
  return `Auto-vetting is now off (${sourceWords(s.source)}): you are asked again before content nobody vouched for reaches the agent.`;
}

/** The status bar's addition while the mode is on, and its hover line; nothing while it is off. */
export function statusText(s: AutoVettingStatus | undefined): { text: string; tooltip: string } | undefined {
  if (!s?.on) return undefined;
  return { text: '$(shield) auto-vetting', tooltip: `Auto-vetting is on, from ${sourceWords(s.source)}` };
}

export interface VettingPick { label: string; description: string; on: boolean }

/** The Quick Pick of bravebot: Auto-Vetting…, the current state first marked. */
export function vettingPicks(current: AutoVettingStatus | undefined): VettingPick[] {
  const now = (on: boolean): string => (current && current.on === on ? ' (now)' : '');
  return [
    { label: `Off${now(false)}`, description: 'ask me before content nobody vouched for reaches the agent', on: false },
    { label: `On${now(true)}`, description: 'let a check that finds nothing answer for me; written to ~/.bravebot/vetting', on: true },
  ];
}

/** What the command says once the server recorded the choice. */
export function vettingSetWords(on: boolean, record: string): string {
  return on
    ? `bravebot: auto-vetting is on, recorded in ${record}: a clean check now answers for you in every session that reads it`
    : `bravebot: auto-vetting is off, recorded in ${record}: every session asks you again`;
}
