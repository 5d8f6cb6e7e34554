// Sessions that last, as the person sees them: the session list's rows, the loop's words and the
// intervals a loop accepts. Pure, so it is tested without VS Code.

import type { ListedSession, LoopStopResult } from './protocol';

/** The loop the current session runs, as the extension started it. */
export interface LoopState {
  prompt: string;
  ticks: number;
  /** A tick's turn is running: its first update came and its end has not. */
  inTick: boolean;
  selfPaced: boolean;
  /** This tick called schedule_next, so a self-paced loop goes on. */
  askedNext: boolean;
  /** The interval the server keeps; none when self-paced. */
  intervalSeconds?: number;
}

/** What the chat's loop bar shows. */
export interface LoopShown { prompt: string; ticks: number; intervalSeconds?: number }

/** `90`, `90s`, `10m`, `1h` as seconds; undefined for anything else (nought included). */
export function parseInterval(word: string): number | undefined {
  const m = /^\s*(\d+)\s*([smh]?)\s*$/i.exec(word);
  if (!m) return undefined;
  const n = Number(m[1]) * ({ '': 1, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2].toLowerCase()];
  return n > 0 && Number.isSafeInteger(n) ? n : undefined;
}

/** An interval in words: `every 90 s`, `every 10 min`, `every 1 h`. */
export function every(seconds: number): string {
  if (seconds % 3600 === 0) return `every ${seconds / 3600} h`;
  if (seconds % 60 === 0) return `every ${seconds / 60} min`;
  return `every ${seconds} s`;
}

/** What the chat says when a loop starts, is held to another interval, stops or ends by itself. */
export function loopNotice(
  what: 'started' | 'kept' | 'stopped' | 'ended' | 'unasked',
  r: { intervalSeconds?: number } | LoopStopResult,
): string {
  switch (what) {
    case 'started': {
      const i = (r as { intervalSeconds?: number }).intervalSeconds;
      const how = i === undefined ? 'self-paced (each tick asks for the next itself)' : every(i);
      return `Loop started, ${how}: the prompt above is sent again unchanged. Stop loop (above the prompt box) or the command bravebot: Stop the Loop stops it.`;
    }
    case 'kept':
      return `The server keeps the loop at ${every((r as { intervalSeconds: number }).intervalSeconds)} (held between loop.minSeconds and an hour).`;
    case 'stopped': {
      const s = r as LoopStopResult;
      return `Loop stopped after ${s.ticks} ${s.ticks === 1 ? 'tick' : 'ticks'}, ${s.quietTicks} of them quiet.`;
    }
    case 'ended':
      return 'The loop ended with this tick\u2019s error.';
    case 'unasked':
      return 'The loop ended: this tick did not ask for another.';
  }
}

/** How long ago `then` was, in words, from `now` (both in seconds since the epoch). */
export function ago(then: number, now: number): string {
  const s = Math.max(0, Math.round(now - then));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = Math.floor(s / 86400);
  return `${d} ${d === 1 ? 'day' : 'days'} ago`;
}

/** A row of the session list: the title, when it was last written, and where it worked. */
export interface SessionRow { label: string; description: string; detail: string; sessionId: string }

/**
 * The rows of the session list, newest first as the server sends them, leaving out the current
 * session. `root` is the workspace folder: a session of another directory names it.
 */
export function sessionRows(sessions: readonly ListedSession[], current: string | undefined, root: string | undefined, now: number): SessionRow[] {
  return sessions
    .filter((s) => s.sessionId !== current)
    .map((s) => {
      const when = new Date(s.updated * 1000);
      const stamp = `${when.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
      const title = s.title.replace(/\s+/g, ' ').trim();
      return {
        label: title === '' ? '(no title)' : title,
        description: `${ago(s.updated, now)} · ${stamp}`,
        detail: [`mode ${s.mode}`, s.model ? `model ${s.model}` : '', s.cwd && s.cwd !== root ? `in ${s.cwd}` : '', s.sessionId].filter((x) => x !== '').join(' · '),
        sessionId: s.sessionId,
      };
    });
}
