// The chat transcript as data: session updates folded into items the webview renders. Pure, so the
// message handling is tested without a browser or VS Code.

import type { ResumeResult, SessionUpdate, TodoItem } from '../protocol';
import { bannerText } from '../autoVetting';
import type { LoopShown } from '../sessions';
import { argumentsShown, type ArgumentShown } from './literal';

export type Item =
  /** `sent` is what Retry sends again: the words, the files and the editor context as they went. */
  | { kind: 'user'; text: string; context?: string; sent?: SentPrompt }
  | { kind: 'agent'; text: string }
  | ToolItem
  /**
   * One delegate: its number, kind, state and task, its own tool calls (never among the turn's
   * cards) and, once it ends, its report; `handed` once the turn was given the report.
   */
  | DelegateItem
  /** Quarantined notices and remarks are shown in a separate frame: they are not the agent's words. */
  | { kind: 'quarantined'; ref: string; origin: string; lines: number; bytes: number; label: string; picture?: HeldPicture; shown?: string }
  | { kind: 'remark'; text: string }
  /** A file held back from the agent because a check judged it unsafe, with the check's words (JUDGE-8). */
  | { kind: 'heldBack'; path: string; verdict: string; verdictText?: string }
  | CheckItem
  | { kind: 'plan'; todos: TodoItem[] }
  | { kind: 'turnEnded'; stopReason: string }
  /** Why a turn ended in an error, what to change, and the prompt a Retry sends again. */
  | { kind: 'error'; text: string; hint?: string; action?: ErrorAction; retry?: { text: string; files: string[]; context?: EditorContext; ranges?: Place[] } }
  /** Something the extension tells the person about the session itself (a new one began). */
  | { kind: 'notice'; text: string }
  /**
   * Auto-vetting, in the chat (VET-23): on at the top of a session that opened with it
   * (`opening`), or turned on or off where it happened; `source` names the switch.
   */
  | AutoVettingItem
  /** What the platform confines and what this session confines, at the top of the session (VSC-129). */
  | { kind: 'confinement'; text: string }
  /** A loop's tick began: the prompt was sent again, unchanged. */
  | { kind: 'loopTick'; n: number; prompt: string }
  /** A question the person answered, as one line: what it asked and what they chose (answeredItem). */
  | AnsweredItem
  /** The files a turn changed, from its checkpoint, with "Restore to before this turn". */
  | { kind: 'checkpoint'; checkpointId: string; files: string[] }
  /** What a restore did, in words (checkpoints.ts restoredWords); `undoCheckpointId` offers Undo restore. */
  | { kind: 'restored'; text: string; undoCheckpointId?: string };

export interface AutoVettingItem { kind: 'autoVetting'; on: boolean; source: string; opening: boolean; text: string }

/**
 * The banner of a session that opened with auto-vetting on, put at the top of what the session
 * drew: before the prompt that opened it, when that prompt is all the session has drawn yet (VS
 * Code opens a session on its first prompt). A session opening asking as usual draws nothing.
 */
export function addOpeningBanner(t: Transcript, on: boolean, source: string): Transcript {
  const text = bannerText({ on, source }, true);
  if (text === undefined) return t;
  const item: AutoVettingItem = { kind: 'autoVetting', on, source, opening: true, text };
  const items = t.items.slice();
  const last = items[items.length - 1];
  if (last?.kind === 'user') items.splice(items.length - 1, 0, item);
  else items.push(item);
  return { items, busy: t.busy };
}

/**
 * The line naming the platform's confinement level and what the session confines (the status's
 * `confinement`, PROTO-14), put at the top of what the session drew: before its first prompt, as
 * VS Code opens a session on that prompt. Said once: a second status changes nothing.
 */
export function addConfinementLine(t: Transcript, confinement: string): Transcript {
  if (!confinement || t.items.some((it) => it.kind === 'confinement')) return t;
  const item: Item = { kind: 'confinement', text: `Confinement: ${confinement}` };
  const items = t.items.slice();
  const first = items.findIndex((it) => it.kind === 'user');
  items.splice(first < 0 ? items.length : first, 0, item);
  return { items, busy: t.busy };
}

