/**
 * `npm run soak -- --minutes N [--seed S]`: the fault suite's crash cases, over and over with random
 * seeds, kill points, catalogue changes, marketplace faults, read-ahead and (in half the cases) churn
 * while the crashing sync and its recovery read the listing, until the time is up; after each case, a few
 * random hostile listings read to their end as the listing property draws them (`listing-draws.ts`):
 * a property runs a fixed seed, and other seeds found listings read without their last items. Prints
 * what it did (kills per point, faults served, items and changes compared, survivors lost over the
 * churned cases' kills, listings read and items they missed) and every promise broken; exits 1 if
 * anything was lost.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import type { ChurnFault, FaultKind, Faults, Mutation } from '../src/simulator/index.js';
import { startSimulator } from '../src/simulator/index.js';
import { Prng } from '../src/simulator/prng.js';
import type { SyncPoint } from '../src/sync/index.js';
import { CRASH_POINTS, type CrashCase, runCrashCase } from './faults/harness.js';
import {
  type DrawnListing,
  growingListing,
  hostileListing,
  missedIds,
  readThrough,
} from './faults/listing-draws.js';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '1' }, seed: { type: 'string' } },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, got ${values.minutes}`);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);

/** Faults the retry policy absorbs: a crash case's sync must still complete through them. */
function randomFaults(rng: Prng): Partial<Faults> {
  const rate = (max: number) => (rng.next() < 0.5 ? 0 : rng.next() * max);
  return {
    rate429: rate(0.05),
    rate5xx: rate(0.05),
    dropRate: rate(0.03),
    malformedRate: rate(0.03),
    shortPageRate: rate(0.1),
    lossyShortPageRate: rate(0.05),
    falseEndRate: rate(0.03),
  };
}

function randomMutation(rng: Prng): Mutation {
  return {
    prices: rng.int(8),
    quantities: rng.int(8),
    publish: rng.int(3),
    titles: rng.int(3),
    add: rng.int(6),
    remove: rng.int(6),
    representation: rng.int(5),
  };
}

/** Half the cases sell and list items while they sync (from the crashing sync to the end of its recovery). */
function randomChurn(rng: Prng): Partial<ChurnFault> | undefined {
  if (rng.next() < 0.5) return undefined;
  // As many insertions as deletions on average, and a bounded number of events: the catalogue lives on
  // from case to case, and a reader that asks more requests must not empty it.
  return {
    from: 1 + rng.int(4),
    every: 1 + rng.int(3),
    times: 10 + rng.int(30),
    deleteBehind: rng.int(4),
    deleteAhead: rng.int(2),
    insertBehind: rng.int(4),
    insertAhead: rng.int(2),
  };
}

function randomCase(rng: Prng, items: number, perPage: number): CrashCase {
  const point = CRASH_POINTS[rng.int(CRASH_POINTS.length)] as SyncPoint;
  // Pages are staged in batches of up to ten: a sync passes 'page-staged' about once per ten pages.
  const batches = Math.max(1, Math.floor(items / perPage / 10));
  const nth = point === 'page-staged' ? 1 + rng.int(batches) : point === 'feed-prepared' ? 1 + rng.int(3) : 1;
  const churn = randomChurn(rng);
  const maxInFlight = rng.pick([1, 2, 8, 32, 64]);
  return {
    point,
    nth,
    perPage,
    mutation: randomMutation(rng),
    faults: randomFaults(rng),
    churn,
    maxInFlight,
  };
}

/** Random listings read after each crash case: a crash case takes seconds, a listing a fraction of one. */
const LISTINGS_PER_CASE = 4;

/** What the listing draws found: how many were read, why readings failed, and each one read incompletely. */
interface ListingTally {
  read: number;
  /** A reading that failed is no loss (a sync would fail honestly), but one the data allowed to complete. */
  failed: Map<string, number>;
  lost: string[];
}

