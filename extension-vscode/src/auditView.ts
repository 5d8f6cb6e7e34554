// The audit trail as the person reads it: the server's gate decisions grouped by the turn that made
// them, each turn headed by when it began and the words that started it, each record with the time
// the server made it (`at`, milliseconds since the epoch). The extension notes how many records there
// were when each prompt was sent, which is how records are grouped. Pure, so it is tested without
// VS Code.

import type { AuditRecord } from './protocol';

/** A prompt as the audit view heads it: when it was sent, its words, and the records before it. */
export interface TurnMark { at: Date; text: string; recordsBefore: number }

function clock(d: Date): string {
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/** The time of day a record was made, as `HH:MM:SS` UTC; nothing for a record without a time. */
function timeOf(at: number | undefined): string {
  return typeof at === 'number' && Number.isFinite(at) ? `${new Date(at).toISOString().slice(11, 19)} · ` : '';
}

function oneLine(text: string, max = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A label written as the server writes it, `(T,pub)` or `(U,priv)`, in words: trusted or
 * untrusted, public or private. Anything else is left as it is.
 */
export function labelWords(detail: string): string {
  return detail.replace(/\((T|U),(pub|priv)\)/g, (_, t: string, p: string) => `(${t === 'T' ? 'trusted' : 'untrusted'}, ${p === 'pub' ? 'public' : 'private'})`);
}

/** The gates' own names (server/core `Gate`) in plain words; a name this build does not know stays as it is. */
export const gateWords: Readonly<Record<string, string>> = {
  routing: 'the agent chose what to do',
  promote: 'an argument of the agent\'s was endorsed',
  file_read: 'a file was read',
  present: 'what the agent may see',
  trust: 'trust changed',
  question: 'a question to you',
  check: 'a check',
  context: 'a context that met untrusted content',
};

/** Markdown: records before the first prompt (session set-up), then a section per turn. */
export function auditMarkdown(records: readonly AuditRecord[], turns: readonly TurnMark[], now: Date): string {
  const out = ['# bravebot audit trail', '', `As of ${clock(now)}. A turn's time is when it began; each record's (UTC) is when its gate decided.`, ''];
  const row = (r: AuditRecord): string => `- ${timeOf(r.at)}${r.decision === 'refused' ? '**refused**' : r.decision} · ${gateWords[r.gate] ?? r.gate} · ${labelWords(r.detail)}`;
  const first = turns[0]?.recordsBefore ?? records.length;
  if (first > 0) out.push('## Before the first prompt', '', ...records.slice(0, first).map(row), '');
  turns.forEach((t, i) => {
    const end = turns[i + 1]?.recordsBefore ?? records.length;
    const mine = records.slice(t.recordsBefore, end);
    out.push(`## Turn ${i + 1} · ${clock(t.at)} · “${oneLine(t.text)}”`, '', ...(mine.length ? mine.map(row) : ['- no gate decisions']), '');
  });
  if (turns.length === 0 && records.length === 0) out.push('No gate decisions yet.', '');
  // The exact gate names, for anyone matching this view against the audit file.
  const named = [...new Set(records.map((r) => r.gate))].filter((g) => gateWords[g] !== undefined);
  if (named.length) out.push('## The gates by their exact names', '', ...named.map((g) => `- ${gateWords[g]}: ${g}`), '');
  return out.join('\n');
}
