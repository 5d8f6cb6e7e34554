// Messages to the chat webview are held until the view says it is ready, then delivered in order.
// Pure: the sink is whatever posts to the webview.

export class MessageQueue<T> {
  private pending: T[] = [];
  private sink: ((m: T) => void) | undefined;

  /** Delivers now when a ready sink is attached, otherwise keeps the message for later. */
  post(message: T): void {
    if (this.sink) this.sink(message);
    else this.pending.push(message);
  }

  /** The view is ready: attach its sink and flush everything held, oldest first. */
  ready(sink: (m: T) => void): void {
    this.sink = sink;
    const held = this.pending;
    this.pending = [];
    for (const m of held) sink(m);
  }

  /** The view went away (hidden and disposed): hold messages again until it is back. */
  detach(): void {
    this.sink = undefined;
  }

  get held(): number {
    return this.pending.length;
  }
}
