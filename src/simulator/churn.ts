import type { Catalogue } from './catalogue.js';
import { Prng } from './prng.js';
import type { SimRecord } from './record.js';
import { type ListingQuery, matchesFilters } from './request-query.js';
import type { ChurnChange, ChurnFault } from './types.js';

/** Churn changes kept for `churnLog` (the oldest go first). */
const LOG_KEPT = 200_000;

/** What one churn event does, as positions in the listing the response was read from. */
export interface ChurnPicks {
  deleteAt: readonly number[];
  insertAt: readonly number[];
}

/** `n` distinct integers of [low, high), fewer when the range is smaller. */
function distinct(rng: Prng, low: number, high: number, n: number): number[] {
  const span = high - low;
  if (span <= 0 || n <= 0) return [];
  if (n >= span) return Array.from({ length: span }, (_, i) => low + i);
  const picked = new Set<number>();
  while (picked.size < n) picked.add(low + rng.int(span));
  return [...picked];
}

/**
 * The churn fault's state: which response it has reached, how many events it made, and the log of every
 * change. Seeded, so the same seed and the same sequence of requests make the same changes.
 */
export class Churn {
  private responses = 0;
  private events = 0;
  private seq = 0;
  private readonly log: ChurnChange[] = [];
  private readonly rng: Prng;

  constructor(
    seed: number,
    private readonly catalogue: Catalogue,
  ) {
    this.rng = new Prng(seed ^ 0xc4a7);
  }

  /** Churn was set again: its responses are counted from here. */
  restart(): void {
    this.responses = 0;
    this.events = 0;
  }

  /**
   * A listing response was computed from `listing` (what the query `query` listed), its page ending at
   * `end`: makes the event due after it, if any.
   */
  afterResponse(
    churn: Readonly<ChurnFault>,
    query: ListingQuery,
    listing: readonly SimRecord[],
    end: number,
  ): ChurnChange[] {
    this.responses += 1;
    const due =
      this.responses >= churn.from &&
      (this.responses - churn.from) % churn.every === 0 &&
      (churn.times === 0 || this.events < churn.times);
    if (!due) return [];
    this.events += 1;
    const read = Math.min(end, listing.length);
    const picks: ChurnPicks = {
      deleteAt: [
        ...distinct(this.rng, 0, read, churn.deleteBehind),
        ...distinct(this.rng, read, listing.length, churn.deleteAhead),
        ...churn.deleteAt,
      ],
      insertAt: [
        ...Array.from({ length: read > 0 ? churn.insertBehind : 0 }, () => this.rng.int(read)),
        ...Array.from({ length: churn.insertAhead }, () => read + this.rng.int(listing.length - read + 1)),
        ...churn.insertAt,
      ],
    };
    return this.apply(query, listing, read, this.responses, picks);
  }

  /**
   * One event: new items first, between the neighbours the listing had (so that a deletion in the same
   * event cannot move them), then the deletions, each of the item that was at its position.
   */
  apply(
    query: ListingQuery,
    listing: readonly SimRecord[],
    read: number,
    response: number,
    picks: ChurnPicks,
  ): ChurnChange[] {
    // The newest-first listing is the catalogue's own array, which the changes below move.
    const before = listing.slice();
    const key = `${query.order}|${query.filterKey}`;
    const victims = new Map<SimRecord, number>();
    for (const position of picks.deleteAt) {
      const record = before[position];
      if (record && !victims.has(record)) victims.set(record, position);
    }
    const changes: ChurnChange[] = [];
    const note = (kind: ChurnChange['kind'], id: string, position: number): void => {
      this.seq += 1;
      const change: ChurnChange = {
        seq: this.seq,
        kind,
        id,
        response,
        position,
        side: position < read ? 'behind' : 'ahead',
        listing: key,
        atMs: Date.now(),
      };
      changes.push(change);
      if (this.log.length === LOG_KEPT) this.log.shift();
      this.log.push(change);
    };
    const accept = (record: SimRecord) => matchesFilters(record, query.filters);
    for (const position of picks.insertAt) {
      if (position > before.length) continue;
      const inserted =
        query.order === 'newest'
          ? this.catalogue.addBetween(before[position - 1], before[position], accept, this.rng)
          : // In another order a new item lands where its values sort: the front of the time order.
            this.catalogue.addBetween(undefined, this.catalogue.records[0], accept, this.rng);
      if (inserted) note('insert', inserted.id, position);
    }
    for (const [record, position] of victims) {
      if (!this.catalogue.get(record.id)) continue;
      this.catalogue.remove(record);
      note('delete', record.id, position);
    }
    return changes;
  }

  changesSince(since: number): ChurnChange[] {
    return this.log.filter((change) => change.seq > since).map((change) => ({ ...change }));
  }
}
