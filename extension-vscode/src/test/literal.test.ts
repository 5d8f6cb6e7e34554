import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argumentsHtml, argumentsShown, checkLine, titleHtml, toolWords } from '../webview/literal';
import { answeredItem, applyUpdate, attachShown, contextToSend, emptyTranscript, selectedLines, type CheckItem, type ToolItem } from '../webview/transcript';

/** The text an HTML fragment shows, entities decoded: what a person reads. */
function shown(html: string): string {
  return html.replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

// Verifies: VSC-75
test('a command and its arguments are drawn byte for byte, never as markdown', () => {
  const command = 'grep -n "s[mid]" *.py | sed \'s/_x_/**y**/\' && echo `date` <b>';
  const t = applyUpdate(emptyTranscript(), { kind: 'toolCall', callId: 'c1', tool: 'run', why: 'look', routing: { command, cwd: 'src/my_dir' } });
  const tool = t.items[0] as ToolItem;
  assert.deepEqual(tool.args, [{ name: 'command', text: command, literal: true }, { name: 'cwd', text: 'src/my_dir', literal: true }]);
  const html = argumentsHtml(tool.args ?? []);
  // Each value is one code element whose text is exactly the argument: no emphasis, no link, no tag.
  const codes = [...html.matchAll(/<code class="literal">([^<]*)<\/code>/g)].map((m) => shown(m[1]));
  assert.deepEqual(codes, [command, 'src/my_dir']);
  assert.ok(!/<(em|strong|a|b)\b/.test(html), html);
  // A run question's title draws its command whole, backticks inside it included.
  const title = titleHtml(`Run \`${command}\`?`, command);
  assert.equal(shown(title), `Run ${command}?`);
  assert.equal(shown(/<code class="literal">([^<]*)<\/code>/.exec(title)?.[1] ?? ''), command);
  // As the server names it now, bare: the same code element.
  const bare = titleHtml(`Run ${command}?`, command);
  assert.equal(shown(bare), `Run ${command}?`);
  assert.equal(shown(/<code class="literal">([^<]*)<\/code>/.exec(bare)?.[1] ?? ''), command);
  // Other quoted names are code, with no backticks left.
  assert.equal(titleHtml('Call `a_b*` on the MCP server `srv`?'), 'Call <code>a_b*</code> on the MCP server <code>srv</code>?');
});

// Verifies: VSC-75
test("a long argument (an edit's whole text) is summarised, not printed", () => {
  const content = 'line one\nline two with s[mid]\n';
  const long = 'x'.repeat(500);
  const args = argumentsShown({ path: 'a.txt', content, old_text: long, replace_all: true, new_text: 'ALPHA\n' });
  assert.deepEqual(args, [
    { name: 'path', text: 'a.txt', literal: true },
    { name: 'content', text: '2 lines, 30 bytes (not shown)', literal: false },
    { name: 'old_text', text: '1 line, 500 bytes (not shown)', literal: false },
    { name: 'replace_all', text: 'true', literal: true },
    { name: 'new_text', text: 'ALPHA\n', literal: true },
  ]);
  assert.ok(!argumentsHtml(args).includes('line two'), 'the text itself is not drawn');
});

// Verifies: VSC-76
test('a check is one line that ends with its verdict in one word, and stays after its question', () => {
  let t = applyUpdate(emptyTranscript(), { kind: 'check', state: 'started', lines: 3 });
  assert.equal(shown(checkLine('started')), 'check: running…');
  t = applyUpdate(t, { kind: 'check', state: 'ended', lines: 3, completed: true, verdict: 'unsafe' });
  assert.deepEqual(t.items, [{ kind: 'check', state: 'ended', verdict: 'unsafe' }] satisfies CheckItem[]);
  assert.equal(shown(checkLine('ended', 'unsafe')), 'check: unsafe');
  assert.equal(shown(checkLine('ended', 'safe')), 'check: safe');
  assert.equal(shown(checkLine('ended', 'inconclusive')), 'check: undecided');
  assert.match(checkLine('ended', 'inconclusive'), /title="check ended, verdict: inconclusive"/);
});

// Verifies: VSC-77
test('an answered question leaves one line, refused unless an approving option was chosen', () => {
  assert.deepEqual(answeredItem('Run `ls`?', 'ls', { name: 'Run it once', kind: 'allow_once' }), { kind: 'answered', title: 'Run `ls`?', command: 'ls', answer: 'Run it once', refused: false });
  assert.deepEqual(answeredItem('Fetch x?', undefined, { name: "Don't fetch it", kind: 'reject_once' }), { kind: 'answered', title: 'Fetch x?', answer: "Don't fetch it", refused: true });
  assert.equal(answeredItem('Fetch x?', undefined, undefined).refused, true);
  assert.equal(answeredItem('Fetch x?', undefined, undefined).answer, 'refused: no option chosen');
});

// Verifies: VSC-78
test('tool names are plain words, the exact name kept apart', () => {
  assert.equal(toolWords('schedule_next'), 'schedule the next tick');
  assert.equal(toolWords('run'), 'run a command');
  assert.equal(toolWords('some_new_tool'), 'some new tool');
});

// Verifies: VSC-81
test('a quarantined notice keeps the bytes the person asked to see, for the frame only', () => {
  let t = applyUpdate(emptyTranscript(), { kind: 'quarantined', ref: 'ref:0', origin: 'the stdout of `ls`', lines: 1, bytes: 4, label: '(U,priv)' });
  t = attachShown(t, 'ref:0', 'a*b\n');
  assert.deepEqual(t.items[0], { kind: 'quarantined', ref: 'ref:0', origin: 'the stdout of `ls`', lines: 1, bytes: 4, label: '(U,priv)', shown: 'a*b\n' });
  assert.equal(titleHtml('the stdout of `ls`'), 'the stdout of <code>ls</code>');
});

// Verifies: VSC-82
test('Add Selection to Chat and the chip count the same lines, and the selection is sent once', () => {
  // Lines 2 to 4 picked with the mouse: the selection ends at the start of line 5.
  assert.deepEqual(selectedLines(1, 4, 0), { startLine: 2, endLine: 4 });
  assert.deepEqual(selectedLines(1, 4, 3), { startLine: 2, endLine: 5 });
  assert.deepEqual(selectedLines(4, 4, 0), { startLine: 5, endLine: 5 });
  const ctx = { path: 'a.py', selection: { startLine: 2, endLine: 4 } };
  assert.deepEqual(contextToSend(ctx, [{ path: 'a.py', startLine: 2, endLine: 4 }]), { path: 'a.py' });
  assert.deepEqual(contextToSend(ctx, [{ path: 'a.py', startLine: 1, endLine: 4 }]), ctx, 'another selection is sent');
  assert.deepEqual(contextToSend(ctx, []), ctx);
});
