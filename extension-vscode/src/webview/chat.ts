// The chat page inside the sidebar webview. Keeps the transcript as data (transcript.ts) and
// re-renders it; quarantined notices, remarks and untrusted content sit in their own frame.

import { PromptHistory } from './history';
import { renderMarkdown, escapeHtml } from './markdown';
import { addUser, applyUpdate, emptyTranscript, mentions, type FromWebview, type Item, type ToWebview, type Transcript } from './transcript';

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void; getState(): unknown; setState(s: unknown): void };

/** What the view keeps while it is hidden: the transcript and the prompts sent. */
interface ViewState {
  transcript: Transcript;
  history: string[];
}

const vscode = acquireVsCodeApi();
const saved = vscode.getState() as Partial<ViewState> | undefined;
let transcript: Transcript = saved?.transcript ?? emptyTranscript();
const history = new PromptHistory(saved?.history ?? []);
const questions = new Map<string, Extract<ToWebview, { type: 'question' }>>();

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const log = $<HTMLElement>('log');
const input = $<HTMLTextAreaElement>('input');
const mode = $<HTMLSelectElement>('mode');
const questionsEl = $<HTMLElement>('questions');

function itemHtml(it: Item): string {
  switch (it.kind) {
    case 'user':
      return `<div class="msg user">${escapeHtml(it.text)}</div>`;
    case 'agent':
      return `<div class="msg agent">${renderMarkdown(it.text)}</div>`;
    case 'tool':
      return `<details class="card tool" data-call="${escapeHtml(it.callId)}"><summary>${escapeHtml(it.tool)} <span class="status">${escapeHtml(it.status ?? 'running')}</span></summary>` +
        `<div>${escapeHtml(it.why)}</div>${it.summary ? `<pre>${escapeHtml(it.summary)}</pre>` : ''}</details>`;
    case 'quarantined':
      return `<div class="untrusted" role="note"><div class="frame-label">quarantined · not shown to the agent</div>` +
        `${escapeHtml(it.label)} from ${escapeHtml(it.origin)} (${it.lines} lines, ${it.bytes} bytes) <code>${escapeHtml(it.ref)}</code></div>`;
    case 'remark':
      return `<div class="untrusted remark" role="note"><div class="frame-label">remark · for you only</div>${escapeHtml(it.text)}</div>`;
    case 'check':
      return `<div class="meta">check ${escapeHtml(it.state)}${it.verdict ? `: ${escapeHtml(it.verdict)}` : ''}</div>`;
    case 'plan':
      return `<ul class="plan">${it.todos.map((t) => `<li data-status="${escapeHtml(t.status)}">${escapeHtml(t.content)}</li>`).join('')}</ul>`;
    case 'turnEnded':
      return `<div class="meta">turn ended: ${escapeHtml(it.stopReason)}</div>`;
  }
}

function questionHtml(q: Extract<ToWebview, { type: 'question' }>): string {
  const untrusted = q.content !== undefined;
  const id = escapeHtml(q.questionId);
  const buttons = q.options.map((o) => `<button data-q="${id}" data-o="${escapeHtml(o.optionId)}" class="${o.kind}">${escapeHtml(o.name)}</button>`).join('');
  // The card itself takes focus when it arrives (never a button, so a stray Enter approves
  // nothing); Tab reaches its buttons and Escape dismisses it, which refuses.
  return `<div class="card question" tabindex="-1" role="group" aria-label="${escapeHtml(q.lines[0] ?? q.kind)}" data-question="${id}" data-kind="${escapeHtml(q.kind)}">` +
    q.lines.map((l, i) => (i === 0 ? `<strong>${escapeHtml(l)}</strong>` : `<div${l.startsWith('host: ') ? ' class="host"' : ''}>${escapeHtml(l)}</div>`)).join('') +
    (untrusted ? `<div class="untrusted"><div class="frame-label">untrusted content${q.verdict ? ` · verdict: ${escapeHtml(q.verdict)}` : ''}</div><pre>${escapeHtml(q.content ?? '')}</pre>` +
      (q.verdictText ? `<div class="frame-label">the check's words</div><pre class="check-words">${escapeHtml(q.verdictText)}</pre>` : '') + '</div>' : '') +
    (q.ownWords ? `<div class="own-words"><textarea rows="2" data-q="${id}" aria-label="Your answer" placeholder="Your own words; Enter sends"></textarea>` +
      `<button data-q="${id}" data-own="1">Send answer</button></div>` : '') +
    `<div class="buttons">${buttons}<button data-q="${id}" class="dismiss" title="Dismissing refuses (Escape)">Dismiss</button></div></div>`;
}

/** Tool cards the person opened stay open when the transcript is drawn again. */
const openCards = new Set<string>();

function render(): void {
  log.innerHTML = transcript.items.map(itemHtml).join('');
  for (const d of log.querySelectorAll<HTMLDetailsElement>('details[data-call]')) d.open = openCards.has(d.dataset.call ?? '');
  log.scrollTop = log.scrollHeight;
  saveState();
}