export interface AnsweredItem { kind: 'answered'; title: string; command?: string; answer: string; refused: boolean }

/**
 * The line an answered question leaves in the chat: its title, and the option chosen in its own
 * words, or that nothing was chosen (dismissed, cancelled, closed); `refused` unless an approving option was chosen.
 */
export function answeredItem(title: string, command: string | undefined, chosen: { name: string; kind: string } | undefined, refusal = 'refused: no option chosen'): AnsweredItem {
  const approving = chosen !== undefined && (chosen.kind === 'allow_once' || chosen.kind === 'allow_always');
  const answer = chosen ? chosen.name : refusal;
  const item: AnsweredItem = { kind: 'answered', title, answer, refused: !approving };
  if (command !== undefined) item.command = command;
  return item;
}

export interface CheckItem { kind: 'check'; state: string; verdict?: string }

/** `args`: the call's arguments as the card draws them, exact or summarised (literal.ts). */
export interface ToolItem { kind: 'tool'; callId: string; tool: string; why: string; args?: ArgumentShown[]; status?: string; summary?: string; output?: RunOutput[] }

export interface DelegateItem {
  kind: 'delegate';
  number: number;
  delegateKind: string;
  depth: number;
  state: string;
  task: string;
  /** Its tool calls and the checks they ran, in the order they came. */
  calls: (ToolItem | CheckItem)[];
  stopReason?: string;
  report?: { text: string; trusted: boolean; label: string };
  handed?: boolean;
}

/**
 * Whose a call is: `delegate-N` is delegate N's start (drawn by whoever started it), and
 * `…delegate-N:id` is call `id` of delegate N (a delegate's calls are named `delegate-N:<id>`,
 * and a nested one's carry every level's prefix). `undefined`: the turn's own call.
 */
export function delegateOfCall(callId: string): { start: number } | { owner: number } | undefined {
  const parts = callId.split(':');
  const n = (s: string | undefined): number | undefined => {
    const m = /^delegate-(\d+)$/.exec(s ?? '');
    return m ? Number(m[1]) : undefined;
  };
  const last = n(parts[parts.length - 1]);
  if (last !== undefined) return { start: last };
  const owner = n(parts[parts.length - 2]);
  return owner === undefined ? undefined : { owner };
}

/** Plain words for a delegate's state; the wire word stays in the hover. */
export function delegateStateWords(state: string): string {
  switch (state) {
    case 'running': return 'running';
    case 'waiting': return 'waiting on you';
    case 'done': return 'done';
    case 'failed': return 'failed';
    case 'cancelled': return 'cancelled';
    default: return state;
  }
}

/** A tool card as its call is announced, with its arguments when it has any. */
function toolItem(callId: string, tool: string, why: string, routing: unknown): ToolItem {
  const args = argumentsShown(routing);
  return args.length ? { kind: 'tool', callId, tool, why, args } : { kind: 'tool', callId, tool, why };
}

/** The delegate card for `number`, made when its first sign arrives. */
function delegateCard(items: Item[], number: number): { index: number; card: DelegateItem } {
  const index = items.findIndex((x) => x.kind === 'delegate' && x.number === number);
  if (index >= 0) return { index, card: items[index] as DelegateItem };
  const card: DelegateItem = { kind: 'delegate', number, delegateKind: '?', depth: 1, state: 'running', task: '', calls: [] };
  items.push(card);
  return { index: items.length - 1, card };
}

/** `n` and its noun, singular for one: "1 line", "37 bytes". */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A picture an MCP server sent, as it sent it (untrusted): drawn only through `pictureSrc`. */
export interface HeldPicture { mediaType: string; data: string }

/** The picture types the chat draws; its content security policy allows `data:` images only. */
export const drawnPictureTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/**
 * The `data:` URL a held picture is drawn from, or undefined when its type is not one the chat
 * draws or its data is not base64: then it is named, not drawn. No SVG: it is a document.
 */
export function pictureSrc(p: HeldPicture): string | undefined {
  if (!drawnPictureTypes.includes(p.mediaType)) return undefined;
  if (p.data.length === 0 || p.data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(p.data)) return undefined;
  return `data:${p.mediaType};base64,${p.data}`;
}

