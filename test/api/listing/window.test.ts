import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ListingWindow, windowAfter, windowAt } from '../../../src/api/listing/window.js';

/**
 * windowAfter as its comment defines it, by listing every candidate: for the largest overlap that
 * affords one, the window reaching furthest past `end`, the larger page on a tie (`maxPerPage` first).
 */
function definedWindowAfter(end: number, overlap: number, maxPerPage: number): ListingWindow | null {
  for (let shared = overlap; shared >= 1; shared -= 1) {
    const from = Math.max(0, end - shared + 1);
    const sizes = [
      maxPerPage,
      ...Array.from({ length: Math.max(0, maxPerPage - 2) }, (_, i) => maxPerPage - 1 - i),
    ];
    const reach = (perPage: number) => windowAt(Math.floor(from / perPage) + 1, perPage);
    const gains = sizes.map((perPage) => {
      const window = reach(perPage);
      return window.start + window.perPage - 1 - end;
    });
    const most = Math.max(...gains);
    if (most > 0) return reach(sizes[gains.indexOf(most)] as number);
  }
  return null;
}

describe('windowAfter', () => {
  it('is the window its definition names, for every end, overlap and page size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1, max: 5_000 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 120 }),
        (end, overlap, maxPerPage) => {
          expect(windowAfter(end, overlap, maxPerPage)).toEqual(definedWindowAfter(end, overlap, maxPerPage));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('starts a listing at page 1 and ends a window past the proved end', () => {
    expect(windowAfter(-1, 1, 100)).toEqual({ page: 1, perPage: 100, start: 0 });
    expect(windowAfter(-1, 1, 1)).toEqual({ page: 1, perPage: 1, start: 0 });
    expect(windowAfter(19, 1, 100)).toEqual({ page: 1, perPage: 100, start: 0 });
    expect(windowAfter(99, 1, 100)).toEqual({ page: 2, perPage: 99, start: 99 });
  });
});
