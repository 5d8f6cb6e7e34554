// Setting bravebot up from inside VS Code: finding the program, choosing the model endpoint and the
// model (from the endpoint's own list where it answers), the key, and a check that the model
// answers (`bravebot doctor`). The welcome view and the walkthrough call these commands.

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { apiKeyEnv, secretKey } from './config';
import type { Ctx } from './ctx';
import { defaultBaseUrl } from './explain';
import { modelsRequest, parseModels, type Api } from './models';
import { modelDisagreement, modelLine } from './modelShown';

/** The program `bravebot.serverPath` names, resolved as a spawn would: a path, or a name on PATH. */
export function resolveServer(serverPath: string): string | undefined {
  const executable = (p: string): boolean => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (serverPath.includes('/') || serverPath.includes('\\')) return executable(serverPath) ? serverPath : undefined;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, serverPath))) return path.join(dir, serverPath);
  }
  return undefined;
}

/** Sets the context keys the welcome view and the walkthrough read; returns whether the program was found. */
export async function refreshSetup(ctx: Ctx): Promise<boolean> {
  const found = resolveServer(ctx.config.serverPath) !== undefined;
  await vscode.commands.executeCommand('setContext', 'bravebot.serverMissing', !found);
  await vscode.commands.executeCommand('setContext', 'bravebot.serverFound', found);
  return found;
}

/** The program's and the endpoint's settings are written to the user settings, never a workspace's. */
async function setUser(key: string, value: string): Promise<void> {
  await vscode.workspace.getConfiguration('bravebot').update(key, value, vscode.ConfigurationTarget.Global);
}

export async function locateServer(ctx: Ctx): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    title: 'bravebot: where is the bravebot program?',
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    openLabel: 'Use this program',
  });
  const file = picked?.[0]?.fsPath;
  if (!file) return;
  if (!resolveServer(file)) {
    void vscode.window.showErrorMessage(`bravebot: ${file} is not an executable file.`);
    return;
  }
  await setUser('serverPath', file);
  await refreshSetup(ctx);
  ctx.output.appendLine(`${new Date().toISOString()} bravebot.serverPath set to ${file}`);
  void vscode.window.showInformationMessage(`bravebot: using ${file}`);
}

const endpoints: { label: string; description: string; api: Api; url?: string }[] = [
  { label: 'Ollama on this machine', description: defaultBaseUrl, api: 'openai', url: defaultBaseUrl },
  { label: 'OpenAI', description: 'https://api.openai.com/v1', api: 'openai', url: 'https://api.openai.com/v1' },
  { label: 'Anthropic', description: 'https://api.anthropic.com', api: 'anthropic', url: 'https://api.anthropic.com' },
  { label: 'Another OpenAI-compatible endpoint…', description: 'llama.cpp, vLLM, a gateway: type its base URL', api: 'openai' },
  { label: 'Another Anthropic-compatible endpoint…', description: 'type its base URL', api: 'anthropic' },
];

/** The models the endpoint lists, or why it did not list them. */
async function listModels(api: Api, baseUrl: string, key: string | undefined): Promise<{ models: string[]; why?: string }> {
  const { url, headers } = modelsRequest(api, baseUrl, key);
  try {
    const r = await fetch(url, { headers, signal: AbortSignal.timeout(10000) });
    if (!r.ok) return { models: [], why: `${url} answered ${r.status}` };
    const models = parseModels(await r.json());
    return models.length ? { models } : { models, why: `${url} listed no models` };
  } catch (err) {
    return { models: [], why: `could not reach ${url}: ${err instanceof Error ? (err.cause as Error | undefined)?.message ?? err.message : String(err)}` };
  }
}