/** The quarantined notice of `ref` with the bytes `bravebot/session/show` gave the person (untrusted). */
export function attachShown(t: Transcript, ref: string, text: string): Transcript {
  return { ...t, items: t.items.map((it) => (it.kind === 'quarantined' && it.ref === ref ? { ...it, shown: text } : it)) };
}

/** The quarantined notice of `ref` with the picture the server sent for it. */
export function attachPicture(t: Transcript, ref: string, picture: HeldPicture): Transcript {
  return {
    ...t,
    items: t.items.map((it) => (it.kind === 'quarantined' && it.ref === ref ? { ...it, picture } : it)),
  };
}

/** What a run printed on one stream: untrusted bytes for the person's eyes only. */
export interface RunOutput { stream: string; text: string; bytes: number; trusted: boolean }

/** A button on an error that runs one of the extension's setup commands (see allowedCommands). */
export interface ErrorAction { label: string; command: string }

/** The only commands a message from the chat page may run. */
export const allowedCommands: readonly string[] = [
  'bravebot.locateServer',
  'bravebot.chooseModel',
  'bravebot.setApiKey',
  'bravebot.checkSetup',
  'bravebot.getStarted',
  'bravebot.showLog',
  'bravebot.openSettings',
  'bravebot.sessions',
];

export interface Transcript {
  items: Item[];
  busy: boolean;
}

export function emptyTranscript(): Transcript {
  return { items: [], busy: false };
}

/** A prompt as it was sent, for Retry. */
export interface SentPrompt { text: string; files: string[]; context?: EditorContext; ranges?: Place[] }

export function addUser(t: Transcript, text: string, context?: string, sent?: SentPrompt): Transcript {
  const item: Item = { kind: 'user', text };
  if (context) item.context = context;
  if (sent) item.sent = sent;
  return { items: [...t.items, item], busy: true };
}

/**
 * Which buttons an item offers: only the person's last message offers Retry and Edit (Retry only
 * when no error card after it offers one), and only the error after it offers its Retry, so an old
 * one cannot send a stale prompt again.
 */
export function offers(t: Transcript, index: number): { resend: boolean; edit: boolean; retry: boolean } {
  let last = -1;
  t.items.forEach((it, i) => {
    if (it.kind === 'user') last = i;
  });
  const it = t.items[index];
  const mine = it?.kind === 'user' && index === last && it.sent !== undefined;
  // An error after the last message carries the Retry; the message itself then offers only Edit.
  const erred = t.items.slice(last + 1).some((x) => x.kind === 'error' && x.retry !== undefined);
  return { resend: mine && !erred, edit: mine, retry: it?.kind === 'error' && index > last };
}

/** The active editor's file and selection, as the chat offers them with a prompt. */
export interface EditorContext {
  path: string;
  /**
   * 1-based lines of a non-empty selection. Only the place: its text stays in the file, for the
   * agent to read under the file's own label (VSC-20, REVIEW-3).
   */
  selection?: { startLine: number; endLine: number };
}

/** A place in a file a prompt is about (`ranges`, REVIEW-3): lines 1-based, both ends included. */
export interface Place { path: string; startLine: number; endLine: number }

function samePlace(a: Place, b: Place): boolean {
  return a.path === b.path && a.startLine === b.startLine && a.endLine === b.endLine;
}

/** `line 3` or `lines 3–5`. */
export function placeLines(p: { startLine: number; endLine: number }): string {
  return p.startLine === p.endLine ? `line ${p.startLine}` : `lines ${p.startLine}–${p.endLine}`;
}

/**
 * The 1-based lines of a selection from its 0-based start and end lines and the end's character:
 * a selection that ends at the start of a line (a whole line picked with the mouse) leaves that
 * line out. Add Selection to Chat and the context chip both count this way.
 */
export function selectedLines(start: number, end: number, endCharacter: number): { startLine: number; endLine: number } {
  return { startLine: start + 1, endLine: end + (endCharacter === 0 && end > start ? 0 : 1) };
}

/**
 * The context to send with a prompt: without its selection when Add Selection to Chat already
 * added that place to the prompt, so it is not sent twice.
 */
