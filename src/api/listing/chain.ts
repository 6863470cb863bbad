/**
 * The end of what a reading has proved: the last items read, in listing order, each known to be
 * preceded (in the listing's order, which moves never change) only by items the reading already holds.
 * An answer that holds one of them proves everything after it in the answer too. Bounded: only the last
 * `capacity` ids are kept, enough to find one again after the listing shifted by less than that.
 */
export class ProvedChain {
  private ids: string[] = [];
  /** Where each id sits in `ids`, plus `dropped`: positions stay valid as the front is trimmed. */
  private readonly position = new Map<string, number>();
  private dropped = 0;

  constructor(
    private readonly capacity: number,
    initial: readonly string[] = [],
  ) {
    this.extend(initial);
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.position.has(id);
  }

  get last(): string | undefined {
    return this.ids.at(-1);
  }

  /** How many proved ids follow `id` (proved) in the chain. */
  provedAfter(id: string): number {
    const position = this.position.get(id);
    if (position === undefined) throw new Error(`ProvedChain: ${id} is not proved`);
    return this.dropped + this.ids.length - 1 - position;
  }

  /** The last `count` ids, oldest first (what a checkpoint keeps). */
  tail(count: number): string[] {
    return this.ids.slice(-count).filter((id, i, tail) => this.position.get(id) === this.at(tail.length, i));
  }

  /** Index in `answer` of the latest proved id it holds, or -1. */
  anchorIn(answer: readonly (string | null)[]): number {
    let best = -1;
    let bestPosition = -1;
    for (let index = 0; index < answer.length; index += 1) {
      const id = answer[index];
      const position = id == null ? undefined : this.position.get(id);
      if (position !== undefined && position > bestPosition) {
        best = index;
        bestPosition = position;
      }
    }
    return best;
  }

  /**
   * Proves `after` as following `anchor`: ids proved after `anchor` that this answer does not hold
   * between (deleted, or pushed further back) are let go; they stay read, only no longer an anchor.
   */
  continueFrom(anchor: string, after: readonly string[]): void {
    const position = this.position.get(anchor);
    if (position === undefined) throw new Error(`ProvedChain: ${anchor} is not proved`);
    const keep = position - this.dropped + 1;
    this.ids.slice(keep).forEach((id, i) => {
      if (this.position.get(id) === this.dropped + keep + i) this.position.delete(id);
    });
    this.ids.length = keep;
    this.extend(after);
  }

  private extend(after: readonly string[]): void {
    for (const id of after) {
      // An item whose place changed (its sort key did) is proved at its new place only.
      this.position.set(id, this.dropped + this.ids.length);
      this.ids.push(id);
    }
    const excess = this.ids.length - this.capacity;
    if (excess > 0) {
      this.ids.slice(0, excess).forEach((id, i) => {
        if (this.position.get(id) === this.dropped + i) this.position.delete(id);
      });
      this.ids = this.ids.slice(excess);
      this.dropped += excess;
    }
  }

  /** The position of the `index`-th of the last `count` ids. */
  private at(count: number, index: number): number {
    return this.dropped + this.ids.length - count + index;
  }
}
