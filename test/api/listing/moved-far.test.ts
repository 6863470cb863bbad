import { describe, expect, it } from 'vitest';
import type { MarketplaceClient } from '../../../src/api/client.js';
import type { ChurnFault, Simulator } from '../../../src/simulator/index.js';
import { startSimulator } from '../../../src/simulator/index.js';
import { clientFor, closedAfterEach, TEST_RETRY } from '../helpers.js';

const live = closedAfterEach<Simulator>();

/** Pages read between two bursts. */
const BURST_EVERY = 12;

/**
 * Reads the listing one request at a time while `churn` moves it after every answer, and, `bursts` times
 * (every `BURST_EVERY` pages, once the reading is `size` items in), moves it at once by `size` items spread
 * over what was read: as far as a loaded server moves it when it answers the read-ahead that a reader
 * dropped, each answer one more move. No request is in flight while a page is taken, so the burst lands
 * between two answers and the reading is the same every run. The ids read, the survivors (listed from the
 * start to the end), every id ever listed, and how many bursts there were.
 */
async function readThroughBursts(
  sim: Simulator,
  churn: Partial<ChurnFault>,
  burst: 'insertAt' | 'deleteAt',
  size: number,
  bursts: number,
): Promise<{ read: Set<string>; survivors: string[]; everListed: Set<string>; burst: number }> {
  const client = live.client as MarketplaceClient;
  const atStart = sim.listedIds();
  const since = sim.churnLog().at(-1)?.seq ?? 0;
  const read = new Set<string>();
  let made = 0;
  let lastBurst = 0;
  sim.setFaults({ churn });
  try {
    for await (const page of client.readItems({ perPage: 40, maxInFlight: 1 })) {
      for (const item of page.unchanged ?? []) read.add(item.id);
      for (const item of page.items) read.add(item.id);
      if (made === bursts || page.page - lastBurst < BURST_EVERY) continue;
      // Where the reading stands: the furthest item of the page still listed (churn sold some).
      const listed = sim.listedIds();
      const reached = Math.max(...page.items.map((item) => listed.indexOf(item.id)));
      if (reached < size) continue;
      sim.churnNow({ [burst]: Array.from({ length: size }, (_, i) => Math.floor((i * reached) / size)) });
      made += 1;
      lastBurst = page.page;
    }
  } finally {
    sim.setFaults({ churn: null });
  }
  const changes = sim.churnLog(since);
  const deleted = new Set(changes.filter((change) => change.kind === 'delete').map((change) => change.id));
  const everListed = new Set([...atStart, ...changes.map((change) => change.id)]);
  return { read, survivors: atStart.filter((id) => !deleted.has(id)), everListed, burst: made };
}

/**
 * A listing that moved, between two answers, further than the windows look for what they had proved
 * (issue 30 under load: at read-ahead 64, a server answered the dozens of windows the reader had dropped,
 * each answer one more change, and the proved items were then hundreds of items away, forward when items
 * were listed before them, back when items before them were sold). The windows found them only behind
 * the proved end and no further than 4 pages and 64 items, so they read the same windows until they gave
 * up, twice, and the page-by-page passes could not complete on a listing that never holds still.
 */
describe('a listing that moved further than the windows look for what they proved', () => {
  it.each([
    ['forward: 300 items listed before the reader', 'insertAt', { deleteBehind: 1, insertBehind: 4 }],
    [
      'back: 300 items before the reader sold',
      'deleteAt',
      { deleteBehind: 4, deleteAhead: 2, insertAhead: 4 },
    ],
  ] as const)('is read with every survivor, again and again %s', async (_, burst, churn) => {
    const sim = await startSimulator({ items: 1_500, seed: 30 });
    live.server = sim;
    live.client = clientFor(sim, { retry: { ...TEST_RETRY, maxAttempts: 60 } });
    const reading = await readThroughBursts(sim, churn, burst, 300, 3);
    expect(reading.burst).toBe(3);
    const { read, survivors, everListed } = reading;
    expect(survivors.filter((id) => !read.has(id))).toEqual([]);
    expect([...read].filter((id) => !everListed.has(id))).toEqual([]);
  });
});