export function contextToSend(c: EditorContext | undefined, added: readonly Place[]): EditorContext | undefined {
  if (!c?.selection) return c;
  const here = { path: c.path, ...c.selection };
  return added.some((p) => samePlace(p, here)) ? { path: c.path } : c;
}

/**
 * The places a prompt is about, as `ranges`: those Add Selection to Chat added, then the editor's
 * selection the chip sends, each once. The lines' text is never sent: the agent reads it from the
 * file, under the file's own label, so a selection in a file nobody vouched for cannot become the
 * person's words (VSC-20).
 */
export function promptRanges(c: EditorContext | undefined, added: readonly Place[]): Place[] {
  const out = [...added];
  if (c?.selection) {
    const here = { path: c.path, ...c.selection };
    if (!out.some((p) => samePlace(p, here))) out.push(here);
  }
  return out;
}

/** What the person added with Add Selection to Chat, in words: `a.py, lines 2–4; b.py, line 1`. */
export function placesLabel(added: readonly Place[]): string {
  return added.map((p) => `${p.path}, ${placeLines(p)}`).join('; ');
}

/** A short description of the context, shown under the person's message and in the prompt box's chip. */
export function contextLabel(c: EditorContext): string {
  if (!c.selection) return c.path;
  return `${c.path}, ${placeLines(c.selection)} selected`;
}

/** Under the person's message: the editor's context and the places they added, as sent. */
export function sentLabel(c: EditorContext | undefined, added: readonly Place[]): string | undefined {
  // The open file is not named twice when a place in it says more.
  const named = c && !c.selection && added.some((p) => p.path === c.path);
  const parts = [c && !named ? contextLabel(c) : '', placesLabel(added)].filter((x) => x);
  return parts.length ? parts.join('; ') : undefined;
}

/**
 * The prompt's text as sent: the person's words, then the editor's file by name (a name, not a
 * vouch: it is not put in `files`, so its content is read and checked the ordinary way). A
 * selection goes as a place in `ranges` (promptRanges), never as text here.
 */
export function withContext(text: string, c: EditorContext | undefined): string {
  if (!c) return text;
  return `${text}\n\n(The file open in my editor: ${c.path}.)`;
}

/**
 * The person's words of a prompt as withContext sent it, and the label of the editor context it
 * carried, so a recalled or resumed prompt shows what they typed.
 */
export function withoutContext(sent: string): { text: string; context?: string } {
  const marker = '\n\n(The file open in my editor: ';
  for (const at of new Set([sent.lastIndexOf(marker), sent.indexOf(marker)])) {
    if (at < 0) continue;
    const m = /^\n\n\(The file open in my editor: (.*)\.\)(?:\nWhat I selected in it \((line \d+|lines \d+-\d+)\):\n[\s\S]*)?$/.exec(sent.slice(at));
    if (m) return { text: sent.slice(0, at), context: m[2] ? `${m[1]}, ${m[2].replace('-', '–')} selected` : m[1] };
  }
  return { text: sent };
}

export function addItem(t: Transcript, item: Item): Transcript {
  // Only the newest restore offers Undo restore: once another restore (or an undo) ran, an older
  // button would put back a state the person has already moved on from. The list still has it.
  const items = item.kind === 'restored'
    ? t.items.map((it) => (it.kind === 'restored' && it.undoCheckpointId !== undefined ? { kind: 'restored' as const, text: it.text } : it))
    : t.items;
  return { items: [...items, item], busy: item.kind === 'error' ? false : t.busy };
}

/** The lines of a run's output a card shows before "Show all": the first ones, never the middle. */
export const outputPreviewLines = 12;

export function previewOf(text: string, lines = outputPreviewLines): { shown: string; total: number; cut: boolean } {
  const all = text.replace(/\n$/, '').split('\n');
  return { shown: all.slice(0, lines).join('\n'), total: all.length, cut: all.length > lines };
}

/** Plain words for a tool result's status; the wire word stays in the hover. */
/**
 * What a run could touch, as its result's summary ends (RUN-18): `confined` or `not confined`,
 * with the server's whole sentence for the hover. Undefined for any other summary.
 */
