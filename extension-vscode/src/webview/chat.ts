// The chat page inside the sidebar webview. Keeps the transcript as data (transcript.ts) and
// re-renders it; quarantined notices, remarks and untrusted content sit in their own frame.

import { PromptHistory } from './history';
import { completeMention, mentionAt } from './mentionComplete';
import { renderMarkdown, escapeHtml } from './markdown';
import { contextLabel, contextToSend, placeLines, withoutContext, type EditorContext, type Place } from './transcript';
import { addConfinementLine, addItem, addOpeningBanner, addUser, applyUpdate, confinementOf, delegateStateWords, offers, emptyTranscript, mentions, previewOf, restoredTranscript, resumedTranscript, statusWords, stopWords, type CheckItem, type DelegateItem, type FromWebview, type Item, type RunOutput, type ToWebview, type ToolItem, type Transcript } from './transcript';
import { attachPicture, attachShown, counted, drawnPictureTypes, pictureSrc, type HeldPicture } from './transcript';
import { heldBackHtml } from './heldBack';
import { checkpointHtml, restoreDiffHtml, restoredHtml, versionsHtml } from './checkpointHtml';
import { argumentsHtml, checkLine, titleHtml, toolWords } from './literal';
import { fileCopyHtml } from './fileCopy';
import { verdictWarningHtml } from './verdict';
import { every, type LoopShown } from '../sessions';
import { usageLines, usageSummary } from './usage';
import type { UsageMeter } from '../protocol';

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void; getState(): unknown; setState(s: unknown): void };

/**
 * What the view keeps while it is hidden: the transcript (never an incognito session's: VS Code
 * writes view state to disk). The prompt history is the server's, asked for when Up is pressed.
 */
interface ViewState {
  transcript: Transcript;
  /** The extension host the transcript was made with (see restoredTranscript). */
  epoch?: string;
}

const vscode = acquireVsCodeApi();
const saved = vscode.getState() as Partial<ViewState> | undefined;
// A transcript an earlier page saved is drawn only once the extension's hello says whether it
// belongs to this extension host (restoredTranscript): until then the chat shows none of it, so a
// window reload never shows, even for a moment, a conversation the new session does not have.
const restoring: Transcript | undefined = saved?.transcript;
let transcript: Transcript = emptyTranscript();
let epoch: string | undefined = saved?.epoch;
const history = new PromptHistory();
/** Which session the chat shows (see the `session` message). */
let sessionShown: { incognito: boolean; title?: string } = { incognito: false };
let loopShown: LoopShown | undefined;
/** Up was pressed at the draft and the server's history is on its way: the step waits for it. */
let pendingUp: { value: string } | undefined;
const questions = new Map<string, Extract<ToWebview, { type: 'question' }>>();

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const log = $<HTMLElement>('log');
const input = $<HTMLTextAreaElement>('input');
const mode = $<HTMLSelectElement>('mode');
const questionsEl = $<HTMLElement>('questions');
const usageEl = $<HTMLDetailsElement>('usage');
/** The last meter the server sent (USAGE-5); none before the session's first model call. */
let meter: UsageMeter | undefined;

/** The compact meter under the toolbar: exact counts, as the endpoint reported them (VSC-95). */
function drawUsage(): void {
  // One line folded over the rest, so a narrow sidebar keeps its room for the chat; the person's
  // choice to open it lasts, since the element is kept and only its contents change.
  usageEl.hidden = meter === undefined;
  $<HTMLElement>('usage-summary').textContent = meter === undefined ? '' : usageSummary(meter);
  $<HTMLElement>('usage-lines').innerHTML = meter === undefined ? '' : usageLines(meter)
    .map((l) => `<div data-usage="${escapeHtml(l.label.toLowerCase())}"><dt>${escapeHtml(l.label)}</dt><dd>${escapeHtml(l.text)}</dd></div>`).join('');
}

