// The answer to `bravebot/diagnostics/get` (DIAG-5), built from VS Code's diagnostics without
// importing `vscode`: ctx.ts hands over each file's diagnostics as plain data, so the mapping is
// unit-tested with node's runner. The server labels every field but the URI as the file it is
// about and confines the URI itself; this side only says what VS Code holds, bounded.

import type { DiagnosticsGetResult, WireDiagnostic } from './protocol';

/** Most diagnostics one answer carries; the server reads at most 1000 and keeps 200. */
export const MAX_ITEMS = 1000;

/** One diagnostic as VS Code holds it: `vscode.Diagnostic`'s fields that the answer uses. */
export interface HeldDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** `vscode.DiagnosticSeverity`: 0 error, 1 warning, 2 information, 3 hint. */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
  message: string;
}

const severities = ['error', 'warning', 'information', 'hint'];

/** VS Code's severity as the wire's word. */
export function severityWord(severity: number): string {
  return severities[severity] ?? 'information';
}

/** The wire's answer for these files (URI strings) and what VS Code holds for each, in order. */
export function diagnosticsAnswer(files: [string, HeldDiagnostic[]][]): DiagnosticsGetResult {
  const items: WireDiagnostic[] = [];
  for (const [uri, held] of files) {
    for (const d of held) {
      if (items.length >= MAX_ITEMS) return { items };
      const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
      items.push({
        uri,
        range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
        severity: severityWord(d.severity),
        source: d.source ?? '',
        code: code ?? '',
        message: d.message,
      });
    }
  }
  return { items };
}
