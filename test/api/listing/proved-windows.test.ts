import { describe, expect, it } from 'vitest';
import type { Settled } from '../../../src/api/listing/driver.js';
import type { RawPage } from '../../../src/api/listing/page-body.js';
import { ProvedWindows } from '../../../src/api/listing/proved-reader.js';
import type { ListingWindow } from '../../../src/api/listing/window.js';

/**
 * The window planner, with no I/O, against a listing in memory that a churn may change after every
 * response (deletions and insertions behind and ahead of the page just served, up to a quarter of a page in
 * all). The server answers every window sent before the planner takes the oldest answer (the most any answer
 * can lag behind the listing at a read-ahead).
 */
interface Case {
  readonly items: number;
  readonly perPage: number;
  readonly maxInFlight: number;
  readonly churn: { deleteBehind: number; deleteAhead: number; insertBehind: number; insertAhead: number };
  readonly seed: number;
}

/** A listing that changes after each response as `churn` says, at most a quarter of a page in all. */
class MovingListing {
  ids: string[];
  private next = 0;
  private random: () => number;
  readonly deleted = new Set<string>();

  constructor(
    items: number,
    private readonly c: Case,
  ) {
    this.ids = Array.from({ length: items }, () => this.newId());
    let state = c.seed || 1;
    this.random = () => {
      state = (state * 48271) % 2147483647;
      return state / 2147483647;
    };
  }

  answer(window: ListingWindow): RawPage {
    const slice = this.ids.slice(window.start, window.start + window.perPage);
    this.churn(Math.min(window.start + slice.length, this.ids.length));
    return { elements: slice.map((id) => ({ json: { id }, raw: '', unchanged: { hash: 1, version: 1 } })) };
  }

  private churn(read: number): void {
    const { deleteBehind, deleteAhead, insertBehind, insertAhead } = this.c.churn;
    const budget = Math.floor(this.c.perPage / 4);
    let left = budget;
    const take = (n: number) => {
      const k = Math.min(n, left);
      left -= k;
      return k;
    };
    const at = (low: number, high: number) => low + Math.floor(this.random() * Math.max(0, high - low));
    let behind = read;
    for (let n = take(deleteBehind); n > 0 && behind > 0; n -= 1) {
      const [gone] = this.ids.splice(at(0, behind), 1);
      if (gone !== undefined) this.deleted.add(gone);
      behind -= 1;
    }
    for (let n = take(deleteAhead); n > 0 && this.ids.length > behind; n -= 1) {
      const [gone] = this.ids.splice(at(behind, this.ids.length), 1);
      if (gone !== undefined) this.deleted.add(gone);
    }
    for (let n = take(insertBehind); n > 0; n -= 1) this.ids.splice(at(0, behind + 1), 0, this.newId());
    for (let n = take(insertAhead); n > 0; n -= 1)
      this.ids.splice(at(behind, this.ids.length + 1), 0, this.newId());
  }

  private newId(): string {
    this.next += 1;
    return `i${this.next}`;
  }
}

/** Reads `listing` with the planner; the ids it yielded, and the requests it made. */
function readAll(
  listing: MovingListing,
  c: Case,
  maxRequests: number,
  listedBefore?: number,
): { yielded: Set<string>; requests: number; windows: ListingWindow[]; mostInFlight: number } {
  const planner = new ProvedWindows({
    perPage: c.perPage,
    maxInFlight: c.maxInFlight,
    maxRequests,
    budgetMs: 120_000,
    listedBefore,
  });
  const queue: { window: ListingWindow; answer?: Settled<RawPage> }[] = [];
  const yielded = new Set<string>();
  const windows: ListingWindow[] = [];
  let requests = 0;
  let mostInFlight = 0;
  for (;;) {
    const room = c.maxInFlight - queue.length;
    for (const window of planner.plan(Math.max(0, room), queue.length)) {
      queue.push({ window });
      windows.push(window);
    }
    mostInFlight = Math.max(mostInFlight, queue.length);
    for (const entry of queue) {
      if (entry.answer) continue;
      requests += 1;
      entry.answer = { ok: true, value: listing.answer(entry.window) };
    }
    const head = queue.shift();
    if (!head?.answer) throw new Error('the planner planned nothing');
    const step = planner.take(head.window, head.answer);
    for (const page of step.pages) for (const item of page.unchanged ?? []) yielded.add(item.id);
    if (step.done) return { yielded, requests, windows, mostInFlight };
    if (step.dropInFlight) queue.length = 0;
  }
}

