// Checks protocol.ts against the Rust wire types in server/src/protocol.rs, so the two cannot drift
// silently: every method, struct field and update variant there must appear here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answerCommand, methods } from '../protocol';

const rsPath = join(process.cwd(), '..', 'server', 'src', 'protocol.rs');
const tsPath = join(process.cwd(), 'src', 'protocol.ts');
// The suite runs from the repository, where the server's sources always are: missing ones fail it.
const rs = readFileSync(rsPath, 'utf8');
const ts = readFileSync(tsPath, 'utf8');

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const lowerFirst = (s: string): string => s[0].toLowerCase() + s.slice(1);

/** The text from `opener` to its matching closing brace. */
function block(text: string, opener: string): string {
  const start = text.indexOf(opener);
  assert.ok(start >= 0, `${opener} found`);
  let depth = 0;
  for (let i = text.indexOf('{', start); i < text.length; i++) {
    if (text[i] === '{') depth++;
    if (text[i] === '}' && --depth === 0) return text.slice(start, i);
  }
  throw new Error(`unclosed ${opener}`);
}

/** A Rust type's body; a type that borrows (`Subject<'a>`) is found by its name as well. */
const rustBlock = (kind: 'struct' | 'enum', name: string): string => {
  const opener = new RegExp(`pub ${kind} ${name}(<[^>{]*>)? \\{`).exec(rs)?.[0] ?? `pub ${kind} ${name} {`;
  return block(rs, opener);
};
const tsInterface = (name: string): string => block(ts, `export interface ${name} {`);

function rustFields(block: string): string[] {
  const renamed = new Map<string, string>();
  const out: string[] = [];
  let pendingRename: string | undefined;
  for (const line of block.split('\n')) {
    const r = /#\[serde\(rename = "(\w+)"\)\]/.exec(line);
    if (r) pendingRename = r[1];
    const f = /^\s*pub (\w+):/.exec(line);
    if (f) {
      out.push(pendingRename ?? camel(f[1]));
      renamed.set(f[1], pendingRename ?? '');
      pendingRename = undefined;
    }
  }
  return out;
}

// Verifies: VSC-11
test('methods and the answer command match the server', () => {
  for (const m of rs.matchAll(/pub const \w+: &str = "(bravebot\/[^"]+)";/g)) {
    assert.ok(Object.values(methods).includes(m[1] as never), `method ${m[1]}`);
  }
  assert.ok(rs.includes(`ANSWER_COMMAND: &str = "${answerCommand}"`));
});

// Verifies: VSC-11
test('struct fields match the server', () => {
  const pairs: [string, string][] = [
    ['Subject', 'Subject'], ['RequestPermissionParams', 'RequestPermissionParams'], ['HunkRange', 'HunkRange'],
    ['PermissionOption', 'PermissionOption'], ['AnswerArguments', 'AnswerArguments'], ['PromptParams', 'PromptParams'],
    ['StatusResult', 'StatusResult'], ['TrustParams', 'TrustParams'], ['AuditRecord', 'AuditRecord'],
    ['AnswerResult', 'AnswerResult'], ['ModelStatus', 'ModelStatus'], ['TrustRuleStatus', 'TrustRuleStatus'], ['CheckStatus', 'CheckStatus'],
    ['NewSessionParams', 'NewSessionParams'], ['ListSessionsParams', 'ListSessionsParams'], ['ListSessionsResult', 'ListSessionsResult'],
    ['ListedSession', 'ListedSession'], ['UnreadableSession', 'UnreadableSession'], ['ResumeResult', 'ResumeResult'],
    ['TranscriptEntry', 'TranscriptEntry'], ['LoopParams', 'LoopParams'], ['LoopResult', 'LoopResult'], ['LoopStopResult', 'LoopStopResult'],
    ['HistoryParams', 'HistoryParams'], ['HistoryResult', 'HistoryResult'], ['HistoryEntry', 'HistoryEntry'],
    ['DiagnosticsGetParams', 'DiagnosticsGetParams'], ['DiagnosticsGetResult', 'DiagnosticsGetResult'], ['WireDiagnostic', 'WireDiagnostic'],
    ['WireRange', 'WireRange'], ['WirePosition', 'WirePosition'],
    ['QuestionTextsParams', 'QuestionTextsParams'], ['QuestionTextsResult', 'QuestionTextsResult'],
    ['CheckpointParams', 'CheckpointRestoreParams'], ['CheckpointDiffParams', 'CheckpointDiffParams'], ['CheckpointListResult', 'CheckpointListResult'],
    ['ListedCheckpoint', 'Checkpoint'], ['CheckpointDiffResult', 'CheckpointDiffResult'], ['RestoreResult', 'CheckpointRestoreResult'], ['SkippedPath', 'SkippedFile'],
  ];
  for (const [r, t] of pairs) {
    const body = tsInterface(t);
    for (const field of rustFields(rustBlock('struct', r))) {
      assert.match(body, new RegExp(`\\b${field}\\??:`), `${t}.${field}`);
    }
  }
});

// Verifies: VSC-11
test('every session update variant has a kind', () => {
  const block = rustBlock('enum', 'SessionUpdate');
  for (const v of block.matchAll(/^ {4}(\w+) \{/gm)) {
    assert.ok(ts.includes(`kind: '${lowerFirst(v[1])}'`), `update kind ${lowerFirst(v[1])}`);
  }
});
