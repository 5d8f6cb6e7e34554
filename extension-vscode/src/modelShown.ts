// The model the server actually uses, in words: asked of the server (`bravebot/session/status`
// returns `model: { api, baseUrl, name, source }`), never read back from the extension's own
// settings, which the environment or the server's settings may override. Pure, unit-tested.

import type { ModelOptions, ModelStatus } from './protocol';

/** Where the server's model settings came from, in words. */
export function sourceWords(source: string): string {
  switch (source) {
    case 'initializationOptions': return "from VS Code's settings (bravebot.model.*)";
    case 'environment': return 'from the environment of the bravebot program (BRAVEBOT_MODEL_URL and the like), which overrides VS Code\'s settings';
    case '~/.bravebot/settings.json': return 'from ~/.bravebot/settings.json';
    case 'default': return 'the built-in default: nothing set it';
    default: return `from ${source}`;
  }
}

/** One line: the model, its endpoint and wire format, and where that came from. */
export function modelLine(m: ModelStatus): string {
  return `${endpointWords(m)}, ${sourceWords(m.source)}`;
}

/** The model, its endpoint and wire format: "m at http://x (openai)". */
export function endpointWords(m: ModelStatus): string {
  return `${m.name || '(no name)'} at ${m.baseUrl || '(no address)'} (${m.api || '?'})`;
}

/** Where the planner's context budget came from, in words (MODEL-10). */
const budgetSources: Record<string, string> = {
  setting: 'set by model.contextTokens',
  endpoint: "the endpoint's model listing",
  'model name': "the model family's window, by its name",
  default: 'the default: nothing said the model\'s window; set model.contextTokens',
};

/** "Context budget: 32,768 tokens (the default: ...)", or undefined before the server knows it. */
export function budgetLine(m: ModelStatus): string | undefined {
  if (m.contextTokens === undefined) return undefined;
  const from = m.contextSource === undefined ? '' : ` (${budgetSources[m.contextSource] ?? m.contextSource})`;
  return `Context budget: ${m.contextTokens.toLocaleString('en-US')} tokens${from}`;
}

/**
 * What the person chose in VS Code and the server does not use, in words; undefined when the
 * server uses every setting they made (settings left empty are the server's to decide).
 */
export function modelDisagreement(m: ModelStatus, chosen: ModelOptions): string | undefined {
  const differ: string[] = [];
  if (chosen.name && chosen.name !== m.name) differ.push(`the model ${chosen.name}`);
  if (chosen.baseUrl && chosen.baseUrl.replace(/\/+$/, '') !== m.baseUrl.replace(/\/+$/, '')) differ.push(`the endpoint ${chosen.baseUrl}`);
  if (chosen.api && chosen.api !== m.api) differ.push(`the wire format ${chosen.api}`);
  if (differ.length === 0) return undefined;
  return `VS Code's settings name ${differ.join(', ')}, but the server uses ${m.name} at ${m.baseUrl} (${m.api}), ${sourceWords(m.source)}.`;
}
