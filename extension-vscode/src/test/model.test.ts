import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelDisagreement, modelLine, sourceWords } from '../modelShown';
import { keepFromAgentParams, statusMarkdown, vouchedRules } from '../statusView';
import type { StatusResult } from '../protocol';

const fromEnv = { api: 'openai', baseUrl: 'http://10.0.0.5:8000/v1', name: 'qwen', source: 'environment' };

// Verifies: VSC-79
test('the model is named as the server uses it, with where that came from', () => {
  assert.equal(modelLine({ api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', name: 'fake-model', source: 'initializationOptions' }),
    "fake-model at http://127.0.0.1:9/v1 (openai), from VS Code's settings (bravebot.model.*)");
  assert.match(modelLine(fromEnv), /^qwen at http:\/\/10\.0\.0\.5:8000\/v1 \(openai\), from the environment .*overrides VS Code's settings$/);
  assert.equal(sourceWords('~/.bravebot/settings.json'), 'from ~/.bravebot/settings.json');
  assert.equal(sourceWords('default'), 'the built-in default: nothing set it');
  // What the person chose and the server does not use is said; empty settings are the server's.
  assert.match(modelDisagreement(fromEnv, { name: 'llama', baseUrl: 'http://127.0.0.1:8080/v1' }) ?? '',
    /^VS Code's settings name the model llama, the endpoint http:\/\/127\.0\.0\.1:8080\/v1, but the server uses qwen at http:\/\/10\.0\.0\.5:8000\/v1/);
  assert.equal(modelDisagreement(fromEnv, { name: 'qwen', baseUrl: 'http://10.0.0.5:8000/v1/' }), undefined);
  assert.equal(modelDisagreement(fromEnv, {}), undefined);
});

// Verifies: VSC-79, VSC-80, VSC-83
test('Show Status reads as sections for a person, the exact report last', () => {
  const s = {
    model: fromEnv, mode: 'plan', interactive: true,
    trustRules: [{ path: 'notes.md', scope: 'file', origin: 'person', trusted: true }, { path: 'vendor', scope: 'directory', origin: 'personDeny', trusted: false }],
    checks: { enabled: true, made: 2, saved: 1, budgetBytes: 100 }, addedDirectories: [], standingEdits: [], rememberedRuns: [],
    autoVetting: null, questionTimeoutSeconds: null, confinement: 'none', mcpServers: [], languageServers: [], jobs: [], watches: [], delegates: [], auditLog: null,
  } as unknown as StatusResult;
  const text = statusMarkdown(s);
  const model = text.indexOf('## Model');
  assert.ok(model > 0 && text.slice(model).split('\n')[2].startsWith('qwen at http://10.0.0.5:8000/v1 (openai), from the environment'), text);
  assert.ok(text.includes('plan: nothing changes'));
  assert.ok(text.includes('- notes.md: trusted, you vouched for it'));
  assert.ok(text.includes('- vendor/ (the folder): not trusted, you keep the agent from it'));
  assert.ok(text.includes('bravebot: Keep a File From the Agent…'), 'a vouch can be taken back, and the view says how');
  assert.ok(text.indexOf('## Everything the server reports, exactly') > text.indexOf('## Delegates'));
});

// Verifies: VSC-83
test("a vouch is taken back as the person's deny rule on what they vouched for", () => {
  const rules = [
    { path: 'notes.md', scope: 'file', origin: 'person', trusted: true },
    { path: 'docs', scope: 'directory', origin: 'person', trusted: true },
    { path: 'a.txt', scope: 'file', origin: 'checker', trusted: true },
    { path: 'vendor', scope: 'directory', origin: 'personDeny', trusted: false },
  ];
  assert.deepEqual(vouchedRules({ trustRules: rules }).map((r) => r.path), ['notes.md', 'docs']);
  assert.deepEqual(keepFromAgentParams(rules[0]), { path: 'notes.md', scope: 'file', deny: true });
  assert.deepEqual(keepFromAgentParams(rules[1]), { path: 'docs', scope: 'directory', deny: true });
});
