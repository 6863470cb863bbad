import { describe, expect, it } from 'vitest';
import { windowAfter } from '../../../src/api/listing/window.js';

/**
 * Issue 30 asks for a still listing read in at most 1.05x the pages. The reader proves that nothing
 * slipped past by starting every window inside what it has read (one item of overlap on a still
 * listing), and `page`/`per_page` can only ask for windows that start at a multiple of their size. These
 * tests hold the planner's windows to the fewest any reader of that kind could send, found by exhaustive
 * search, and pin what that fewest is: about 1.14x the pages, whatever the planner.
 */

/** The fewest windows of at most `cap` items, each after the first starting inside what was read, that read offsets 0 to `items - 1`. */
function fewestOverlappingWindows(items: number, cap: number): number {
  const fewest = new Array<number>(items).fill(Number.POSITIVE_INFINITY);
  fewest[Math.min(cap, items) - 1] = 1;
  for (let end = 0; end < items - 1; end += 1) {
    const sent = fewest[end] ?? Number.POSITIVE_INFINITY;
    if (sent === Number.POSITIVE_INFINITY) continue;
    for (let perPage = 2; perPage <= cap; perPage += 1) {
      const reach = Math.min(Math.floor(end / perPage) * perPage + perPage - 1, items - 1);
      if (reach > end && sent + 1 < (fewest[reach] ?? 0)) fewest[reach] = sent + 1;
    }
  }
  return fewest[items - 1] ?? Number.POSITIVE_INFINITY;
}

/** The windows the planner chains on a still listing: page 1, then each after the last offset read, one item of overlap. */
function plannedWindows(items: number, cap: number): number {
  let end = Math.min(cap, items) - 1;
  let sent = 1;
  while (end < items - 1) {
    const window = windowAfter(end, 1, cap);
    if (!window) throw new Error(`no window after offset ${end}`);
    end = window.start + window.perPage - 1;
    sent += 1;
  }
  return sent;
}

describe('the windows of a still listing', () => {
  it.each([
    [20_000, 100],
    [100_000, 100],
    [5_000, 40],
    [1_234, 25],
  ])(
    '%i items at pages of %i: the planner sends the fewest overlapping windows any reader could',
    (items, cap) => {
      expect(plannedWindows(items, cap)).toBe(fewestOverlappingWindows(items, cap));
    },
  );

  it('cannot come within 1.05x of the pages: the fewest overlapping windows are 1.14x them', () => {
    expect(fewestOverlappingWindows(20_000, 100)).toBe(228);
    expect(fewestOverlappingWindows(100_000, 100)).toBe(1_143);
  });
});