function itemHtml(it: Item, index: number): string {
  const offered = offers(transcript, index);
  switch (it.kind) {
    case 'user':
      return `<div class="msg user" data-index="${index}">${escapeHtml(it.text)}${it.context ? `<div class="meta context">with ${escapeHtml(it.context)}</div>` : ''}` +
        (offered.edit ? '<div class="msg-actions">' +
          (offered.resend ? `<button class="secondary" data-resend="${index}" title="Send this message again">Retry</button>` : '') +
          `<button class="secondary" data-edit="${index}" title="Put this message in the prompt box to change and send it; the agent still remembers the first one">Edit</button></div>` : '') + '</div>';
    case 'agent':
      return `<div class="msg agent">${renderMarkdown(it.text)}</div>`;
    case 'delegate':
      return delegateHtml(it);
    case 'tool': {
      const status = it.status ?? 'running';
      return `<div class="tool-wrap" data-status="${escapeHtml(status)}">${toolCardHtml(it)}` +
        // A loop's pace is read at a glance: the next look, its reason and the quiet ticks.
        (it.tool === 'schedule_next' && it.summary ? `<div class="meta next-tick">${escapeHtml(it.summary)}</div>` : '') +
        (it.output ?? []).map((o, i) => outputHtml(it.callId, i, o)).join('') + '</div>';
    }
    case 'quarantined': {
      // The agent holds a reference only; the person may look (session/show, for their eyes only).
      const shown = it.shown === undefined ? `<div class="buttons"><button class="secondary" data-show="${escapeHtml(it.ref)}" title="Shows you the bytes here; the agent is not shown them">Show me</button></div>`
        : `<div class="frame-label">what it holds · for you only, the agent was not shown this</div><pre>${escapeHtml(expanded.has(`show#${it.ref}`) ? it.shown : previewOf(it.shown).shown)}</pre>` +
          (previewOf(it.shown).cut ? `<button class="secondary expand" data-expand="${escapeHtml(`show#${it.ref}`)}">${expanded.has(`show#${it.ref}`) ? 'Show less' : `Show all ${previewOf(it.shown).total} lines`}</button>` : '');
      return `<div class="untrusted quarantined" role="note" data-ref="${escapeHtml(it.ref)}" title="${escapeHtml(`${it.ref}, label ${it.label}`)}"><div class="frame-label">quarantined · not shown to the agent</div>` +
        `${titleHtml(it.origin)}: ${counted(it.lines, 'line')}, ${counted(it.bytes, 'byte')}. The agent holds only a reference; it reads them only if it asks and you say yes on a card.${pictureHtml(it.picture)}${shown}</div>`;
    }
    case 'error': {
      const retry = it.retry && offered.retry ? `<button class="retry" data-retry="${index}">Retry</button>` : '';
      const action = it.action ? `<button class="secondary" data-command="${escapeHtml(it.action.command)}">${escapeHtml(it.action.label)}</button>` : '';
      return `<div class="card error" role="alert"><strong>The turn ended with an error</strong><div class="reason">${escapeHtml(it.text)}</div>` +
        (it.hint ? `<div class="hint">${escapeHtml(it.hint)}</div>` : '') + `<div class="buttons">${retry}${action}</div></div>`;
    }
    case 'notice':
      return `<div class="notice" role="status">${escapeHtml(it.text)}</div>`;
    case 'confinement':
      return `<div class="notice confinement-line" role="status">${escapeHtml(it.text)}</div>`;
    case 'autoVetting':
      return `<div class="auto-vetting${it.on ? ' on' : ''}" role="status" data-opening="${it.opening}" title="${escapeHtml(`auto-vetting ${it.on ? 'on' : 'off'}, from ${it.source}`)}">${escapeHtml(it.text)}</div>`;
    case 'loopTick':
      return `<div class="loop-tick" data-tick="${it.n}">loop tick ${it.n}: ${escapeHtml(it.prompt)}</div>`;
    case 'remark':
      return `<div class="untrusted remark" role="note"><div class="frame-label">remark · for you only</div>${escapeHtml(it.text)}</div>`;
    case 'heldBack':
      return heldBackHtml(it);
    case 'check':
      return checkHtml(it);
    case 'answered':
      return `<div class="answered" role="note" data-refused="${it.refused}"><span class="answer-title">${titleHtml(it.title, it.command)}</span> · ` +
        `<span class="answer-word" title="${it.refused ? 'refused' : 'allowed'}">${escapeHtml(it.answer)}</span></div>`;
    case 'plan':
      return `<ul class="plan">${it.todos.map((t) => `<li data-status="${escapeHtml(t.status)}">${escapeHtml(t.content)}</li>`).join('')}</ul>`;
    case 'checkpoint':
      return checkpointHtml(it);
    case 'restored':
      return restoredHtml(it);
    case 'turnEnded':
      return `<div class="meta turn-ended" data-stop="${escapeHtml(it.stopReason)}" title="stop reason: ${escapeHtml(it.stopReason)}">turn ended: ${escapeHtml(stopWords(it.stopReason))}</div>`;
  }
}

/** A check's line: that one runs, then its verdict in one word; never what it read. */
function checkHtml(it: CheckItem): string {
  return checkLine(it.state, it.verdict);
}

/** A run's card says in its header whether it was confined; what it could touch in the hover. */
function confinementHtml(it: ToolItem): string {
  const c = it.tool === 'run' ? confinementOf(it.summary) : undefined;
  return c ? ` <span class="confinement ${c.word === 'confined' ? 'confined' : 'unconfined'}" title="${escapeHtml(c.said)}">${escapeHtml(c.word)}</span>` : '';
}

/** A tool call's card: its name and status, opened for why and how it ended. */
function toolCardHtml(it: ToolItem, why = it.why): string {
  const status = it.status ?? 'running';
  // The tool in plain words (its exact name in the hover); its arguments exact, byte for byte.
  return `<details class="card tool" data-call="${escapeHtml(it.callId)}" data-tool="${escapeHtml(it.tool)}"><summary><span class="tool-name" title="tool: ${escapeHtml(it.tool)}">${escapeHtml(toolWords(it.tool))}</span> ` +
    `<span class="status ${escapeHtml(status)}" title="status: ${escapeHtml(status)}">${escapeHtml(statusWords(it.status))}</span>${confinementHtml(it)}${argumentsHtml(it.args ?? [])}</summary>` +
    `<div class="why">${escapeHtml(why)}</div>${it.summary ? `<pre>${escapeHtml(it.summary)}</pre>` : ''}</details>`;
}

/**
 * A delegate's card: number, kind and state on its first line, its task, its own calls under it
 * (each without the `[delegate N (kind)]` its why begins with: the card says whose they are) and,
 * once it ended, its report: a trusted one as the agent's words, an untrusted one inside the
 * untrusted frame, as the label the server sent says.
 */
function delegateHtml(d: DelegateItem): string {
  const calls = d.calls.map((c) => c.kind === 'check'
    ? checkHtml(c)
    : `<div class="tool-wrap" data-status="${escapeHtml(c.status ?? 'running')}">${toolCardHtml(c, c.why.replace(/^(\[delegate \d+ \([^)\]]*\)\] ?)+/, ''))}</div>`).join('');
  const report = d.report === undefined ? '' : d.report.trusted
    ? `<div class="delegate-report trusted" title="${escapeHtml(`label ${d.report.label}`)}"><div class="frame-label">report · trusted${d.handed ? ' · handed to the agent' : ''}</div>${renderMarkdown(d.report.text)}</div>`
    : `<div class="delegate-report untrusted" role="note" title="${escapeHtml(`label ${d.report.label}`)}"><div class="frame-label">report · untrusted: its context met content nobody vouched for · the agent holds only a reference</div><pre>${escapeHtml(d.report.text)}</pre></div>`;
  const ended = d.stopReason && d.stopReason !== 'endTurn' ? ` <span class="meta">(${escapeHtml(stopWords(d.stopReason))})</span>` : '';
  return `<div class="card delegate" data-delegate="${d.number}" data-state="${escapeHtml(d.state)}" data-depth="${d.depth}" style="margin-left: ${Math.min(d.depth - 1, 3) * 12}px">` +
    `<div class="delegate-head"><strong>delegate ${d.number}</strong> · <span class="delegate-kind">${escapeHtml(d.delegateKind)}</span> · ` +
    `<span class="status ${escapeHtml(d.state)}" title="state: ${escapeHtml(d.state)}">${escapeHtml(delegateStateWords(d.state))}</span>${ended}</div>` +
    `<div class="delegate-task" title="${escapeHtml(d.task)}">${escapeHtml(d.task)}</div>` +
    (calls ? `<div class="delegate-calls">${calls}</div>` : '') + report + '</div>';
}

/** A server's picture inside its quarantined frame: drawn when its type is one the chat draws, named otherwise. */
function pictureHtml(p: HeldPicture | undefined): string {
  if (!p) return '';
  const src = pictureSrc(p);
  return src
    ? `<div class="frame-label">the picture the server sent · for you only</div><img class="held-picture" alt="a picture an MCP server sent" src="${escapeHtml(src)}">`
    : `<div class="frame-label">a picture of type ${escapeHtml(p.mediaType)}, not drawn: the chat draws ${escapeHtml(drawnPictureTypes.join(', '))} only</div>`;
}

/** Run outputs the person expanded, by call and index; they stay expanded across redraws. */
const expanded = new Set<string>();

/** What a run printed, inside the untrusted frame: the first lines, and the rest on request. */
function outputHtml(callId: string, index: number, o: RunOutput): string {
  const key = `${callId}#${index}`;
  const p = previewOf(o.text);
  const all = expanded.has(key);
  const stream = o.stream === 'stderr' ? 'its error output' : o.stream === 'stdout' ? 'its output' : o.stream;
  const label = `what it printed · ${stream} · ${o.trusted ? 'the agent was shown this too' : 'not shown to the agent'}`;
  return `<div class="untrusted output" data-stream="${escapeHtml(o.stream)}" title="stream: ${escapeHtml(o.stream)}"><div class="frame-label">${escapeHtml(label)}</div>` +
    `<pre>${escapeHtml(all ? o.text : p.shown)}</pre>` +
    (p.cut ? `<button class="secondary expand" data-expand="${escapeHtml(key)}">${all ? 'Show less' : `Show all ${p.total} lines (${o.bytes} bytes)`}</button>` : '') + '</div>';
}

/** Question kinds whose answers carry no risk either way: their buttons keep the server's order. */
const neutralKinds = new Set(['askUser']);

/**
 * A card's lines: the title with its command drawn exactly, a command line exact, and the plan's
 * steps (the server's exact form, arguments in ⟨⟩) folded under "how it will run, exactly".
 */
function questionLinesHtml(q: Extract<ToWebview, { type: 'question' }>): string {
  return q.lines.map((l, i) => {
    if (i > 0 && l.startsWith('  ')) return '';
    if (i === 0) return `<strong class="title">${titleHtml(l, q.command)}</strong>`;
    if (q.command !== undefined && l === `command: ${q.command}`) return `<div class="command">command: <code class="literal">${escapeHtml(q.command)}</code></div>`;
    return `<div${l.startsWith('host: ') ? ' class="host"' : ''}>${escapeHtml(l)}</div>`;
  }).join('');
}

/** A run's plan (the server's exact form, arguments in ⟨⟩), folded under the buttons: Tab reaches the answers first. */
function planHtml(q: Extract<ToWebview, { type: 'question' }>): string {
  const plan = q.lines.slice(1).filter((l) => l.startsWith('  ')).map((l) => l.slice(2));
  return plan.length ? `<details class="plan-exact"><summary>how it will run, exactly</summary><pre class="literal">${escapeHtml(plan.join('\n'))}</pre></details>` : '';
}

function questionHtml(q: Extract<ToWebview, { type: 'question' }>): string {
  // A delegate's start question carries the task it will be told: the planner's words (a context
  // that met unvouched content starts no delegate, DELEG-5), shown as such, not framed untrusted.
  const told = q.kind === 'delegate' ? q.content : undefined;
  const untrusted = q.content !== undefined && told === undefined;
  const id = escapeHtml(q.questionId);
  // The safe answer comes first and is the primary button: refusing, or keeping content
  // quarantined. Tab reaches it before any approving one.
  const safe = (k: string): boolean => k === 'reject_once' || k === 'reject_always';
  const ordered = neutralKinds.has(q.kind) ? q.options : [...q.options.filter((o) => safe(o.kind)), ...q.options.filter((o) => !safe(o.kind))];
  const primary = neutralKinds.has(q.kind) ? undefined : ordered.find((o) => o.kind === 'reject_once') ?? ordered[0];
  const button = (o: { optionId: string; name: string; kind: string }): string => `<button data-q="${id}" data-o="${escapeHtml(o.optionId)}" class="${o.kind}${o === primary ? ' primary' : ' secondary'}">${escapeHtml(o.name)}</button>`;
  // Two or more answers that last the session (a run's plan, running lines confined) fold under
  // one line, so a narrow sidebar keeps the card whole and its first answers in view (VSC-94).
  const lasting = ordered.filter((o) => o.kind === 'allow_always');
  const folded = lasting.length >= 2 ? lasting : [];
  const buttons = ordered.filter((o) => !folded.includes(o)).map(button).join('') +
    (folded.length ? `<details class="lasting"><summary>For the rest of this session…</summary>${folded.map(button).join('')}</details>` : '');
  // The card itself takes focus when it arrives (never a button, so a stray Enter approves
  // nothing); Tab reaches its buttons and Escape dismisses it, which refuses.
  return `<div class="card question" tabindex="-1" role="group" aria-label="${escapeHtml(q.lines[0] ?? q.kind)}" data-question="${id}" data-kind="${escapeHtml(q.kind)}"${q.askedBy ? ` data-asked-by="${escapeHtml(q.askedBy)}"` : ''}>` +
    (q.askedBy ? `<div class="asked-by">asked by ${escapeHtml(q.askedBy)}</div>` : '') +
    verdictWarningHtml(q.verdict) +
    questionLinesHtml(q) +
    restoreDiffHtml(q) +
    (told !== undefined ? `<div class="delegate-told"><div class="frame-label">it will be told</div><pre>${escapeHtml(told)}</pre></div>` : '') +
    (untrusted ? `<div class="untrusted"><div class="frame-label">untrusted content${q.verdict ? ` · verdict: ${escapeHtml(q.verdict)}` : ''}</div><pre>${escapeHtml(q.content ?? '')}</pre>` +
      (q.verdictText ? `<div class="frame-label">the check's words</div><pre class="check-words">${escapeHtml(q.verdictText)}</pre>` : '') + '</div>' : '') +
    fileCopyHtml(q.questionId, q.copy, q.verdict, q.verdictText) +
    (q.unsaved?.length ? `<div class="unsaved" role="note">Unsaved changes: the program will read these files as they are on disk, not as the editor shows them: ${escapeHtml(q.unsaved.join(', '))} ` +
      `<button class="secondary" data-q="${id}" data-save="1">Save them first</button></div>` : '') +
    (q.ownWords ? `<div class="own-words"><textarea rows="2" data-q="${id}" aria-label="Your answer" placeholder="Your own words; Enter sends"></textarea>` +
      `<button data-q="${id}" data-own="1">Send answer</button></div>` : '') +
    `<div class="buttons">${buttons}<button data-q="${id}" class="dismiss secondary" title="Dismissing refuses (Escape)">Dismiss</button></div>${planHtml(q)}${versionsHtml(q)}</div>`;
}

/** Tool cards the person opened stay open when the transcript is drawn again. */
const openCards = new Set<string>();

function render(scroll = true): void {
  const top = log.scrollTop;
  log.innerHTML = transcript.items.map((it, i) => itemHtml(it, i)).join('');
  for (const d of log.querySelectorAll<HTMLDetailsElement>('details[data-call]')) d.open = openCards.has(d.dataset.call ?? '');
  log.scrollTop = scroll ? log.scrollHeight : top;
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
    case 'update':
      heard = Date.now();
      if (m.update.kind === 'usage') { meter = m.update.meter; drawUsage(); return; }
      transcript = applyUpdate(transcript, m.update);
      break;
    case 'picture': transcript = attachPicture(transcript, m.ref, m.picture); break;
    case 'shown': transcript = attachShown(transcript, m.ref, m.text); break;
    case 'user': transcript = addUser(transcript, m.text, m.context, m.sent); break;
    case 'context': editorCtx = m.context; drawContext(); return;
    case 'addPlace': {
      const p = m.place;
      if (!added.some((q) => q.path === p.path && q.startLine === p.startLine && q.endLine === p.endLine)) added.push(p);
      drawContext();
      input.focus();
      return;
    }
    case 'reset':
      transcript = m.notice ? addItem(emptyTranscript(), { kind: 'notice', text: m.notice }) : emptyTranscript();
      questions.clear(); openCards.clear(); expanded.clear(); renderQuestions();
      meter = undefined; drawUsage();
      break;
    case 'resumed':
      transcript = resumedTranscript(m.result);
      questions.clear(); openCards.clear(); expanded.clear(); renderQuestions();
      meter = undefined; drawUsage();
      break;
    case 'autoVetting': transcript = addOpeningBanner(transcript, m.on, m.source); break;
    case 'confinement': transcript = addConfinementLine(transcript, m.text); break;
    case 'session': sessionShown = { incognito: m.incognito, title: m.title }; drawSession(); saveState(); return;
    case 'loop': loopShown = m.loop; drawLoop(); return;
    case 'history': {
      history.setServer(m.entries.map((e) => ({ text: withoutContext(e.text).text, time: e.time })));
      const wanted = pendingUp;
      pendingUp = undefined;
      // The step Up asked for, unless the person typed on meanwhile.
      if (wanted && input.value === wanted.value) recall(history.previous(input.value));
      return;
    }
    case 'hello': {
      const r = restoredTranscript(restoring, epoch, m.epoch);
      transcript = r.transcript;
      epoch = m.epoch;
      break;
    }
    case 'item': transcript = addItem(transcript, m.item); break;
    case 'mode': mode.value = m.mode; return;
    case 'state': setState(m.state); return;
    case 'model': $('state').title = `Model: ${m.text}`; return;
    case 'question': questions.set(m.questionId, m); renderQuestions(m.questionId); return;
    case 'questionDone': questions.delete(m.questionId); renderQuestions(); return;
    case 'completions': if (m.seq === completionSeq) showMentions(m.paths); return;
    case 'unsaved': {
      const q = questions.get(m.questionId);
      if (q) questions.set(m.questionId, { ...q, unsaved: m.files }), renderQuestions();
      return;
    }
  }
  render();
});

