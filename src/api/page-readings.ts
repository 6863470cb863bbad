import { readableId } from './item-schema.js';
import type { RawPage } from './listing-body.js';

/** One element of a page as received: parsed, with its source text. */
export interface Received {
  readonly id: string | null;
  readonly element: unknown;
  readonly text: string;
}

/** The elements of a page with their ids (null when an element has none worth reporting). */
export function receivedOf(raw: RawPage): Received[] {
  return raw.elements.map((element, index) => {
    const text = raw.texts[index] ?? '';
    return { id: readableId(element, text), element, text };
  });
}

/**
 * Every reading of one page: each id once (in the order first seen, with its latest values), and the
 * elements without an id from the latest reading only (they cannot be matched across readings).
 */
export class PageReadings {
  private readonly byId = new Map<string, Received>();
  private unidentified: Received[] = [];
  private latest: readonly (string | null)[] = [];
  rereads = 0;

  constructor(
    readonly page: number,
    first: readonly Received[],
  ) {
    this.add(first);
  }

  /** Adds a reading; true when it has the same ids in the same order as the reading before it. */
  add(reading: readonly Received[]): boolean {
    const ids = reading.map((received) => received.id);
    const agrees = ids.length === this.latest.length && ids.every((id, i) => id === this.latest[i]);
    this.latest = ids;
    const unidentified = reading.filter((received) => received.id === null);
    if (reading.length > 0) this.unidentified = unidentified;
    for (const received of reading) if (received.id !== null) this.byId.set(received.id, received);
    return agrees;
  }

  /** The ids of the latest reading, in order. */
  get latestIds(): readonly (string | null)[] {
    return this.latest;
  }

  get size(): number {
    return this.byId.size + this.unidentified.length;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  elements(): Received[] {
    return [...this.byId.values(), ...this.unidentified];
  }
}
