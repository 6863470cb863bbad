import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backlog, EndSearch } from '../../../src/api/listing/backlog.js';
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
