// The one way a message leaves for the server: each goes out as the kind the protocol table
// (protocol.ts `outgoing`) gives its method, carrying only the fields the table names, so a
// misspelt field or a request sent as a notification fails here, loudly, rather than being
// ignored by the server (issue 16). tests/tests/protocol_fronts.rs checks that no other file of
// the extension sends anything.

import { outgoing, type OutgoingMethod } from './protocol';

/** What a client needs to send: vscode-languageclient's LanguageClient has both. */
export interface Sender {
  sendRequest<R>(method: string, params: object): Promise<R>;
  sendNotification(method: string, params: object): Promise<void>;
}

/** Throws unless `method` is listed with `kind` and `params` holds only fields the table names. */
export function checkOutgoing(method: string, kind: 'request' | 'notification', params: object): void {
  const entry = (outgoing as Record<string, { kind: string; params: readonly string[] }>)[method];
  if (!entry) throw new Error(`bravebot: ${method} is not a method the extension sends`);
  if (entry.kind !== kind) throw new Error(`bravebot: ${method} is a ${entry.kind}, not a ${kind}`);
  for (const field of Object.keys(params)) {
    if (!entry.params.includes(field)) throw new Error(`bravebot: ${method} has no field ${field}`);
  }
}

export function request<R>(client: Sender, method: OutgoingMethod, params: object): Promise<R> {
  checkOutgoing(method, 'request', params);
  return client.sendRequest<R>(method, params);
}

export function notify(client: Sender, method: OutgoingMethod, params: object): Promise<void> {
  checkOutgoing(method, 'notification', params);
  return client.sendNotification(method, params);
}