/** Reads `count` listings drawn from `seed` (one in four growing while it is read) into `tally`. */
async function readListings(seed: number, count: number, tally: ListingTally): Promise<void> {
  const drawn = fc.sample(fc.oneof({ weight: 3, arbitrary: hostileListing }, growingListing), {
    seed,
    numRuns: count,
  });
  for (const listing of drawn) {
    tally.read += 1;
    try {
      const missed = missedIds(await readThrough(listing)).length;
      if (missed > 0) tally.lost.push(lostListing(listing, missed));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      tally.failed.set(reason, (tally.failed.get(reason) ?? 0) + 1);
    }
  }
}

const failedCount = (tally: ListingTally) => [...tally.failed.values()].reduce((a, b) => a + b, 0);

function lostListing(listing: DrawnListing, missed: number): string {
  return `listing ${JSON.stringify(listing)}: read to its end without ${missed} of its items`;
}

async function main(): Promise<void> {
  const rng = new Prng(seed);
  const items = 200 + rng.int(600);
  const sim = await startSimulator({ items, seed });
  const kills = new Map<SyncPoint, number>();
  const served = new Map<FaultKind, number>();
  const broken: string[] = [];
  let cases = 0;
  let notReached = 0;
  let itemsCompared = 0;
  let changesCompared = 0;
  let churnCases = 0;
  let churnKills = 0;
  let survivorsChecked = 0;
  let survivorsLost = 0;
  const listings: ListingTally = { read: 0, failed: new Map(), lost: [] };
  const deadline = Date.now() + minutes * 60_000;
  process.stdout.write(`soak: seed ${seed}, ${items} items, ${minutes} min\n`);
  try {
    while (Date.now() < deadline) {
      // Churn is balanced only on average: a run of cases that deleted more than they listed would
      // empty the catalogue, so each case starts from the catalogue's first size.
      const missing = items - sim.truth().length;
      if (missing > 0) sim.mutate({ add: missing });
      const c = randomCase(rng, sim.truth().length, 20 + rng.int(60));
      const outcome = await runCrashCase(sim, c);
      cases += 1;
      if (outcome.killed) kills.set(c.point, (kills.get(c.point) ?? 0) + 1);
      else notReached += 1;
      for (const [kind, count] of Object.entries(outcome.faultsServed) as [FaultKind, number][])
        served.set(kind, (served.get(kind) ?? 0) + count);
      itemsCompared += outcome.itemsCompared;
      if (c.churn) {
        churnCases += 1;
        if (outcome.killed) churnKills += 1;
        survivorsChecked += outcome.survivors;
        survivorsLost += outcome.survivorsLost;
      }
      changesCompared += outcome.changesCompared;
      for (const problem of outcome.problems) broken.push(`case ${cases} (${c.point} #${c.nth}): ${problem}`);
      await readListings(rng.int(2 ** 30), LISTINGS_PER_CASE, listings);
    }
  } finally {
    await sim.close();
  }
  const killCount = [...kills.values()].reduce((a, b) => a + b, 0);
  const lines = [
    `cases: ${cases} (${killCount} killed, ${notReached} finished before their kill point)`,
    `kills per point: ${CRASH_POINTS.map((p) => `${p} ${kills.get(p) ?? 0}`).join(', ')}`,
    `faults served: ${[...served].map(([kind, n]) => `${kind} ${n}`).join(', ')}`,
    `items compared: ${itemsCompared}; changes compared: ${changesCompared}`,
    `churn cases: ${churnCases} (${survivorsChecked} survivors checked)`,
    `survivors lost: ${survivorsLost} over ${churnKills} kills`,
    `listings read: ${listings.read} (${listings.lost.length} completed without some items, ${failedCount(listings)} failed)`,
    ...[...listings.failed].map(([reason, n]) => `  failed ${n}x: ${reason}`),
    `lost or wrong: ${broken.length + listings.lost.length}`,
    ...[...broken, ...listings.lost].slice(0, 50),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (broken.length > 0 || listings.lost.length > 0 || survivorsLost > 0) process.exitCode = 1;
}

await main();
