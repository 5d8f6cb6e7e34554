// Agent text as markdown, rendered by markdown-it with raw HTML turned off: a tag in the model's
// text is drawn as text, never as markup. Links are kept only for http, https and mailto (and show
// their target in a hover); images are not rendered at all, since a picture the model names would
// be a request to a server of its choosing. Code blocks are highlighted by highlight.js (its output
// is escaped text in spans) and get Copy and Insert buttons. Pure: no DOM, unit-tested.

import MarkdownIt from 'markdown-it';
import hljs from 'highlight.js/lib/common';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });
md.disable('image');
const defaultValidate = md.validateLink.bind(md);
md.validateLink = (url: string): boolean => /^(https?:|mailto:)/i.test(url.trim()) && defaultValidate(url);

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const href = tokens[idx].attrGet('href') ?? '';
  tokens[idx].attrSet('title', href);
  return self.renderToken(tokens, idx, options);
};

function highlighted(code: string, lang: string): string {
  if (lang && hljs.getLanguage(lang)) {
    try {
      return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } catch {
      // Fall through to plain escaped text.
    }
  }
  return escapeHtml(code);
}

md.renderer.rules.fence = (tokens, idx) => {
  const t = tokens[idx];
  const lang = t.info.trim().split(/\s+/)[0] ?? '';
  const code = t.content.replace(/\n$/, '');
  const attr = lang ? ` data-lang="${escapeHtml(lang)}"` : '';
  return `<div class="code-block"><div class="code-actions"><button class="secondary" data-code="copy" title="Copy the code">Copy</button>` +
    `<button class="secondary" data-code="insert" title="Insert the code at the cursor of the active editor">Insert</button></div>` +
    `<pre><code${attr}>${highlighted(code, lang)}</code></pre></div>`;
};
md.renderer.rules.code_block = md.renderer.rules.fence;

export function renderMarkdown(text: string): string {
  return md.render(text);
}
