import type { Received } from './page.js';

/**
 * Every reading of one page: each id once (in the order first seen, with its latest values), and the
 * elements without an id from the latest reading only (they cannot be matched across readings).
 */
export class PageReadings {
  private readonly byId = new Map<string, Received>();
  private unidentified: Received[] = [];
  private latest: readonly (string | null)[] = [];
  private readonly first: readonly (string | null)[];
  /** Whether the latest reading added has the same ids in the same order as the reading before it. */
  agrees = false;
  rereads = 0;

  constructor(
    readonly page: number,
    first: readonly Received[],
  ) {
    this.add(first);
    this.first = this.latest;
  }

  /** Adds a reading (an empty one, a false end, only counts as a disagreement). */
  add(reading: readonly Received[]): this {
    const ids = reading.map((received) => received.id);
    this.agrees = ids.length === this.latest.length && ids.every((id, i) => id === this.latest[i]);
    this.latest = ids;
    const unidentified = reading.filter((received) => received.id === null);
    if (reading.length > 0) this.unidentified = unidentified;
    for (const received of reading) if (received.id !== null) this.byId.set(received.id, received);
    return this;
  }

  /**
   * Whether the listing moved between the first reading and the latest: the first is not the start of
   * the latest (a reading that only leaves out the last items is a start of the whole page).
   */
  moved(): boolean {
    return !this.first.every((id, i) => id === this.latest[i]);
  }

  /** The ids of the latest reading, in order. */
  get latestIds(): readonly (string | null)[] {
    return this.latest;
  }

  get size(): number {
    return this.byId.size + this.unidentified.length;
  }

  ids(): IterableIterator<string> {
    return this.byId.keys();
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  elements(): Received[] {
    return [...this.byId.values(), ...this.unidentified];
  }
}