export function confinementOf(summary: string | undefined): { word: string; said: string } | undefined {
  if (!summary) return undefined;
  // The server's words end the summary: the last of the two, whatever the command said before.
  const found = ['not confined', 'confined']
    .map((word) => ({ word, at: summary.lastIndexOf(`; ${word}: `) }))
    .filter((f) => f.at >= 0)
    .sort((a, b) => b.at - a.at)[0];
  return found ? { word: found.word, said: summary.slice(found.at + 2) } : undefined;
}

export function statusWords(status: string | undefined): string {
  switch (status) {
    case undefined: return 'running';
    case 'ok': return 'done';
    case 'failed': return 'failed';
    case 'error': return 'error';
    case 'refused': return 'refused';
    default: return status;
  }
}

/** Plain words for why a turn ended. */
export function stopWords(reason: string): string {
  switch (reason) {
    case 'endTurn': return 'the agent finished';
    case 'cancelled': return 'cancelled';
    case 'maxRounds': return 'stopped: the turn reached its limit of rounds';
    case 'error': return 'ended with an error';
    default: return reason;
  }
}

/**
 * Whether a view's saved transcript belongs to the extension that now runs. A window reload
 * starts a new extension host, and with it a new server session: the old transcript is then
 * cleared rather than left looking continuous.
 */
export function restoredTranscript(saved: Transcript | undefined, savedEpoch: string | undefined, epoch: string): { transcript: Transcript; newSession: boolean } {
  if (!saved || saved.items.length === 0) return { transcript: saved ?? emptyTranscript(), newSession: false };
  if (savedEpoch === epoch) return { transcript: saved, newSession: false };
  return {
    transcript: { items: [{ kind: 'notice', text: 'A new session began: the window was reloaded. The conversation before it is recorded: Sessions (above) resumes it.' }], busy: false },
    newSession: true,
  };
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
    case 'toolCall': {
      const whose = delegateOfCall(u.callId);
      if (whose && 'start' in whose) {
        // The start of a delegate is its card, not a tool card; its `delegate` update fills it.
        const { index, card } = delegateCard(items, whose.start);
        const routing = (u.routing ?? {}) as { kind?: unknown };
        if (card.delegateKind === '?' && typeof routing.kind === 'string') items[index] = { ...card, delegateKind: routing.kind };
      } else if (whose) {
        const { index, card } = delegateCard(items, whose.owner);
        items[index] = { ...card, calls: [...card.calls, toolItem(u.callId, u.tool, u.why, u.routing)] };
      } else items.push(toolItem(u.callId, u.tool, u.why, u.routing));
      return { items, busy: true };
    }
    case 'delegate': {
      const { index, card } = delegateCard(items, u.number);
      const next: DelegateItem = { ...card, delegateKind: u.delegateKind, depth: u.depth, state: u.state, task: u.task };
      if (u.stopReason !== undefined) next.stopReason = u.stopReason;
      if (u.report !== undefined) next.report = { text: u.report, trusted: u.trusted === true, label: u.label ?? '' };
      items[index] = next;
      return { items, busy: t.busy };
    }
    case 'toolResult': {
      const whose = delegateOfCall(u.callId);
      if (whose && 'start' in whose) {
        const { index, card } = delegateCard(items, whose.start);
        items[index] = { ...card, handed: true };
        return { items, busy: t.busy };
      }
      if (whose) {
        const { index, card } = delegateCard(items, whose.owner);
        const calls = card.calls.map((c) => (c.kind === 'tool' && c.callId === u.callId ? { ...c, status: u.status, summary: u.summary } : c));
        if (!card.calls.some((c) => c.kind === 'tool' && c.callId === u.callId)) calls.push({ kind: 'tool', callId: u.callId, tool: '?', why: '', status: u.status, summary: u.summary });
        items[index] = { ...card, calls };
        return { items, busy: t.busy };
      }
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
    case 'notice':
      // The server's own words, drawn as the extension's notices are, never in the untrusted frame.
      items.push({ kind: 'notice', text: u.text });
      return { items, busy: t.busy };
    case 'autoVetting':
      items.push({ kind: 'autoVetting', on: u.on, source: u.source, opening: false, text: bannerText(u, false) ?? '' });
      return { items, busy: t.busy };
    case 'heldBack':
      items.push({ kind: 'heldBack', path: u.path, verdict: u.verdict, verdictText: u.verdictText });
      return { items, busy: t.busy };
    case 'check': {
      // A delegate's check (DELEG-71) is drawn in its card, among its calls (VSC-71). A check's
      // end takes the place of its start: one line, which ends with the verdict in one word.
      const check: CheckItem = u.verdict === undefined ? { kind: 'check', state: u.state } : { kind: 'check', state: u.state, verdict: u.verdict };
      const fold = <T extends Item | ToolItem | CheckItem>(list: T[]): T[] => {
        const at = u.state === 'ended' ? list.map((x) => x.kind === 'check' && x.state === 'started').lastIndexOf(true) : -1;
        return at >= 0 ? [...list.slice(0, at), check as T, ...list.slice(at + 1)] : [...list, check as T];
      };
      if (typeof u.delegate === 'number') {
        const { index, card } = delegateCard(items, u.delegate);
        items[index] = { ...card, calls: fold(card.calls) };
        return { items, busy: t.busy };
      }
      return { items: fold(items), busy: t.busy };
    }
    case 'runOutput': {
      // Sent while the run is the tool call announced last: it belongs to the newest tool card.
      let i = items.length - 1;
      while (i >= 0 && items[i].kind !== 'tool') i--;
      const out: RunOutput = { stream: u.stream, text: u.text, bytes: u.bytes, trusted: u.trusted };
      if (i < 0) items.push({ kind: 'tool', callId: '', tool: 'run', why: '', output: [out] });
      else {
        const tool = items[i] as Extract<Item, { kind: 'tool' }>;
        items[i] = { ...tool, output: [...(tool.output ?? []), out] };
      }
      return { items, busy: t.busy };
    }
    case 'plan':
      if (last?.kind === 'plan') items[items.length - 1] = { kind: 'plan', todos: u.todos };
      else items.push({ kind: 'plan', todos: u.todos });
      return { items, busy: t.busy };
    case 'turnEnded':
      items.push({ kind: 'turnEnded', stopReason: u.stopReason });
      return { items, busy: false };
    case 'checkpoint':
      // A turn's checkpoint comes while the turn runs, just before its end; a restore's own comes
      // between turns (a restore never runs during one) and is shown by the restore's result.
      // A turn that changed nothing offers nothing to restore.
      if (!t.busy || u.files.length === 0) return t;
      items.push({ kind: 'checkpoint', checkpointId: u.checkpointId, files: u.files });
      return { items, busy: t.busy };
    default:
      return t;
  }
}

