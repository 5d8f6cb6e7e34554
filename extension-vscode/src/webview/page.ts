// The chat view's page, as a string: the provider fills in where its script and style are served.
// Kept apart from the provider (which needs the editor's API) so its shape can be checked alone.

export interface PageParts {
  /** The webview's own source for the Content-Security-Policy. */
  cspSource: string;
  /** The one script allowed to run. */
  nonce: string;
  script: string;
  style: string;
}

/**
 * The chat page. Send starts disabled and is no submit button: a click before the script has
 * wired the prompt box (a slow machine shows the page first) does nothing and loses nothing,
 * where a native form submission would navigate the view to an empty page (VSC-27).
 */
export function chatPage(p: PageParts): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src ${p.cspSource}; script-src 'nonce-${p.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${p.style}"><title>bravebot</title></head>
<body>
<div id="toolbar" role="toolbar">
  <label for="mode">Mode</label>
  <select id="mode" title="ask: every change is asked about; accept edits: edits land unasked; plan: nothing changes"><option value="ask">ask</option><option value="acceptEdits">accept edits</option><option value="plan">plan</option></select>
  <button id="new" class="secondary" title="Start a new session">New</button>
  <button id="sessions" class="secondary" title="Resume or delete a recorded session">Sessions</button>
  <span id="session" hidden></span>
  <span id="state" aria-live="polite">idle</span>
</div>
<details id="usage" class="meta" hidden><summary id="usage-summary" title="What the session's model calls cost, as the endpoint reported them: open for the turn, the session and protection"></summary><dl id="usage-lines"></dl></details>
<main id="log" aria-live="polite"></main>
<div id="silence" class="meta" role="status" hidden></div>
<div id="loopbar" role="status" hidden><span id="loop-label"></span> <button id="loop-stop" type="button" class="secondary" title="Stop the loop (bravebot/session/loop/stop); a tick already running goes on to its end">Stop loop</button></div>
<section id="questions" aria-label="Questions waiting for you"></section>
<form id="form"><ul id="mentions" role="listbox" aria-label="Workspace files" hidden></ul><div id="places" class="meta" hidden></div><div id="context" class="meta" hidden><span id="context-label"></span> <button id="context-toggle" type="button" class="secondary" title="Whether the file open in your editor (and what you selected) goes with the prompt">Leave out</button></div><textarea id="input" rows="3" placeholder="Ask bravebot; @path mentions a file. Ctrl+Enter sends." aria-label="Prompt"></textarea>
<div id="actions"><button id="cancel" type="button" class="secondary" title="Cancel the turn" disabled>Cancel</button><button id="send" type="button" title="Send the prompt (Ctrl+Enter)" disabled>Send</button></div></form>
<script nonce="${p.nonce}" src="${p.script}"></script>
</body></html>`;
}