// The state label counts the seconds of a turn, and a long silence from the model is said below
// the transcript; the clock only draws, nothing waits on it.
let state: 'idle' | 'thinking' | 'waiting' = 'idle';
let started = 0;
let heard = 0;
let clock: ReturnType<typeof setInterval> | undefined;
const silenceAfter = 30;

function drawState(): void {
  const secs = Math.floor((Date.now() - started) / 1000);
  const words = state === 'waiting' ? 'waiting for you' : state;
  $('state').textContent = state === 'idle' ? 'idle' : `${words} · ${secs} s`;
  const quiet = Math.floor((Date.now() - heard) / 1000);
  const silence = $('silence');
  silence.hidden = !(state === 'thinking' && quiet >= silenceAfter);
  if (!silence.hidden) silence.textContent = `Nothing from the model for ${quiet} s. It may still be working; Cancel stops the turn.`;
}

function setState(s: typeof state): void {
  if (state === 'idle' && s !== 'idle') started = heard = Date.now();
  state = s;
  $<HTMLButtonElement>('cancel').disabled = s === 'idle';
  // Retry and Edit on the last message are offered between turns only.
  document.body.classList.toggle('busy', s !== 'idle');
  if (s === 'idle' && clock) clearInterval(clock), (clock = undefined);
  if (s !== 'idle' && !clock) clock = setInterval(drawState, 1000);
  drawState();
}

