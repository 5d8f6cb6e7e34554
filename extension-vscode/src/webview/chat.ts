// The chat page inside the sidebar webview. Keeps the transcript as data (transcript.ts) and
// re-renders it; quarantined notices, remarks and untrusted content sit in their own frame.

import { renderMarkdown, escapeHtml } from './markdown';
import { addUser, applyUpdate, emptyTranscript, mentions, type FromWebview, type Item, type ToWebview, type Transcript } from './transcript';

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void; getState(): unknown; setState(s: unknown): void };

const vscode = acquireVsCodeApi();
let transcript: Transcript = (vscode.getState() as Transcript | undefined) ?? emptyTranscript();
const questions = new Map<string, Extract<ToWebview, { type: 'question' }>>();

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const log = $<HTMLElement>('log');
const input = $<HTMLTextAreaElement>('input');
const mode = $<HTMLSelectElement>('mode');

function itemHtml(it: Item): string {
  switch (it.kind) {
    case 'user':
      return `<div class="msg user">${escapeHtml(it.text)}</div>`;
    case 'agent':
      return `<div class="msg agent">${renderMarkdown(it.text)}</div>`;
    case 'tool':
      return `<details class="card tool"><summary>${escapeHtml(it.tool)} <span class="status">${escapeHtml(it.status ?? 'running')}</span></summary>` +
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
  const buttons = q.options.map((o) => `<button data-q="${escapeHtml(q.questionId)}" data-o="${escapeHtml(o.optionId)}" class="${o.kind}">${escapeHtml(o.name)}</button>`).join('');
  return `<div class="card question" data-kind="${escapeHtml(q.kind)}">` +
    q.lines.map((l, i) => (i === 0 ? `<strong>${escapeHtml(l)}</strong>` : `<div>${escapeHtml(l)}</div>`)).join('') +
    (untrusted ? `<div class="untrusted"><div class="frame-label">untrusted content${q.verdict ? ` · verdict: ${escapeHtml(q.verdict)}` : ''}</div><pre>${escapeHtml(q.content ?? '')}</pre></div>` : '') +
    `<div class="buttons">${buttons}<button data-q="${escapeHtml(q.questionId)}" class="dismiss" title="Dismissing refuses">Dismiss</button></div></div>`;
}

function render(): void {
  log.innerHTML = transcript.items.map(itemHtml).join('') + [...questions.values()].map(questionHtml).join('');
  log.scrollTop = log.scrollHeight;
  vscode.setState(transcript);
}

window.addEventListener('message', (e: MessageEvent<ToWebview>) => {
  const m = e.data;
  switch (m.type) {
    case 'update': transcript = applyUpdate(transcript, m.update); break;
    case 'user': transcript = addUser(transcript, m.text); break;
    case 'reset': transcript = emptyTranscript(); questions.clear(); break;
    case 'mode': mode.value = m.mode; break;
    case 'state': $('state').textContent = m.state === 'waiting' ? 'waiting for you' : m.state; break;
    case 'question': questions.set(m.questionId, m); break;
    case 'questionDone': questions.delete(m.questionId); break;
  }
  render();
});

log.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b || !b.dataset.q) return;
  vscode.postMessage({ type: 'answer', questionId: b.dataset.q, optionId: b.dataset.o });
});

function send(): void {
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  vscode.postMessage({ type: 'prompt', text, files: mentions(text) });
}

$('form').addEventListener('submit', (e) => { e.preventDefault(); send(); });
input.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } });
$('cancel').addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
$('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
mode.addEventListener('change', () => vscode.postMessage({ type: 'setMode', mode: mode.value }));

render();
vscode.postMessage({ type: 'ready' });
