// Starts `bravebot lsp` through vscode-languageclient, declaring that this client answers
// `bravebot/session/requestPermission` itself (experimental.bravebot.permissions) and that it
// rebuilds an edit's proposal from its own buffer and the hunks' texts (hunkTexts, WRITE-61), and
// that it answers `bravebot/diagnostics/get` from VS Code's own diagnostics (diagnostics, DIAG-5).

import * as vscode from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  type ClientCapabilities,
  type FeatureState,
} from 'vscode-languageclient/node';
import { apiKeyEnv, type Config } from './config';
import { answerCommand, type AnswerArguments, type AnswerResult, type InitializationOptions } from './protocol';

/** Adds `experimental.bravebot.permissions`, `hunkTexts` and `diagnostics` (all `true`) to the client's capabilities. */
class PermissionsFeature implements StaticFeature {
  fillClientCapabilities(caps: ClientCapabilities): void {
    const experimental = (caps.experimental ??= {}) as Record<string, unknown>;
    experimental.bravebot = { ...(experimental.bravebot as object | undefined), permissions: true, hunkTexts: true, diagnostics: true };
  }
  getState(): FeatureState {
    return { kind: 'static' };
  }
  initialize(): void {}
  clear(): void {}
}

/**
 * `onAnswered` hears answers given through the server's code actions (`bravebot.answer`), so the
 * question's own diff or card can close: the server keeps the first answer and ignores the reply
 * to its request that follows.
 */
export function createClient(
  config: Config,
  apiKey: string | undefined,
  output: vscode.OutputChannel,
  onAnswered: (args: AnswerArguments, result: AnswerResult | undefined) => void,
): LanguageClient {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The key goes to the child's environment only; it is never written to settings or logs.
  if (apiKey) env[apiKeyEnv] = apiKey;
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const run = { command: config.serverPath, args: ['lsp'], options: { env, cwd } };
  const serverOptions: ServerOptions = { run, debug: run };
  const initializationOptions: InitializationOptions = {
    model: config.model,
    interactive: true,
    clientName: 'vscode',
    ...(config.questionTimeout !== undefined ? { questions: { timeoutSeconds: config.questionTimeout } } : {}),
    ...(config.checkTimeout !== undefined ? { vetting: { timeoutSeconds: config.checkTimeout } } : {}),
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions,
    outputChannel: output,
    middleware: {
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        const answer = args[0] as AnswerArguments | undefined;
        if (command === answerCommand && answer?.questionId) onAnswered(answer, result as AnswerResult | undefined);
        return result;
      },
    },
  };
  const client = new LanguageClient('bravebot', 'bravebot', serverOptions, clientOptions);
  client.registerFeature(new PermissionsFeature());
  return client;
}