log.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button');
  if (!b) return;
  if (b.dataset.expand) {
    if (expanded.has(b.dataset.expand)) expanded.delete(b.dataset.expand);
    else expanded.add(b.dataset.expand);
    render(false);
    return;
  }
  if (b.dataset.show) {
    b.disabled = true;
    vscode.postMessage({ type: 'show', ref: b.dataset.show });
    return;
  }
  if (b.dataset.code) {
    const text = b.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    vscode.postMessage({ type: b.dataset.code === 'insert' ? 'insert' : 'copy', text });
    return;
  }
  if (b.dataset.command) {
    vscode.postMessage({ type: 'command', command: b.dataset.command });
    return;
  }
  if (b.dataset.restore || b.dataset.undo) {
    vscode.postMessage({ type: 'restore', checkpointId: b.dataset.restore ?? b.dataset.undo ?? '', undo: b.dataset.undo !== undefined });
    return;
  }
  const at = Number(b.dataset.retry ?? b.dataset.resend ?? b.dataset.edit);
  const it = transcript.items[at];
  if (b.dataset.edit && it?.kind === 'user') {
    recall(it.text);
    // The places it was about come back with it, to keep or remove.
    added.splice(0, added.length, ...(it.sent?.ranges ?? []));
    drawContext();
    input.focus();
    return;
  }
  const again = it?.kind === 'error' ? it.retry : it?.kind === 'user' ? it.sent : undefined;
  if ((b.dataset.retry || b.dataset.resend) && again) {
    b.disabled = true;
    vscode.postMessage({ type: 'retry', text: again.text, files: again.files, context: again.context, ranges: again.ranges });
  }
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
  if (b.dataset.save) vscode.postMessage({ type: 'saveAll', questionId: b.dataset.q });
  else if (b.dataset.open) vscode.postMessage({ type: 'openCopy', questionId: b.dataset.q });
  else if (b.dataset.own) sendOwnWords(b.closest<HTMLElement>('[data-question]'));
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

