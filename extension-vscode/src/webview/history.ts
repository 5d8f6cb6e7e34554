// The prompts sent in this chat, recalled with Up and Down in the prompt box as a shell does: Up
// from a half-typed prompt keeps it as a draft that Down past the newest entry brings back. Pure.

export class PromptHistory {
  private readonly entries: string[];
  /** Index of the entry shown; `entries.length` means the person's own draft. */
  private at: number;
  private draft = '';

  constructor(entries: readonly string[] = [], private readonly limit = 100) {
    this.entries = entries.slice(-limit);
    this.at = this.entries.length;
  }

  /** Records a sent prompt (not twice in a row) and goes back to an empty draft. */
  add(text: string): void {
    if (text !== '' && this.entries[this.entries.length - 1] !== text) this.entries.push(text);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    this.at = this.entries.length;
    this.draft = '';
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
