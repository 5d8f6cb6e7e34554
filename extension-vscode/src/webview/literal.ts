// What the chat draws literally: a tool call's arguments, a command in a question's title. Only the
// agent's prose is markdown (markdown.ts); a command, an argument, code or a program's output is
// drawn byte for byte, escaped and never parsed, so `s[mid]`, `*` and `_` stay as they ran. Long
// arguments (an edit's whole text) are summarised in counts, not printed. Pure, unit-tested.

import { escapeHtml } from './markdown';

function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** An argument longer than this, or spanning lines, is summarised rather than drawn. */
export const argumentShownMax = 200;

/** One argument of a tool call as the card draws it: its name and its exact value, or a summary. */
export interface ArgumentShown { name: string; text: string; literal: boolean }

/**
 * The arguments of a call (the `routing` of its `toolCall` update, `why` already taken out by the
 * server), in the order sent. Strings are exact; other values are their JSON; a value longer than
 * `argumentShownMax` characters or holding a line break is its size in words.
 */
export function argumentsShown(routing: unknown): ArgumentShown[] {
  if (!routing || typeof routing !== 'object' || Array.isArray(routing)) return [];
  const out: ArgumentShown[] = [];
  for (const [name, value] of Object.entries(routing as Record<string, unknown>)) {
    if (name === 'why' || value === undefined || value === null) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    // One line with its line break at the end is still one line, drawn as it is.
    if (text.length > argumentShownMax || text.replace(/\n$/, '').includes('\n')) {
      const lines = text.replace(/\n$/, '').split('\n').length;
      out.push({ name, text: `${counted(lines, 'line')}, ${counted(new TextEncoder().encode(text).length, 'byte')} (not shown)`, literal: false });
    } else out.push({ name, text, literal: true });
  }
  return out;
}

/** The arguments as HTML: each exact value in a `code` element, a summary as plain words. */
export function argumentsHtml(args: ArgumentShown[]): string {
  if (args.length === 0) return '';
  return `<dl class="args">${args.map((a) => `<div class="arg"><dt>${escapeHtml(a.name)}</dt><dd>${a.literal ? `<code class="literal">${escapeHtml(a.text)}</code>` : `<span class="summary">${escapeHtml(a.text)}</span>`}</dd></div>`).join('')}</dl>`;
}

/**
 * A question's title as HTML: the command the subject carries is drawn whole as code where the
 * title names it (`Run cmd?`, or quoted in backticks by an older server), whatever it holds
 * (backticks of its own among it); other backticked names become code; everything is escaped.
 */
export function titleHtml(title: string, command?: string): string {
  if (command === undefined || command === '') return codeSpans(title);
  // The server names the command bare ("Run cargo test?"); an older one quoted it in backticks.
  for (const shown of [`\`${command}\``, command]) {
    const at = title.indexOf(shown);
    if (at >= 0) {
      return codeSpans(title.slice(0, at)) + `<code class="literal">${escapeHtml(command)}</code>` + codeSpans(title.slice(at + shown.length));
    }
  }
  return codeSpans(title);
}

function codeSpans(text: string): string {
  return text.split(/(`[^`]+`)/).map((part) => (/^`[^`]+`$/.test(part) ? `<code>${escapeHtml(part.slice(1, -1))}</code>` : escapeHtml(part))).join('');
}

/** Plain words for the tools a person sees named in the chat; the exact name stays in the hover. */
const toolNames: Record<string, string> = {
  read_file: 'read a file',
  list_files: 'list files',
  search: 'search',
  read_git: 'read the git history',
  lsp: 'ask the language server',
  diagnostics: "read the editor's problems",
  write_file: 'write a file',
  edit_file: 'edit a file',
  run: 'run a command',
  read_output: 'read what a command printed',
  vet_content: 'check content',
  job_output: "read a background job's output",
  fetch_url: 'fetch a web page',
  spawn_processor: 'start a processor',
  spawn_agent: 'start a delegate',
  schedule_next: 'schedule the next tick',
  watch_file: 'watch a file',
  todo_write: 'update the plan',
  ask_user: 'ask you',
  release: 'release content',
};

export function toolWords(tool: string): string {
  return toolNames[tool] ?? tool.replace(/_/g, ' ');
}

/** A check's verdict in one word; the wire word stays in the hover. */
export function verdictWord(verdict: string | undefined): string {
  switch (verdict) {
    case 'safe': return 'safe';
    case 'unsafe': return 'unsafe';
    case 'inconclusive': return 'undecided';
    case undefined: return 'done';
    default: return verdict;
  }
}

/**
 * A check's line: while it runs, that it runs; once it ended, its verdict in one word (`check:
 * unsafe`), which stays in the chat after any question about the content closes.
 */
export function checkLine(state: string, verdict?: string): string {
  if (state === 'started') return '<div class="meta check" data-state="started" title="a check is reading the content before anyone acts on it">check: running…</div>';
  const word = verdictWord(verdict);
  const title = verdict ? `check ${state}, verdict: ${verdict}` : `check ${state}`;
  return `<div class="meta check" data-state="${escapeHtml(state)}" data-verdict="${escapeHtml(verdict ?? '')}" title="${escapeHtml(title)}">check: <span class="verdict ${escapeHtml(verdict ?? 'none')}">${escapeHtml(word)}</span></div>`;
}