describe('the window planner on a listing in memory', () => {
  it('reads a still listing in the fewest windows that overlap, plus the end and what was read ahead past it', () => {
    for (const [items, perPage] of [
      [20_000, 100],
      [1_500, 40],
    ] as const) {
      const c: Case = {
        items,
        perPage,
        maxInFlight: 8,
        churn: { deleteBehind: 0, deleteAhead: 0, insertBehind: 0, insertAhead: 0 },
        seed: 1,
      };
      const { yielded, requests } = readAll(new MovingListing(items, c), c, 10_000);
      expect(yielded.size).toBe(items);
      // Five to confirm the end (the pages after two windows that ended there, each asked twice), and at
      // most a window in flight of those read ahead past it.
      expect(requests).toBeLessThanOrEqual(fewestOverlappingWindows(items, perPage) + 5 + c.maxInFlight);
    }
  });
});

describe('the window planner told how many items the last complete run listed', () => {
  const still = (items: number): Case => ({
    items,
    perPage: 100,
    maxInFlight: 8,
    churn: { deleteBehind: 0, deleteAhead: 0, insertBehind: 0, insertAhead: 0 },
    seed: 1,
  });

  it('reads an unchanged listing in the fewest windows that overlap and those that confirm the end, none read ahead past it', () => {
    for (const items of [20, 2_000, 20_000]) {
      const c = still(items);
      const { yielded, requests, windows } = readAll(new MovingListing(items, c), c, 10_000, items);
      expect(yielded.size).toBe(items);
      expect(requests).toBeLessThanOrEqual(fewestOverlappingWindows(items, c.perPage) + 6);
      // Past the last item, only the pages after windows that held it, at their page sizes.
      const afterTheLast = (window: ListingWindow) => (window.page - 2) * window.perPage <= items - 1;
      expect(windows.filter((window) => window.start >= items && !afterTheLast(window))).toEqual([]);
    }
  });

  it('reads a listing that grew far past it whole, as many windows in flight as a first sync', () => {
    const c = still(20_000);
    const grown = readAll(new MovingListing(c.items, c), c, 10_000, 100);
    const first = readAll(new MovingListing(c.items, c), c, 10_000);
    expect(grown.yielded.size).toBe(c.items);
    expect(grown.mostInFlight).toBe(c.maxInFlight);
    expect(grown.requests).toBeLessThanOrEqual(first.requests);
  });

  it('reads a listing that shrank whole', () => {
    const c = still(1_500);
    const { yielded, requests } = readAll(new MovingListing(c.items, c), c, 10_000, 20_000);
    expect(yielded.size).toBe(c.items);
    expect(requests).toBeLessThanOrEqual(fewestOverlappingWindows(c.items, c.perPage) + 5 + c.maxInFlight);
  });
});

/**
 * The fewest windows of at most `perPage` items, each sharing an item with the one before, that read
 * `items` items: a window of `page`/`per_page` starts at a multiple of its size, so this is more than
 * the pages (228 for 200 pages of 100). A search over every size at every offset.
 */
function fewestOverlappingWindows(items: number, perPage: number): number {
  const fewest = new Array<number>(items + 1).fill(Number.POSITIVE_INFINITY);
  fewest[0] = 0;
  for (let read = 0; read < items; read += 1) {
    const count = fewest[read] as number;
    if (count === Number.POSITIVE_INFINITY) continue;
    const end = read - 1;
    for (let size = 2; size <= perPage; size += 1) {
      const start = end < 0 ? 0 : Math.floor(end / size) * size;
      const reach = Math.min(start + size, items);
      if (reach > read && (fewest[reach] as number) > count + 1) fewest[reach] = count + 1;
    }
  }
  return fewest[items] as number;
}
