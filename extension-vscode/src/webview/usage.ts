// The usage meter's words: the planner's context against its limit, the turn's and the session's
// tokens, protection's share and the money where the person gave prices. Pure, so the numbers
// shown are tested against what the server sent without a browser.

import type { UsageMeter, UsageTally } from '../protocol';

/** A count as the person reads it: every digit, grouped in thousands ("12,345"). */
export function tokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Dollars with enough places to show a small sum: "$0.0061", "$1.23". */
export function dollars(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '')}`;
}

/** "2,500 in · 50 out", with what the endpoint left unsaid. */
function inOut(t: UsageTally): string {
  if (t.calls > 0 && t.unreported === t.calls) return 'not reported by the endpoint';
  const words = `${tokens(t.inputTokens)} in · ${tokens(t.outputTokens)} out`;
  return t.unreported > 0 ? `${words} (${t.unreported} of ${t.calls} calls not reported)` : words;
}

/** The money of a set of tallies: known only where each that reported anything was priced. */
function money(...ts: UsageTally[]): number | undefined {
  let sum = 0;
  for (const t of ts) {
    if (t.calls === t.unreported) continue;
    if (t.costUsd === undefined) return undefined;
    sum += t.costUsd;
  }
  return ts.some((t) => t.calls > t.unreported) ? sum : undefined;
}

/** ", compacted 2 times" where the conversation was compacted to fit its budget (MODEL-11). */
function compacted(m: UsageMeter): string {
  const n = m.compactions ?? 0;
  return n > 0 ? `, compacted ${n} ${n === 1 ? 'time' : 'times'}` : '';
}

/**
 * What the endpoint's prompt cache served and stored over the session's calls, already counted
 * in the tokens in: "1,600 read · 300 written"; undefined where it reported neither (USAGE-8).
 */
function cacheWords(...ts: UsageTally[]): string | undefined {
  const read = ts.reduce((n, t) => n + (t.cachedInputTokens ?? 0), 0);
  const written = ts.reduce((n, t) => n + (t.cacheWriteInputTokens ?? 0), 0);
  if (read === 0 && written === 0) return undefined;
  return [read > 0 ? `${tokens(read)} read` : '', written > 0 ? `${tokens(written)} written` : ''].filter(Boolean).join(' · ');
}

export interface UsageLine { label: string; text: string }

/**
 * The meter as labelled lines, in the order the sidebar draws them: Context, Turn, Session,
 * Protection, and Cost where the person gave a price for the model.
 */
export function usageLines(m: UsageMeter): UsageLine[] {
  const lines: UsageLine[] = [];
  const limit = m.contextLimit;
  const silent = (t: UsageTally) => t.calls === t.unreported;
  // An endpoint that never reports usage gets one line saying so, not four.
  if (m.session.planner.calls > 0 && silent(m.session.planner) && silent(m.session.protection)) {
    return [{ label: 'Usage', text: `not reported by the endpoint${limit ? ` (context limit ${tokens(limit)})` : ''}` }];
  }
  if (m.contextTokens !== undefined) {
    const share = limit ? ` (${Math.round((100 * m.contextTokens) / limit)}%)` : '';
    lines.push({ label: 'Context', text: `${tokens(m.contextTokens)}${limit ? ` of ${tokens(limit)}` : ''}${share}${compacted(m)}` });
  } else if (m.session.planner.calls > 0) {
    lines.push({ label: 'Context', text: `not reported by the endpoint${limit ? ` (limit ${tokens(limit)})` : ''}` });
  }
  lines.push({ label: 'Turn', text: inOut(m.turn.planner) });
  lines.push({ label: 'Session', text: inOut(m.session.planner) });
  const cache = cacheWords(m.session.planner, m.session.protection);
  if (cache) lines.push({ label: 'Cache', text: cache });
  const p = m.session.protection;
  const calls = `${p.calls} ${p.calls === 1 ? 'call' : 'calls'}`;
  lines.push({ label: 'Protection', text: p.calls === 0 ? 'no checks or processors yet' : `${calls} · ${inOut(p)}` });
  const total = money(m.session.planner, m.session.protection);
  if (total !== undefined) {
    const guard = money(p);
    lines.push({ label: 'Cost', text: `≈ ${dollars(total)} this session${guard !== undefined && p.calls > p.unreported ? `, ${dollars(guard)} of it protection` : ''}` });
  }
  return lines;
}

/**
 * The meter folded to one line: the context against its limit and the money where known, or that
 * the endpoint reported nothing.
 */
export function usageSummary(m: UsageMeter): string {
  const silent = (t: UsageTally) => t.calls === t.unreported;
  if (m.session.planner.calls > 0 && silent(m.session.planner) && silent(m.session.protection)) return 'Usage not reported by the endpoint';
  const context = m.contextTokens === undefined ? 'context not reported' : `context ${tokens(m.contextTokens)}${m.contextLimit ? ` of ${tokens(m.contextLimit)}` : ''}`;
  const total = money(m.session.planner, m.session.protection);
  return `Usage: ${context}${total === undefined ? '' : ` · ≈ ${dollars(total)}`}`;
}
