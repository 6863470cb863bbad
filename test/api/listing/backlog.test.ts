import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backlog, EndSearch } from '../../../src/api/listing/backlog.js';
import type { Settled } from '../../../src/api/listing/driver.js';
import type { RawPage } from '../../../src/api/listing/page-body.js';
import { ProvedWindows } from '../../../src/api/listing/proved-reader.js';
import type { ListingWindow } from '../../../src/api/listing/window.js';
import { ListingMovedError } from '../../../src/errors.js';

/** What a still listing of `length` items answers to a probe window. */
const answerOf = (length: number, start: number, perPage: number) =>
  Math.max(0, Math.min(perPage, length - start));

describe('EndSearch (plain data)', () => {
  it('finds where a still listing ends, in about 2 log2(pages ahead) windows', () => {
    const drawn = fc
      .record({ length: fc.integer({ min: 0, max: 2_000_000 }), perPage: fc.integer({ min: 2, max: 100 }) })
      .chain((c) => fc.record({ c: fc.constant(c), end: fc.integer({ min: -1, max: c.length - 1 }) }));
    fc.assert(
      fc.property(drawn, ({ c, end }) => {
        const search = new EndSearch(end, c.perPage);
        let found: number | undefined;
        let asked = 0;
        while (found === undefined) {
          const window = search.window();
          asked += 1;
          found = search.take(answerOf(c.length, window.start, c.perPage));
        }
        expect(found).toBe(c.length);
        const pagesAhead = Math.max(1, (c.length - end) / c.perPage);
        expect(asked).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(pagesAhead)) + 3);
      }),
    );
  });
});

describe('Backlog (plain data)', () => {
  /** Probes of a listing `lengthAt(n)` long at the n-th probe, the reading at `endAt(n)`, 1 s apart. */
  function probe(lengthAt: (n: number) => number, endAt: (n: number) => number, probes: number): void {
    let now = 0;
    const backlog = new Backlog(8_000, 1, () => now);
    for (let n = 0; n < probes; n += 1) {
      now += 2_000;
      for (;;) {
        const window = backlog.probe(endAt(n), 10);
        if (!window) break;
        backlog.take(answerOf(lengthAt(n), window.start, 10), endAt(n));
      }
    }
  }

  it('lets a reading on that gains on a still listing, however long', () => {
    expect(() =>
      probe(
        () => 1_000_000,
        (n) => n * 100,
        100,
      ),
    ).not.toThrow();
  });

  it('fails with LISTING_MOVED once the backlog has not shrunk for the budget', () => {
    expect(() =>
      probe(
        (n) => 1_000 + n * 200,
        (n) => n * 100,
        100,
      ),
    ).toThrow(ListingMovedError);
  });

  it('asks a probe dropped with the windows in flight again, and its search still ends', () => {
    const now = 2_000;
    const backlog = new Backlog(8_000, 1, () => now);
    let asked = 0;
    // Every probe window dropped once before it is answered, as a listing whose end moves after every
    // answer drops the windows in flight: started over each time, the search would never end.
    for (let window = backlog.probe(0, 10); window && asked < 100; window = backlog.probe(0, 10)) {
      backlog.dropped();
      expect(backlog.probe(0, 10)).toEqual(window);
      backlog.take(answerOf(5_000, window.start, 10), 0);
      asked += 1;
    }
    expect(asked).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(500)) + 3);
  });
});

describe('a probe beside the windows (plain data)', () => {
  // The windows that confirm an end wait for the windows in flight to land; a probe in flight was counted
  // among them, so that no end was confirmed while a search went on, the listing moving after each of
  // its answers (issue 30: a busy end then took longer than the budget).
  it('reads a still listing to its end while a probe is still unanswered', () => {
    let now = 0;
    const budgetMs = 4_000;
    const planner = new ProvedWindows(
      { perPage: 40, maxInFlight: 4, maxRequests: 1_000, budgetMs },
      () => now,
    );
    const ids = Array.from({ length: 100 }, (_, i) => `i${i}`);
    const answer = (window: ListingWindow): Settled<RawPage> => ({
      ok: true,
      value: {
        elements: ids
          .slice(window.start, window.start + window.perPage)
          .map((id) => ({ json: { id }, raw: '', unchanged: { hash: 1, version: 1 } })),
      },
    });
    // A probe falls due at the first plan; its answer is never given.
    now = budgetMs;
    let probing = false;
    const queue: ListingWindow[] = [];
    const yielded = new Set<string>();
    for (let answers = 0; answers < 100; answers += 1) {
      const inFlight = queue.length + (probing ? 1 : 0);
      const planned = planner.plan(Math.max(0, 4 - inFlight), inFlight);
      // The probe comes first of a plan when none is in flight (it is due, or its search goes on); it
      // stays in flight.
      queue.push(...planned.slice(probing ? 0 : 1));
      probing = true;
      const head = queue.shift();
      if (!head) throw new Error('the reading waits for the probe');
      const step = planner.take(head, answer(head));
      for (const page of step.pages) for (const item of page.unchanged ?? []) yielded.add(item.id);
      if (step.done) {
        expect(ids.filter((id) => !yielded.has(id))).toEqual([]);
        return;
      }
      if (step.dropInFlight) {
        queue.length = 0;
        probing = false;
      }
    }
    throw new Error('the reading did not end');
  });
});
