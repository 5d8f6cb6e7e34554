// The usage meter: the exact counts a `usage` update carried (here, those the integration test's
// fake model reported), as the sidebar and Show Status word them, and what is said where the
// endpoint reported nothing or no price was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dollars, tokens, usageLines, usageSummary } from '../webview/usage';
import { statusMarkdown } from '../statusView';
import { checkTimeout } from '../attention';
import type { SessionUpdate, StatusResult, UsageMeter, UsageTally } from '../protocol';

const tally = (t: Partial<UsageTally>): UsageTally => ({ calls: 0, unreported: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, ...t });

/** The meter of the last update of `the_usage_update_and_status_carry_what_an_openai_endpoint_reported`. */
const reported: UsageMeter = {
  contextTokens: 1530,
  contextLimit: 32000,
  turn: { planner: tally({ calls: 2, inputTokens: 2500, outputTokens: 50, cachedInputTokens: 800, costUsd: 0.00609 }), protection: tally({ calls: 1, inputTokens: 300, outputTokens: 5, costUsd: 0.000975 }) },
  session: { planner: tally({ calls: 2, inputTokens: 2500, outputTokens: 50, cachedInputTokens: 800, costUsd: 0.00609 }), protection: tally({ calls: 1, inputTokens: 300, outputTokens: 5, costUsd: 0.000975 }) },
};

// Verifies: VSC-95
test('the meter shows the context, the turn, the session, protection and money exactly as reported', () => {
  assert.deepEqual(usageLines(reported), [
    { label: 'Context', text: '1,530 of 32,000 (5%)' },
    { label: 'Turn', text: '2,500 in · 50 out' },
    { label: 'Session', text: '2,500 in · 50 out' },
    { label: 'Cache', text: '800 read' },
    { label: 'Protection', text: '1 call · 300 in · 5 out' },
    { label: 'Cost', text: '≈ $0.0071 this session, $0.00097 of it protection' },
  ]);
  assert.equal(usageSummary(reported), 'Usage: context 1,530 of 32,000 · ≈ $0.0071');
  assert.equal(tokens(1234567), '1,234,567');
  assert.equal(dollars(12.345), '$12.35');
  assert.equal(dollars(0.5), '$0.5');
});

// Verifies: VSC-96
test('an endpoint that reported nothing is said so, and no money is shown without a price', () => {
  const silent: UsageMeter = {
    contextLimit: 64000,
    turn: { planner: tally({ calls: 1, unreported: 1 }), protection: tally({}) },
    session: { planner: tally({ calls: 2, unreported: 1, inputTokens: 2100, outputTokens: 40, cachedInputTokens: 2000 }), protection: tally({}) },
  };
  const none: UsageMeter = { contextLimit: 32768, turn: silent.turn, session: { planner: tally({ calls: 1, unreported: 1 }), protection: tally({}) } };
  assert.deepEqual(usageLines(none), [{ label: 'Usage', text: 'not reported by the endpoint (context limit 32,768)' }]);
  assert.equal(usageSummary(none), 'Usage not reported by the endpoint');
  assert.equal(usageSummary(silent), 'Usage: context not reported');
  assert.deepEqual(usageLines(silent), [
    { label: 'Context', text: 'not reported by the endpoint (limit 64,000)' },
    { label: 'Turn', text: 'not reported by the endpoint' },
    { label: 'Session', text: '2,100 in · 40 out (1 of 2 calls not reported)' },
    { label: 'Cache', text: '2,000 read' },
    { label: 'Protection', text: 'no checks or processors yet' },
  ]);
});

