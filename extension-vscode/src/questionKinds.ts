// How each question kind of CONTRACT §3 is put to the person, and how answers are built. Pure: the
// VS Code side (questions.ts) dispatches on this table, and tests check it covers every kind.

import type { Outcome, PermissionOption, QuestionKind, RequestPermissionParams } from './protocol';

/**
 * The surfaces a question can be shown on: VS Code's diff editor, a card in the chat, a card with an
 * untrusted-content frame. Cards draw every line apart (a quick pick's placeholder is one line, too
 * narrow for a fetch's host, a language server's warning or the agent's question).
 */
export type Presentation = 'diff' | 'card' | 'content';

export const presentations: Readonly<Record<QuestionKind, Presentation>> = {
  write: 'diff',
  edit: 'diff',
  run: 'card',
  readOutput: 'content',
  vetContent: 'content',
  fetch: 'card',
  lspStart: 'card',
  trustRead: 'card',
  delegate: 'card',
  askUser: 'card',
  // MCP (specs/mcp.md): starting a server and each call are cards; a server's tool list carries
  // its descriptions, the server's own words, so it is framed as untrusted content.
  mcpStart: 'card',
  mcpTools: 'content',
  mcpCall: 'card',
  // A restore that would overwrite what the person changed after the agent (issue 34): a card
  // with the three versions, keeping their changes the safe answer.
  restore: 'card',
};

export const questionKinds = Object.keys(presentations) as QuestionKind[];

/** Unknown kinds (a newer server) get a card with the offered options, never a silent approval. */
export function presentationOf(kind: string): Presentation {
  return (presentations as Record<string, Presentation>)[kind] ?? 'card';
}

export const cancelled: Outcome = { outcome: 'cancelled' };

export function isApproving(o: PermissionOption): boolean {
  return o.kind === 'allow_once' || o.kind === 'allow_always';
}

export function approvingOption(p: RequestPermissionParams): PermissionOption | undefined {
  return p.options.find((o) => o.kind === 'allow_once') ?? p.options.find((o) => o.kind === 'allow_always');
}

export function rejectingOption(p: RequestPermissionParams): PermissionOption | undefined {
  return p.options.find((o) => o.kind === 'reject_once') ?? p.options.find((o) => o.kind === 'reject_always');
}

/** Selects an offered option; an option the question did not offer refuses instead. */
export function select(p: RequestPermissionParams, optionId: string | undefined, extra: Omit<Extract<Outcome, { outcome: 'selected' }>, 'outcome' | 'optionId'> = {}): Outcome {
  if (optionId === undefined || !p.options.some((o) => o.optionId === optionId)) return cancelled;
  const out: Outcome = { outcome: 'selected', optionId };
  if (extra.text !== undefined) out.text = extra.text;
  if (extra.acceptedHunks !== undefined) out.acceptedHunks = extra.acceptedHunks;
  if (extra.editedText !== undefined) out.editedText = extra.editedText;
  return out;
}

/**
 * The answer to an edit or write question: `editedText` only when the person changed the proposal
 * side from what it showed (`shown`),
 * `acceptedHunks` only when some hunks were left out; nothing kept refuses.
 */
export function diffAnswer(p: RequestPermissionParams, approve: boolean, proposalText: string | undefined, acceptedHunks: number[] | undefined, shown: string = p.subject.proposed ?? ''): Outcome {
  if (!approve) {
    const r = rejectingOption(p);
    return r ? select(p, r.optionId) : cancelled;
  }
  const a = approvingOption(p);
  if (!a) return cancelled;
  if (acceptedHunks !== undefined && acceptedHunks.length === 0) return cancelled;
  // `shown` is what the proposal side held before the person typed: the proposal with the hunks
  // left out put back as they were.
  const edited = proposalText !== undefined && proposalText !== shown ? proposalText : undefined;
  // An edited proposal lands whole, so hunk choices no longer apply to it.
  return select(p, a.optionId, edited !== undefined ? { editedText: edited } : { acceptedHunks });
}

/** The lines a card shows above its options, each on its own line (the fetch host among them). */
/**
 * Which delegate puts a question, as `delegate N (kind)`: read from `asker`, which the server sets
 * from the delegate's seat (DELEG-70), never from `why`, which the planner writes and which may
 * begin with any name. `undefined`: the turn's own question.
 */
export function askedBy(p: RequestPermissionParams): string | undefined {
  const a = p.asker;
  if (!a || typeof a.number !== 'number' || typeof a.kind !== 'string') return undefined;
  return `delegate ${a.number} (${a.kind.replace(/[\r\n]+/g, ' ')})`;
}

export function describe(p: RequestPermissionParams): string[] {
  const s = p.subject;
  const lines = [p.title || p.kind];
  if (s.question) lines.push(s.question);
  if (p.why) lines.push(`why: ${p.why}`);
  if (p.kind === 'fetch') {
    if (s.host) lines.push(`host: ${s.host}`);
    if (s.url) lines.push(`url: ${s.url}`);
  }
  if (s.path) lines.push(`path: ${s.path}`);
  if (s.command) lines.push(`command: ${s.command}`);
  for (const step of s.plan ?? []) lines.push(`  ${step}`);
  if (s.notice) lines.push(s.notice);
  // Only the verdict word: the check's own words were written after reading untrusted bytes, so
  // they are shown inside the untrusted frame with those bytes, never as plain lines.
  if (s.verdict) lines.push(`verdict: ${s.verdict}`);
  if (s.origin) lines.push(`from: ${s.origin}`);
  return lines;
}

/** Where an answered edit or write stands, in words, for the list of the turn's changes. */
export function reviewState(p: RequestPermissionParams, o: Outcome): string {
  if (o.outcome !== 'selected') return 'not answered (refused)';
  const option = p.options.find((x) => x.optionId === o.optionId);
  if (!option || !isApproving(option)) return 'rejected';
  if (o.editedText !== undefined) return 'accepted, your version';
  const total = p.subject.hunks?.length ?? 0;
  if (o.acceptedHunks !== undefined) return `accepted ${o.acceptedHunks.length} of ${total} hunks`;
  return 'accepted';
}
