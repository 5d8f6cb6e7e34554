// A small, escaping markdown renderer for agent text: fenced code blocks, inline code, bold,
// headings and paragraphs. Everything is escaped first, so no model output becomes markup.

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function inline(s: string): string {
  return escapeHtml(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}

export function renderMarkdown(text: string): string {
  const out: string[] = [];
  const parts = text.split(/^```/m);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      // A code block; an unclosed one (still streaming) renders as code too.
      const nl = part.indexOf('\n');
      const lang = nl < 0 ? '' : part.slice(0, nl).trim();
      const body = nl < 0 ? '' : part.slice(nl + 1).replace(/\n$/, '');
      out.push(`<pre><code${lang ? ` data-lang="${escapeHtml(lang)}"` : ''}>${escapeHtml(body)}</code></pre>`);
      return;
    }
    for (const para of part.split(/\n{2,}/)) {
      if (!para.trim()) continue;
      const h = /^(#{1,6})\s+(.*)$/.exec(para.trim());
      if (h) out.push(`<h${h[1].length + 2 > 6 ? 6 : h[1].length + 2}>${inline(h[2])}</h${h[1].length + 2 > 6 ? 6 : h[1].length + 2}>`);
      else out.push(`<p>${para.split('\n').map(inline).join('<br>')}</p>`);
    }
  });
  return out.join('');
}
