// The endpoint's model list (`GET /models`), as the model picker asks for it. Pure: it builds the
// request and reads the answer, and setup.ts does the fetching.

export type Api = 'openai' | 'anthropic';

/** The URL and headers of the listing request; the key goes in a header, never the URL. */
export function modelsRequest(api: Api, baseUrl: string, key: string | undefined): { url: string; headers: Record<string, string> } {
  const base = baseUrl.replace(/\/+$/, '');
  if (api === 'anthropic') {
    const headers: Record<string, string> = { 'anthropic-version': '2023-06-01' };
    if (key) headers['x-api-key'] = key;
    return { url: `${base}/v1/models`, headers };
  }
  return { url: `${base}/models`, headers: key ? { authorization: `Bearer ${key}` } : {} };
}

/** Model ids from an OpenAI- or Anthropic-style listing (`{ data: [{ id }] }`), or Ollama's `{ models: [{ name }] }`. */
export function parseModels(body: unknown): string[] {
  const b = body as { data?: { id?: unknown }[]; models?: { name?: unknown }[] } | null;
  const ids = [...(Array.isArray(b?.data) ? b.data.map((m) => m?.id) : []), ...(Array.isArray(b?.models) ? b.models.map((m) => m?.name) : [])];
  return [...new Set(ids.filter((x): x is string => typeof x === 'string' && x !== ''))].sort();
}