// Focusing the view (its command, or clicking its title) puts the cursor on the newest question
// waiting, else in the prompt box.
window.addEventListener('focus', () => {
  if (document.activeElement !== document.body) return;
  const cards = questionsEl.querySelectorAll<HTMLElement>('[data-question]');
  (cards[cards.length - 1] ?? input).focus();
});

/** The active editor's file and selection, sent with the next prompt unless the person leaves it out. */
let editorCtx: EditorContext | undefined;
let leaveOut = false;
/**
 * The places Add Selection to Chat added to the next prompt, drawn as chips above the prompt box
 * until it goes: sent as `ranges`, their lines read by the agent from the file (VSC-20).
 */
const added: Place[] = [];

function drawContext(): void {
  const places = $('places');
  places.hidden = added.length === 0;
  places.innerHTML = added.map((p, i) =>
    `<span class="place" title="The agent reads these lines from the file itself, under the file's own label">${escapeHtml(`${p.path}, ${placeLines(p)}`)}` +
    ` <button type="button" class="secondary" data-unplace="${i}" title="Don't send this place" aria-label="Remove ${escapeHtml(`${p.path}, ${placeLines(p)}`)}">×</button></span>`).join('');
  const chip = $('context');
  chip.hidden = !editorCtx;
  if (!editorCtx) return;
  const sent = contextToSend(editorCtx, added);
  const already = sent !== editorCtx ? ' (the selection is added already)' : '';
  $('context-label').textContent = `${leaveOut ? 'not sending' : 'sending'}: ${contextLabel(sent ?? editorCtx)}${already}`;
  $('context-toggle').textContent = leaveOut ? 'Include' : 'Leave out';
  chip.classList.toggle('off', leaveOut);
}