/** Questions live apart from the transcript, so streaming text never redraws them or moves focus. */
function renderQuestions(arrived?: string): void {
  const active = document.activeElement as HTMLElement | null;
  const focused = active?.closest<HTMLElement>('[data-question]')?.dataset.question;
  // Words half typed into an answer box survive the redraw, and so does the cursor in it.
  const typed = new Map([...questionsEl.querySelectorAll<HTMLTextAreaElement>('.own-words textarea')].map((t) => [t.dataset.q ?? '', t.value]));
  const typingIn = active?.matches('.own-words textarea') ? focused : undefined;
  questionsEl.innerHTML = [...questions.values()].map(questionHtml).join('');
  for (const t of questionsEl.querySelectorAll<HTMLTextAreaElement>('.own-words textarea')) {
    t.value = typed.get(t.dataset.q ?? '') ?? '';
    if (t.dataset.q === typingIn) {
      t.focus();
      return;
    }
  }
  const card = (id: string | undefined): HTMLElement | undefined =>
    id === undefined ? undefined : [...questionsEl.querySelectorAll<HTMLElement>('[data-question]')].find((c) => c.dataset.question === id);
  // A new question takes focus only from someone already in the chat and not halfway through a prompt.
  const typing = active === input && input.value.trim() !== '';
  const target = arrived !== undefined && document.hasFocus() && !typing ? card(arrived) : card(focused);
  if (target) target.focus();
  // The answered card had focus: it goes to the next card, else back to the prompt box.
  else if (focused !== undefined) (questionsEl.querySelector<HTMLElement>('[data-question]') ?? input).focus();
}

window.addEventListener('message', (e: MessageEvent<ToWebview>) => {
  const m = e.data;
  switch (m.type) {
    case 'update': transcript = applyUpdate(transcript, m.update); break;
    case 'user': transcript = addUser(transcript, m.text); break;
    case 'reset': transcript = emptyTranscript(); questions.clear(); openCards.clear(); renderQuestions(); break;
    case 'mode': mode.value = m.mode; return;
    case 'state': $('state').textContent = m.state === 'waiting' ? 'waiting for you' : m.state; return;
    case 'question': questions.set(m.questionId, m); renderQuestions(m.questionId); return;
    case 'questionDone': questions.delete(m.questionId); renderQuestions(); return;
  }
  render();
});

log.addEventListener('toggle', (e) => {
  const d = e.target as HTMLDetailsElement;
  const id = d.dataset?.call;
  if (id === undefined) return;
  if (d.open) openCards.add(id);
  else openCards.delete(id);
}, true);

/** Sends the words typed into a card's answer box; an empty box sends nothing. */
function sendOwnWords(card: HTMLElement | null): void {
  const box = card?.querySelector<HTMLTextAreaElement>('.own-words textarea');
  const text = box?.value.trim();
  if (!card?.dataset.question || !text) return;
  vscode.postMessage({ type: 'answer', questionId: card.dataset.question, text });
}

questionsEl.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b || !b.dataset.q) return;
  if (b.dataset.own) sendOwnWords(b.closest<HTMLElement>('[data-question]'));
  else vscode.postMessage({ type: 'answer', questionId: b.dataset.q, optionId: b.dataset.o });
});

questionsEl.addEventListener('keydown', (e) => {
  const card = (e.target as HTMLElement).closest<HTMLElement>('[data-question]');
  if (e.key === 'Enter' && !e.shiftKey && (e.target as HTMLElement).matches('.own-words textarea')) {
    e.preventDefault();
    sendOwnWords(card);
    return;
  }
  if (e.key !== 'Escape' || !card?.dataset.question) return;
  e.preventDefault();
  vscode.postMessage({ type: 'answer', questionId: card.dataset.question });
});

// Focusing the view (its command, or clicking its title) puts the cursor in the prompt box.
window.addEventListener('focus', () => {
  if (document.activeElement === document.body) input.focus();
});

function saveState(): void {
  vscode.setState({ transcript, history: history.list } satisfies ViewState);
}

function send(): void {
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  history.add(text);
  saveState();
  vscode.postMessage({ type: 'prompt', text, files: mentions(text) });
}

/** Shows a recalled prompt with the cursor at its end. */
function recall(text: string | undefined): boolean {
  if (text === undefined) return false;
  input.value = text;
  input.setSelectionRange(text.length, text.length);
  return true;
}

$('form').addEventListener('submit', (e) => { e.preventDefault(); send(); });
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    send();
    return;
  }
  // Up on the first line and Down on the last walk the prompts sent, as in a shell.
  const before = input.value.slice(0, input.selectionStart);
  const after = input.value.slice(input.selectionEnd);
  const walked =
    (e.key === 'ArrowUp' && !before.includes('\n') && recall(history.previous(input.value))) ||
    (e.key === 'ArrowDown' && !after.includes('\n') && recall(history.next()));
  if (walked) e.preventDefault();
});
$('cancel').addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
$('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
mode.addEventListener('change', () => vscode.postMessage({ type: 'setMode', mode: mode.value }));

render();
renderQuestions();
// The view may have been focused before this script ran.
if (document.hasFocus() && document.activeElement === document.body) input.focus();
vscode.postMessage({ type: 'ready' });
