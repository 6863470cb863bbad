import { expect, it } from 'vitest';
import { heldSummaryOf } from '../../jobs/queue.js';
import type { HeldSummary } from '../../src/sync/index.js';

/**
 * A failed sync job is a held run, for `trigger --wait`, only when its failure is that run's sentence:
 * a job whose earlier attempt held a run (and stalled before it was failed) and whose last attempt failed
 * otherwise still has the held summary as its progress, and must be reported as the failure it is.
 */

const held: HeldSummary = {
  shop: 'north',
  run: 4,
  status: 'held',
  held: 'run 4 would remove 120 of 300 items (40 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged',
  pages: 5,
  items: 180,
  added: 0,
  updated: 0,
  removed: 120,
  invalid: 0,
  duration_ms: 600,
};
const sentence = `Shop north: ${held.held}.`;

it('is the held summary when the job failed with its sentence', () => {
  expect(heldSummaryOf({ progress: { held }, failedReason: sentence })).toEqual(held);
});

it('is nothing when the job failed for another reason, or its progress is only how far it got', () => {
  const rejected = 'Shop north: the marketplace refused the credentials (HTTP 401).';
  expect(heldSummaryOf({ progress: { held }, failedReason: rejected })).toBeUndefined();
  expect(
    heldSummaryOf({
      progress: { phase: 'reading', pages: 3, items: 150, invalid: 0 },
      failedReason: sentence,
    }),
  ).toBeUndefined();
  expect(heldSummaryOf({ progress: 0, failedReason: sentence })).toBeUndefined();
  expect(heldSummaryOf({ progress: { held: null }, failedReason: sentence })).toBeUndefined();
});
