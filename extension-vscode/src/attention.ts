// When bravebot needs the person and they are looking elsewhere (another window, another view), they
// are told: a notification with a Show button, and a badge on the chat counting the questions that
// wait. Pure: ctx.ts reads the window's state and the settings and does what this decides.

import type { StopReason } from './protocol';

/** What the person can see of bravebot right now. */
export interface Watching {
  /** The VS Code window has the focus (`vscode.window.state.focused`). */
  focused: boolean;
  /** The chat view is showing. */
  chatVisible: boolean;
}

/** `bravebot.notify.questions` and `bravebot.notify.turnEnd`. */
export interface NotifySettings {
  questions: boolean;
  turnEnd: boolean;
}

/** Something the person may need to act on. */
export type Moment =
  | { kind: 'question'; title: string; askedBy?: string }
  | { kind: 'turnEnd'; stopReason: StopReason };

/** The label of the notification's button that goes to the chat (and the question in it). */
export const showLabel = 'Show';

/** One line of the notification: control characters and line breaks are not let through. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/**
 * The notification's text for `moment`, or nothing when the person is looking at the chat in a
 * focused window, or turned that kind off. A turn the person cancelled tells them nothing.
 */
export function notification(moment: Moment, watching: Watching, settings: NotifySettings): string | undefined {
  if (watching.focused && watching.chatVisible) return undefined;
  if (moment.kind === 'question') {
    if (!settings.questions) return undefined;
    const by = moment.askedBy ? ` (asked by ${oneLine(moment.askedBy)})` : '';
    return `bravebot asks${by}: ${oneLine(moment.title) || 'a question waits for you'}`;
  }
  if (!settings.turnEnd) return undefined;
  switch (moment.stopReason) {
    case 'endTurn':
      return 'bravebot finished its turn.';
    case 'maxRounds':
      return 'bravebot stopped: the turn reached its round limit.';
    case 'error':
      return 'bravebot stopped: the turn ended in an error.';
    case 'cancelled':
      return undefined;
  }
}

/** `bravebot.vetting.timeoutSeconds` as the server takes it: 0, empty or not a whole number leaves the server's own (CHECK-31). */
export function checkTimeout(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= 86400 ? value : undefined;
}

/** `bravebot.questions.timeoutSeconds` as the server takes it: 0, empty or not a whole number means none. */
export function questionTimeout(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= 604800 ? value : undefined;
}

/**
 * The chat view's badge for the `waiting` questions drawn as cards in it; none when nothing waits.
 * A proposed edit or write is counted by Changes This Turn's badge, and VS Code adds the badges of
 * a container's views on its icon, so each question is counted there once.
 */
export function badge(waiting: number): { value: number; tooltip: string } | undefined {
  if (waiting <= 0) return undefined;
  return { value: waiting, tooltip: waiting === 1 ? 'bravebot: 1 question waits for you in the chat' : `bravebot: ${waiting} questions wait for you in the chat` };
}
