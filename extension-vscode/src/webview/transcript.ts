// The chat transcript as data: session updates folded into items the webview renders. Pure, so the
// message handling is tested without a browser or VS Code.

import type { SessionUpdate, TodoItem } from '../protocol';

export type Item =
  | { kind: 'user'; text: string }
  | { kind: 'agent'; text: string }
  | { kind: 'tool'; callId: string; tool: string; why: string; status?: string; summary?: string }
  /** Quarantined notices and remarks are shown in a separate frame: they are not the agent's words. */
  | { kind: 'quarantined'; ref: string; origin: string; lines: number; bytes: number; label: string }
  | { kind: 'remark'; text: string }
  | { kind: 'check'; state: string; verdict?: string }
  | { kind: 'plan'; todos: TodoItem[] }
  | { kind: 'turnEnded'; stopReason: string };

export interface Transcript {
  items: Item[];
  busy: boolean;
}

export function emptyTranscript(): Transcript {
  return { items: [], busy: false };
}

export function addUser(t: Transcript, text: string): Transcript {
  return { items: [...t.items, { kind: 'user', text }], busy: true };
}

/** Folds one update into the transcript; agent text deltas extend the last agent item. */
export function applyUpdate(t: Transcript, u: SessionUpdate): Transcript {
  const items = t.items.slice();
  const last = items[items.length - 1];
  switch (u.kind) {
    case 'agentText':
      if (last?.kind === 'agent') items[items.length - 1] = { ...last, text: last.text + u.delta };
      else items.push({ kind: 'agent', text: u.delta });
      return { items, busy: true };
    case 'toolCall':
      items.push({ kind: 'tool', callId: u.callId, tool: u.tool, why: u.why });
      return { items, busy: true };
    case 'toolResult': {
      const i = items.findIndex((x) => x.kind === 'tool' && x.callId === u.callId);
      if (i >= 0) items[i] = { ...(items[i] as Extract<Item, { kind: 'tool' }>), status: u.status, summary: u.summary };
      else items.push({ kind: 'tool', callId: u.callId, tool: '?', why: '', status: u.status, summary: u.summary });
      return { items, busy: t.busy };
    }
    case 'quarantined':
      items.push({ kind: 'quarantined', ref: u.ref, origin: u.origin, lines: u.lines, bytes: u.bytes, label: u.label });
      return { items, busy: t.busy };
    case 'remark':
      items.push({ kind: 'remark', text: u.text });
      return { items, busy: t.busy };
    case 'check':
      items.push({ kind: 'check', state: u.state, verdict: u.verdict });
      return { items, busy: t.busy };
    case 'plan':
      if (last?.kind === 'plan') items[items.length - 1] = { kind: 'plan', todos: u.todos };
      else items.push({ kind: 'plan', todos: u.todos });
      return { items, busy: t.busy };
    case 'turnEnded':
      items.push({ kind: 'turnEnded', stopReason: u.stopReason });
      return { items, busy: false };
    default:
      return t;
  }
}

/** Messages between the extension and the webview. */
export type ToWebview =
  | { type: 'update'; update: SessionUpdate }
  | { type: 'user'; text: string }
  | { type: 'reset' }
  | { type: 'mode'; mode: string }
  | { type: 'state'; state: 'idle' | 'thinking' | 'waiting' }
  | { type: 'question'; questionId: string; kind: string; lines: string[]; content?: string; verdict?: string; verdictText?: string; ownWords?: boolean; options: { optionId: string; name: string; kind: string }[] }
  | { type: 'questionDone'; questionId: string };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'prompt'; text: string; files: string[] }
  | { type: 'cancel' }
  | { type: 'newSession' }
  | { type: 'setMode'; mode: string }
  | { type: 'answer'; questionId: string; optionId?: string; text?: string };

/** `@path` mentions in a prompt, sent as `files`. */
export function mentions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    // Sentence punctuation after a mention is not part of the path.
    const path = m[1].replace(/[.,;:!?)]+$/, '');
    if (path && !out.includes(path)) out.push(path);
  }
  return out;
}
