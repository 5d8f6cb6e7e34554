// Show Status as the person reads it: what the session watches first (each watch's path and how
// many times it fired), the delegates running (then those that ended), then everything the server
// reported, as it sent it. Pure, so it is tested without VS Code.

import type { StatusResult } from './protocol';

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
  return [
    '# bravebot status',
    '',
    '## Watches',
    '',
    ...(watches.length ? watches.map(watchLine) : ['No file is watched. The agent can watch one with watch_file when you ask to be told of a change.']),
    '',
    '## Delegates',
    '',
    ...(running.length ? running.map(delegateLine) : ['No delegate is running.']),
    ...(delegates.length > running.length ? ['', 'Ended in this turn or the last:', '', ...delegates.filter((d) => !running.includes(d)).map(delegateLine)] : []),
    '',
    '## Everything the server reports',
    '',
    // Indented rather than fenced: the view is read as text, where fences would show as backticks.
    ...JSON.stringify(s, null, 2).split('\n').map((l) => `    ${l}`),
    '',
  ].join('\n');
}