$('places').addEventListener('click', (ev) => {
  const b = (ev.target as HTMLElement).closest<HTMLElement>('[data-unplace]');
  if (!b) return;
  added.splice(Number(b.dataset.unplace), 1);
  drawContext();
  input.focus();
});

$('context-toggle').addEventListener('click', () => {
  leaveOut = !leaveOut;
  drawContext();
});

function saveState(): void {
  // An incognito session leaves its conversation nowhere, VS Code's storage included.
  vscode.setState({ transcript: sessionShown.incognito ? emptyTranscript() : transcript, epoch } satisfies ViewState);
}

/** The toolbar names an incognito session, and a resumed one by its title. */
function drawSession(): void {
  const el = $('session');
  el.hidden = !sessionShown.incognito && !sessionShown.title;
  el.classList.toggle('incognito', sessionShown.incognito);
  el.textContent = sessionShown.incognito ? 'incognito' : sessionShown.title ? `resumed: ${sessionShown.title}` : 'resumed session';
  el.title = sessionShown.incognito
    ? 'An incognito session: nothing of it is written under ~/.bravebot (no record, no prompt history, no audit file)'
    : `Resumed session: ${sessionShown.title ?? ''}`;
  document.body.classList.toggle('incognito', sessionShown.incognito);
}

/** Above the prompt box while a loop runs: its prompt, pace and ticks, and Stop loop. */
function drawLoop(): void {
  const bar = $('loopbar');
  bar.hidden = !loopShown;
  if (!loopShown) return;
  const pace = loopShown.intervalSeconds === undefined ? 'self-paced' : every(loopShown.intervalSeconds);
  $('loop-label').textContent = `Loop ${pace} · ${loopShown.ticks} ${loopShown.ticks === 1 ? 'tick' : 'ticks'} · ${loopShown.prompt}`;
}

