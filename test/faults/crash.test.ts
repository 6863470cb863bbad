import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrashCase, runCrashCase } from '../../bench/faults/harness.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';

/**
 * A sync killed with SIGKILL at each point it passes (reading, confirming removals, the commit, each
 * feed, the switch of the feeds, their publication) must leave an intact store and the last published
 * feeds whole, and the next sync must converge to the marketplace and publish every change since.
 */
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ items: 400, seed: 8 });
});
afterAll(() => sim.close());

const mutation = { prices: 5, quantities: 5, publish: 2, titles: 2, add: 4, remove: 4 };
const cases: CrashCase[] = [
  { point: 'page-staged', nth: 1, mutation },
  // Pages are staged ten at a time: at ten items a page this is the third batch of forty pages.
  { point: 'page-staged', nth: 3, mutation, perPage: 10 },
  { point: 'read', nth: 1, mutation },
  { point: 'removals-confirmed', nth: 1, mutation },
  { point: 'committed', nth: 1, mutation },
  { point: 'feed-prepared', nth: 1, mutation },
  { point: 'feed-prepared', nth: 3, mutation },
  { point: 'feeds-renamed', nth: 1, mutation },
  { point: 'published', nth: 1, mutation },
];
/** A first sync bulk-loads (src/store/bulk-load.ts): killed while it does, and once it has ended it. */
const firstSyncCases: CrashCase[] = [
  { point: 'page-staged', nth: 1, mutation, firstSync: true },
  { point: 'page-staged', nth: 3, mutation, perPage: 10, firstSync: true },
  { point: 'read', nth: 1, mutation, firstSync: true },
];

describe('a sync killed at any point', () => {
  const losesNothing = async (c: CrashCase) => {
    const outcome = await runCrashCase(sim, c);
    expect(outcome.problems).toEqual([]);
    expect(outcome.killed).toBe(true);
    expect(outcome.itemsCompared).toBe(sim.truth().length);
  };
  it.each(cases)('at $point #$nth loses nothing', losesNothing);
  it.each(firstSyncCases)('a first sync, at $point #$nth, loses nothing', losesNothing);
});
