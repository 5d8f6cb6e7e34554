// The prompts Up and Down recall in the prompt box, as a shell does: the server's history of
// every session's prompts (`bravebot/history/list`, SESS-8), merged by time with the ones sent
// from this view that the server keeps no history of (an incognito session's), the same prompt
// twice in a row kept once. Up from a half-typed prompt keeps it as a draft that Down past the
// newest entry brings back. Pure.

/** A prompt and when it was sent, in seconds since the epoch. */
export interface Recalled { text: string; time: number }

export class PromptHistory {
  private local: Recalled[];
  private server: Recalled[] = [];
  private entries: string[] = [];
  /** Index of the entry shown; `entries.length` means the person's own draft. */
  private at = 0;
  private draft = '';

  constructor(local: readonly Recalled[] = [], private readonly limit = 1000) {
    this.local = local.slice(-limit);
    this.rebuild();
  }

  private rebuild(): void {
    const all = [...this.server, ...this.local].map((e, i) => ({ ...e, i }));
    // By time; at the same second the server's copy and this view's stay next to each other.
    all.sort((a, b) => a.time - b.time || a.i - b.i);
    const out: string[] = [];
    for (const e of all) if (e.text !== '' && out[out.length - 1] !== e.text) out.push(e.text);
    this.entries = out.slice(-this.limit);
    this.at = this.entries.length;
  }

  /** Records a prompt sent from this view and goes back to an empty draft. */
  add(text: string, time = Date.now() / 1000): void {
    this.local.push({ text, time });
    if (this.local.length > this.limit) this.local.splice(0, this.local.length - this.limit);
    this.rebuild();
    this.draft = '';
  }

  /** The server's history, oldest first, replacing the last one it sent; the walk starts anew. */
  setServer(entries: readonly Recalled[]): void {
    this.server = entries.slice();
    this.rebuild();
  }

  /** Whether an entry is shown rather than the draft. */
  get walking(): boolean {
    return this.at < this.entries.length;
  }

  /** The entry before the one shown, keeping `current` as the draft when leaving it; none at the oldest. */
  previous(current: string): string | undefined {
    if (this.at === 0) return undefined;
    if (this.at === this.entries.length) this.draft = current;
    this.at -= 1;
    return this.entries[this.at];
  }

  /** The entry after the one shown, then the draft; none when the draft is shown already. */
  next(): string | undefined {
    if (this.at >= this.entries.length) return undefined;
    this.at += 1;
    return this.at === this.entries.length ? this.draft : this.entries[this.at];
  }

  get list(): string[] {
    return this.entries.slice();
  }
}