/** Messages between the extension and the webview. */
export type ToWebview =
  | { type: 'update'; update: SessionUpdate }
  | { type: 'user'; text: string; context?: string; sent?: SentPrompt }
  | { type: 'mode'; mode: string }
  | { type: 'state'; state: 'idle' | 'thinking' | 'waiting' }
  /** The model the server uses, in words (modelShown.ts), for the state's hover. */
  | { type: 'model'; text: string }
  /** `versions` and `diff`: a `restore` question's three versions and what the restore changes (restoreVersions). */
  | { type: 'question'; questionId: string; kind: string; lines: string[]; command?: string; askedBy?: string; content?: string; verdict?: string; verdictText?: string; copy?: { path: string; mediaType: string; bytes: number }; ownWords?: boolean; unsaved?: string[]; versions?: { label: string; text?: string }[]; diff?: string; options: { optionId: string; name: string; kind: string }[] }
  | { type: 'questionDone'; questionId: string }
  /** Sent once the page is ready: which extension host it now talks to (see restoredTranscript). */
  | { type: 'hello'; epoch: string }
  | { type: 'item'; item: Item }
  /** The editor the person is in, offered as context for the next prompt (none: no file editor). */
  | { type: 'context'; context?: EditorContext }
  /** A place Add Selection to Chat adds to the next prompt (its lines, never their text). */
  | { type: 'addPlace'; place: Place }
  /** The files still unsaved after Save them first, for a run card. */
  | { type: 'unsaved'; questionId: string; files: string[] }
  /** Workspace files for the `@` mention being typed (answer to `complete` with the same seq). */
  | { type: 'completions'; seq: number; paths: string[] }
  | { type: 'reset'; notice?: string }
  /** Which session the chat shows: an incognito one says so, a resumed one names its title. */
  | { type: 'session'; incognito: boolean; title?: string }
  /** A session resumed: the chat is drawn anew from the server's transcript. */
  | { type: 'resumed'; result: ResumeResult }
  /** A session opened with auto-vetting as the server said: its banner, when on, at the top (VET-23). */
  | { type: 'autoVetting'; on: boolean; source: string }
  /** A session opened: the status's `confinement`, drawn as one line at the top (VSC-129). */
  | { type: 'confinement'; text: string }
  /** The loop the session runs, or none. */
  | { type: 'loop'; loop?: LoopShown }
  /** The server's prompt history (every session's), oldest first; time in seconds. */
  | { type: 'history'; entries: { text: string; time: number }[] }
  /** The bytes of `ref`, shown to the person on their Show (session/show): untrusted, never the agent's. */
  | { type: 'shown'; ref: string; text: string }
  /** A picture an MCP server sent for the quarantined notice of `ref` (MCP-31). */
  | { type: 'picture'; ref: string; picture: HeldPicture };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'prompt'; text: string; files: string[]; context?: EditorContext; ranges?: Place[] }
  | { type: 'cancel' }
  | { type: 'newSession' }
  | { type: 'setMode'; mode: string }
  | { type: 'answer'; questionId: string; optionId?: string; text?: string }
  /** Open: the person asks to see a picture question's private copy in the editor's viewer. */
  | { type: 'openCopy'; questionId: string }
  | { type: 'retry'; text: string; files: string[]; context?: EditorContext; ranges?: Place[] }
  | { type: 'command'; command: string }
  /** A code block's Copy and Insert buttons: the block's text, as the page shows it. */
  | { type: 'saveAll'; questionId: string }
  | { type: 'copy'; text: string }
  /** The `@` mention being typed: which workspace files fit it. */
  | { type: 'complete'; seq: number; query: string }
  | { type: 'insert'; text: string }
  /** Up began a walk through the prompts: the server's history is wanted. */
  | { type: 'wantHistory' }
  | { type: 'stopLoop' }
  /** Show me: the person asks to see a quarantined slot's bytes (session/show); the agent is not shown them. */
  | { type: 'show'; ref: string }
  /** Restore to before this turn, or Undo restore: the extension asks the person before anything changes. */
  | { type: 'restore'; checkpointId: string; undo: boolean };

