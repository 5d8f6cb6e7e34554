// Show Status as the person reads it: what the session watches first (each watch's path and how
// many times it fired), then everything the server reported, as it sent it. Pure, so it is tested
// without VS Code.

import type { StatusResult } from './protocol';

/** A watch as `session/status` lists it (LOOP-6). */
interface WatchShown { path?: unknown; fired?: unknown }

function watchLine(w: WatchShown): string {
  const fired = typeof w.fired === 'number' ? w.fired : 0;
  return `- ${String(w.path ?? '?')}: fired ${fired === 1 ? 'once' : `${fired} times`}`;
}

export function statusMarkdown(s: StatusResult): string {
  const watches = (s.watches ?? []) as WatchShown[];
  return [
    '# bravebot status',
    '',
    '## Watches',
    '',
    ...(watches.length ? watches.map(watchLine) : ['No file is watched. The agent can watch one with watch_file when you ask to be told of a change.']),
    '',
    '## Everything the server reports',
    '',
    // Indented rather than fenced: the view is read as text, where fences would show as backticks.
    ...JSON.stringify(s, null, 2).split('\n').map((l) => `    ${l}`),
    '',
  ].join('\n');
}