function send(): void {
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  history.add(text);
  const ranges = added.splice(0);
  drawContext();
  vscode.postMessage({ type: 'prompt', text, files: mentions(text), context: leaveOut ? undefined : editorCtx, ranges });
}

/** Shows a recalled prompt with the cursor at its end. */
function recall(text: string | undefined): boolean {
  if (text === undefined) return false;
  input.value = text;
  input.setSelectionRange(text.length, text.length);
  return true;
}

// `@` completion: while the cursor is in a mention, the workspace files that fit it are listed
// above the prompt box; Up and Down choose, Enter or Tab completes, Escape closes the list.
const mentionList = $<HTMLUListElement>('mentions');
let completionSeq = 0;
let offered: string[] = [];
let chosen = 0;

function showMentions(paths: string[]): void {
  offered = mentionAt(input.value, input.selectionStart) ? paths : [];
  chosen = 0;
  drawMentions();
}

function drawMentions(): void {
  mentionList.hidden = offered.length === 0;
  mentionList.innerHTML = offered.map((p, i) => `<li role="option" data-path="${escapeHtml(p)}" aria-selected="${i === chosen}">${escapeHtml(p)}</li>`).join('');
}

function askMentions(): void {
  const at = input.selectionStart === input.selectionEnd ? mentionAt(input.value, input.selectionStart) : undefined;
  completionSeq++;
  if (!at) {
    offered = [];
    drawMentions();
    return;
  }
  vscode.postMessage({ type: 'complete', seq: completionSeq, query: at.query });
}