export async function chooseModel(ctx: Ctx): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('bravebot');
  const current = cfg.get<string>('model.baseUrl') ?? '';
  const endpoint = await vscode.window.showQuickPick(endpoints, {
    title: 'bravebot: model endpoint (1 of 2)',
    placeHolder: current ? `now ${current}` : 'not chosen yet: the server uses a local Ollama',
    // A step of a setup the person may leave to look something up: it stays until answered.
    ignoreFocusOut: true,
  });
  if (!endpoint) return;
  const baseUrl = endpoint.url ?? (await vscode.window.showInputBox({
    title: 'bravebot: base URL of the endpoint',
    value: current,
    prompt: endpoint.api === 'openai' ? 'Requests go to BASE/chat/completions, e.g. http://127.0.0.1:8080/v1' : 'Requests go to BASE/v1/messages',
    ignoreFocusOut: true,
    validateInput: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? undefined : 'an http:// or https:// URL'),
  }))?.trim();
  if (!baseUrl) return;
  const key = await ctx.extension.secrets.get(secretKey);
  const listed = await listModels(endpoint.api, baseUrl, key);
  let name: string | undefined;
  if (listed.models.length) {
    name = (await vscode.window.showQuickPick(listed.models, {
      title: 'bravebot: model (2 of 2)',
      placeHolder: `the models ${baseUrl} lists`,
      ignoreFocusOut: true,
    }));
  } else {
    ctx.output.appendLine(`${new Date().toISOString()} model list: ${listed.why}`);
    name = (await vscode.window.showInputBox({
      title: 'bravebot: model name (2 of 2)',
      prompt: `The endpoint gave no list (${listed.why}); type the model's name.`,
      value: cfg.get<string>('model.name') ?? '',
      ignoreFocusOut: true,
    }))?.trim();
  }
  if (!name) return;
  // One restart for the three settings, not one per setting.
  await ctx.batchSettings(async () => {
    await setUser('model.api', endpoint.api);
    await setUser('model.baseUrl', baseUrl);
    await setUser('model.name', name);
  });
  await vscode.commands.executeCommand('setContext', 'bravebot.modelChosen', true);
  // What the server now uses, asked of it: the environment may override what was chosen.
  const used = await ctx.serverModel();
  const differ = used && modelDisagreement(used, { api: endpoint.api, baseUrl, name });
  if (differ) void vscode.window.showWarningMessage(`bravebot: ${differ}`);
  else void vscode.window.showInformationMessage(`bravebot: the server uses ${used ? modelLine(used) : `${name} at ${baseUrl}`}`);
}

/** The facts `bravebot doctor` reports for the extension's settings and key, one a line. */
export async function doctor(ctx: Ctx, program: string): Promise<{ ok: boolean; lines: string[] }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const m = ctx.config.model;
  if (m.baseUrl) env.BRAVEBOT_MODEL_URL = m.baseUrl;
  if (m.name) env.BRAVEBOT_MODEL = m.name;
  if (m.api) env.BRAVEBOT_MODEL_API = m.api;
  const key = await ctx.extension.secrets.get(secretKey);
  if (key) env[apiKeyEnv] = key;
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const out = await new Promise<string>((resolve) => {
    execFile(program, ['doctor'], { env, cwd, timeout: 60000 }, (err, stdout, stderr) => resolve(`${stdout}${err && !stdout ? `${stderr || err.message}` : ''}`));
  });
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  return { ok: lines.some((l) => l.startsWith('model answers: yes')), lines };
}

export async function checkSetup(ctx: Ctx): Promise<void> {
  const program = resolveServer(ctx.config.serverPath);
  if (!program) {
    await refreshSetup(ctx);
    const pick = await vscode.window.showErrorMessage(`bravebot: the program "${ctx.config.serverPath}" was not found (bravebot.serverPath).`, 'Locate bravebot');
    if (pick) await locateServer(ctx);
    return;
  }
  const { ok, lines } = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'bravebot: asking the model endpoint…' },
    () => doctor(ctx, program),
  );
  ctx.output.appendLine(`${new Date().toISOString()} bravebot doctor:`);
  for (const l of lines) ctx.output.appendLine(`  ${l}`);
  // The model the running server uses, asked of it, with where that came from.
  const used = await ctx.serverModel();
  const differ = used && modelDisagreement(used, ctx.config.model);
  const server = used ? [`- the model the running bravebot uses: ${modelLine(used)}`, ...(differ ? [`- ${differ}`] : [])] : ['- the running bravebot could not be asked which model it uses (bravebot: Show Log says why)'];
  await ctx.showInfo('bravebot setup check', `# bravebot setup check\n\n${[...lines.map((l) => `- ${l}`), ...server].join('\n')}\n`);
  const answers = lines.find((l) => l.startsWith('model answers:')) ?? 'model answers: unknown';
  if (ok) void vscode.window.showInformationMessage(`bravebot: ${answers}`);
  else void vscode.window.showErrorMessage(`bravebot: ${answers}`, 'Choose the model endpoint').then((p) => p && chooseModel(ctx));
}

export async function getStarted(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', 'brave.bravebot#bravebot.setup', false);
}
