// Turns the reason a turn or a start failed into what the person reads in the chat: the reason,
// which setting to change, and one setup command that helps. Pure, so it is unit-tested.

import type { ErrorAction } from './webview/transcript';

export interface Explained {
  text: string;
  hint?: string;
  action?: ErrorAction;
}

export interface Settings {
  serverPath: string;
  baseUrl: string;
}

/** The endpoint the server uses when `bravebot.model.baseUrl` is empty (CONTRACT §5). */
export const defaultBaseUrl = 'http://127.0.0.1:11434/v1';

export function explainError(message: string, s: Settings): Explained {
  const text = message.trim() || 'the turn failed';
  if (/ENOENT|not found on PATH|could not find its program/.test(text)) {
    return {
      text: `bravebot could not start its program: "${s.serverPath}" was not found.`,
      hint: 'Set bravebot.serverPath (user settings, the User tab) to the bravebot binary, or put bravebot on PATH.',
      action: { label: 'Locate bravebot', command: 'bravebot.locateServer' },
    };
  }
  if (/EACCES/.test(text)) {
    return {
      text: `bravebot could not start its program: "${s.serverPath}" is not executable.`,
      hint: 'Make the file executable, or set bravebot.serverPath to another bravebot binary.',
      action: { label: 'Locate bravebot', command: 'bravebot.locateServer' },
    };
  }
  const url = s.baseUrl || `${defaultBaseUrl} (the default, since bravebot.model.baseUrl is empty)`;
  if (/could not be reached|did not answer in time|connection refused|reply was cut off/i.test(text)) {
    return {
      text,
      hint: `Check bravebot.model.baseUrl (now ${url}) and that the endpoint is running.`,
      action: { label: 'Choose the model endpoint', command: 'bravebot.chooseModel' },
    };
  }
  const status = /answered (\d{3})/.exec(text)?.[1];
  if (status === '401' || status === '403') {
    return { text, hint: 'The endpoint refused the API key: set it again with bravebot: Set API Key.', action: { label: 'Set API key', command: 'bravebot.setApiKey' } };
  }
  if (status === '404') {
    return { text, hint: `Check bravebot.model.name and bravebot.model.baseUrl (now ${url}).`, action: { label: 'Choose the model', command: 'bravebot.chooseModel' } };
  }
  if (status === '429') return { text, hint: 'The endpoint is limiting requests: Retry in a moment.' };
  if (status && status.startsWith('5')) return { text, hint: 'The model endpoint failed on its side: Retry, or look at the endpoint.' };
  return { text, hint: 'bravebot: Show Log has the details.', action: { label: 'Show log', command: 'bravebot.showLog' } };
}
