// `@` completion of workspace files in the prompt box: finding the mention being typed, ranking the
// workspace's files for it and putting the chosen path in. Pure, so it is tested without a browser.

/** The `@` mention the cursor is in: where its `@` is and what follows it so far. */
export function mentionAt(text: string, cursor: number): { start: number; query: string } | undefined {
  const m = /(?:^|\s)@([^\s@]*)$/.exec(text.slice(0, cursor));
  if (!m) return undefined;
  return { start: cursor - m[1].length - 1, query: m[1] };
}

/**
 * The paths that fit `query`, best first: a file name starting with it, then a path segment
 * starting with it, then the path holding it anywhere; shorter paths first within each. Case is
 * ignored.
 */
export function rankMentions(paths: readonly string[], query: string, limit = 10): string[] {
  const q = query.toLowerCase();
  const score = (p: string): number => {
    const l = p.toLowerCase();
    const name = l.slice(l.lastIndexOf('/') + 1);
    if (name.startsWith(q)) return 0;
    if (l.startsWith(q) || l.includes(`/${q}`)) return 1;
    if (l.includes(q)) return 2;
    return -1;
  };
  return paths
    .map((p) => ({ p, s: score(p) }))
    .filter((x) => x.s >= 0)
    .sort((a, b) => a.s - b.s || a.p.length - b.p.length || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0))
    .slice(0, limit)
    .map((x) => x.p);
}

/** The text with the mention at the cursor completed to `@path ` and the cursor after it. */
export function completeMention(text: string, cursor: number, path: string): { text: string; cursor: number } {
  const at = mentionAt(text, cursor);
  if (!at) return { text, cursor };
  const inserted = `@${path} `;
  const rest = text.slice(cursor).replace(/^\S*/, '').replace(/^ /, '');
  return { text: text.slice(0, at.start) + inserted + rest, cursor: at.start + inserted.length };
}