/** The sentence a resumed chat carries: references from before the resume are gone (SESS-7). */
export const resumedGone = 'Quarantined items from before the resume and their references are gone: ask again for what you need.';

/**
 * The chat of a resumed session: a line naming it, then its transcript as the server returns it
 * (the person's prompts as their messages, the agent's replies as its text), then the sentence
 * that earlier references are gone. The last prompt offers Retry and Edit as any sent one does.
 */
export function resumedTranscript(r: ResumeResult): Transcript {
  const title = r.title.replace(/\s+/g, ' ').trim();
  const items: Item[] = [{ kind: 'notice', text: `Resumed the session ${title ? `“${title}” ` : ''}(${r.sessionId}), mode ${r.mode}, in ${r.cwd}.` }];
  const banner = r.autoVetting && bannerText(r.autoVetting, true);
  if (r.autoVetting && banner) items.push({ kind: 'autoVetting', on: true, source: r.autoVetting.source, opening: true, text: banner });
  for (const e of r.transcript) {
    if (e.role === 'person') {
      const { text, context } = withoutContext(e.text);
      items.push(context ? { kind: 'user', text, context, sent: { text, files: [] } } : { kind: 'user', text, sent: { text, files: [] } });
    }
    else items.push({ kind: 'agent', text: e.text });
  }
  items.push({ kind: 'notice', text: resumedGone });
  return { items, busy: false };
}

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