function acceptMention(path: string): void {
  const done = completeMention(input.value, input.selectionStart, path);
  input.value = done.text;
  input.setSelectionRange(done.cursor, done.cursor);
  offered = [];
  completionSeq++;
  drawMentions();
  input.focus();
}

input.addEventListener('input', askMentions);
input.addEventListener('click', askMentions);
// A click on the list keeps the focus in the box (mousedown is prevented), so a blur closes it.
input.addEventListener('blur', () => {
  offered = [];
  drawMentions();
});
mentionList.addEventListener('mousedown', (e) => {
  const li = (e.target as HTMLElement).closest<HTMLElement>('li[data-path]');
  if (!li) return;
  e.preventDefault();
  acceptMention(li.dataset.path ?? '');
});

$('send').addEventListener('click', send);
// Nothing in the form submits it natively (VSC-27); should anything ever, the view stays put.
$('form').addEventListener('submit', (e) => e.preventDefault());
input.addEventListener('keydown', (e) => {
  if (offered.length > 0 && !e.ctrlKey && !e.metaKey) {
    const step = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : 0;
    if (step !== 0) {
      e.preventDefault();
      chosen = (chosen + step + offered.length) % offered.length;
      drawMentions();
      return;
    }
    if (e.key === 'Enter' || e.key === 'Tab') {
      e.preventDefault();
      acceptMention(offered[chosen]);
      return;
    }
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      offered = [];
      completionSeq++;
      drawMentions();
      return;
    }
  }
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    send();
    return;
  }
  // Up on the first line and Down on the last walk the prompts sent, as in a shell.
  const before = input.value.slice(0, input.selectionStart);
  const after = input.value.slice(input.selectionEnd);
  // A walk starts with the server's history, every session's: the first step waits for it.
  if (e.key === 'ArrowUp' && !before.includes('\n') && !history.walking) {
    e.preventDefault();
    if (!pendingUp) vscode.postMessage({ type: 'wantHistory' });
    pendingUp = { value: input.value };
    return;
  }
  const walked =
    (e.key === 'ArrowUp' && !before.includes('\n') && recall(history.previous(input.value))) ||
    (e.key === 'ArrowDown' && !after.includes('\n') && recall(history.next()));
  if (walked) e.preventDefault();
});
$('cancel').addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
setState('idle');
$('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
$('sessions').addEventListener('click', () => vscode.postMessage({ type: 'command', command: 'bravebot.sessions' }));
$('loop-stop').addEventListener('click', () => vscode.postMessage({ type: 'stopLoop' }));
mode.addEventListener('change', () => vscode.postMessage({ type: 'setMode', mode: mode.value }));

render();
renderQuestions();
// The view may have been focused before this script ran.
if (document.hasFocus() && document.activeElement === document.body) input.focus();
// Everything is wired: Send works from here on (the page draws it disabled until now, VSC-27).
$<HTMLButtonElement>('send').disabled = false;
vscode.postMessage({ type: 'ready' });