// Verifies: VSC-96
test('Show Status lists the usage the server reported', () => {
  const status = { model: { api: 'openai', baseUrl: 'http://x', name: 'm', source: 'default' }, mode: 'ask', trustRules: [], usage: reported } as unknown as StatusResult;
  const md = statusMarkdown(status);
  assert.match(md, /## Usage\n\n- Context: 1,530 of 32,000 \(5%\)\n- Turn: 2,500 in · 50 out\n/);
  // The update's type carries the meter, so the sidebar draws the one it was sent.
  const update: SessionUpdate = { kind: 'usage', role: 'planner', reported: true, inputTokens: 1500, outputTokens: 30, contextTokens: 1530, contextLimit: 32000, meter: reported };
  assert.equal(update.kind === 'usage' && update.meter.contextTokens, 1530);
});

// Verifies: VSC-133
test('the meter says what the cache read and wrote and how often the conversation was compacted', () => {
  const cached: UsageMeter = {
    ...reported,
    compactions: 2,
    session: {
      planner: tally({ calls: 3, inputTokens: 9000, outputTokens: 60, cachedInputTokens: 4000, cacheWriteInputTokens: 1200 }),
      protection: tally({ calls: 1, inputTokens: 300, outputTokens: 5, cacheWriteInputTokens: 300 }),
    },
  };
  const lines = usageLines(cached);
  assert.deepEqual(lines.find((l) => l.label === 'Context'), { label: 'Context', text: '1,530 of 32,000 (5%), compacted 2 times' });
  assert.deepEqual(lines.find((l) => l.label === 'Cache'), { label: 'Cache', text: '4,000 read · 1,500 written' });
  assert.deepEqual(lines.map((l) => l.label), ['Context', 'Turn', 'Session', 'Cache', 'Protection']);
  // A meter without cache counts or compactions draws neither.
  assert.equal(usageLines({ ...reported, session: { planner: tally({ calls: 1, inputTokens: 10 }), protection: tally({}) } }).some((l) => l.label === 'Cache'), false);
  assert.equal(usageLines({ ...reported, compactions: 1 }).find((l) => l.label === 'Context')?.text, '1,530 of 32,000 (5%), compacted 1 time');
});

// Verifies: VSC-133
test('Show Status names the context budget and where it came from, and where checks go and verdicts are kept', () => {
  const status = {
    model: { api: 'openai', baseUrl: 'http://x', name: 'm', source: 'default', contextTokens: 32768, contextSource: 'default' },
    mode: 'ask',
    trustRules: [],
    checks: { enabled: true, made: 2, saved: 1, budgetBytes: 1, model: { api: 'anthropic', baseUrl: 'http://c', name: 'small', source: '~/.bravebot/settings.json' }, store: '~/.bravebot/verdicts' },
  } as unknown as StatusResult;
  const md = statusMarkdown(status);
  assert.match(md, /Context budget: 32,768 tokens \(the default: nothing said the model's window; set model.contextTokens\)/);
  assert.match(md, /Checks go to their own model \(vetting.model\): small at http:\/\/c \(anthropic\)\./);
  assert.match(md, /Verdicts are kept for later sessions in ~\/.bravebot\/verdicts\./);
  const plain = statusMarkdown({ ...status, model: { api: 'openai', baseUrl: 'http://x', name: 'm', source: 'default' }, checks: { enabled: true, made: 0, saved: 0, budgetBytes: 1, model: { api: 'openai', baseUrl: 'http://x', name: 'm', source: 'planner' }, store: null } } as unknown as StatusResult);
  assert.doesNotMatch(plain, /Context budget/);
  assert.match(plain, /Checks go to the planner's model: m at http:\/\/x \(openai\)\./);
  assert.match(plain, /Verdicts are not kept after this session\./);
});

// Verifies: VSC-134
test('the check time limit is taken as the server takes it, and Show Status says it', () => {
  assert.deepEqual([45, 1, 86400, 0, -5, 2.5, 86401, '30', undefined, null].map(checkTimeout), [45, 1, 86400, undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  const status = { mode: 'ask', trustRules: [], checks: { enabled: true, made: 0, saved: 0, budgetBytes: 1, timeoutSeconds: 600 } } as unknown as StatusResult;
  assert.match(statusMarkdown(status), /A check may take up to 600 s \(vetting.timeoutSeconds\); one that takes longer is inconclusive\./);
});
