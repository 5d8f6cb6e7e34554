// The extension's settings, read in one place. The API key is not a setting: it lives in
// SecretStorage and reaches the server only through its environment.

import * as vscode from 'vscode';
import type { ModelOptions } from './protocol';
import { checkTimeout, questionTimeout, type NotifySettings } from './attention';

export const secretKey = 'bravebot.apiKey';
/** The environment variable the server reads the key from (`model.apiKeyEnv`). */
export const apiKeyEnv = 'BRAVEBOT_API_KEY';

export class Config {
  private get cfg(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('bravebot');
  }

  get serverPath(): string {
    return this.cfg.get<string>('serverPath') || 'bravebot';
  }

  /** The model settings for `initializationOptions.model`; empty fields are left to the server. */
  get model(): ModelOptions {
    const m: ModelOptions = { apiKeyEnv };
    const api = this.cfg.get<string>('model.api');
    const baseUrl = this.cfg.get<string>('model.baseUrl');
    const name = this.cfg.get<string>('model.name');
    if (api) m.api = api;
    if (baseUrl) m.baseUrl = baseUrl;
    if (name) m.name = name;
    return m;
  }

  /** `bravebot.questions.timeoutSeconds`: a whole number of seconds above 0, else none (VSC-104). */
  get questionTimeout(): number | undefined {
    return questionTimeout(this.cfg.get<unknown>('questions.timeoutSeconds'));
  }

  /** `bravebot.vetting.timeoutSeconds`: a whole number of seconds from 1 to 86400, else the server's own (VSC-134). */
  get checkTimeout(): number | undefined {
    return checkTimeout(this.cfg.get<unknown>('vetting.timeoutSeconds'));
  }

  /** Which moments are notified when the person is not looking (VSC-102). */
  get notify(): NotifySettings {
    return { questions: this.cfg.get<boolean>('notify.questions') !== false, turnEnd: this.cfg.get<boolean>('notify.turnEnd') !== false };
  }

  /** Whether a settings change needs the server restarted. */
  affectsServer(e: vscode.ConfigurationChangeEvent): boolean {
    return e.affectsConfiguration('bravebot.serverPath') || e.affectsConfiguration('bravebot.model') || e.affectsConfiguration('bravebot.questions') || e.affectsConfiguration('bravebot.vetting');
  }
}
