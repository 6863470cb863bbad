import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Decimal, parseDecimal } from '../../src/domain/decimal.js';
import type { Item } from '../../src/domain/item.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { openStore } from '../../src/store/open.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { commitItems, makeItem, tempDir } from '../store/fixtures.js';

/**
 * Properties of the diff over real stores: random snapshots committed as runs through the store's
 * own staging and commit, then compared the way `diff` and the changes feed compare them.
 */

let temp: ReturnType<typeof tempDir>;
let stores = 0;
beforeAll(() => {
  temp = tempDir('shop-sync-diff-props-');
});
afterAll(() => temp.cleanup());

const decimal = fc
  .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 99 }))
  .map(([whole, cents]) => parseDecimal(`${whole}.${String(cents).padStart(2, '0')}`) as Decimal);

/** One item's values, drawn from small ranges so that runs share items and values often. */
const itemArb = (id: string) =>
  fc
    .record({
      price: decimal,
      original_price: fc.option(decimal, { nil: null }),
      quantity: fc.integer({ min: 0, max: 3 }),
      published: fc.boolean(),
      title: fc.constantFrom('Lamp', 'Chair', '=SUM(A1)', 'Ünïcødé 茶'),
      photos: fc.array(fc.constantFrom('https://img.example/1.jpg', 'https://img.example/2.jpg'), {
        maxLength: 2,
      }),
      description: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
    })
    .map((values): Item => makeItem(id, values));

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
/** A snapshot: any subset of the ids, each with random values. */
const snapshotArb = fc
  .subarray(IDS)
  .chain((ids) => fc.tuple(...ids.map(itemArb)))
  .map((items) => items as Item[]);

/** Commits each snapshot as one run of a fresh store; returns the runs and a reader. */
async function storeOf(snapshots: readonly Item[][]) {
  stores += 1;
  const store = openStore(`${temp.dir}/store-${stores}/inventory.sqlite`);
  const runs: number[] = [];
  for (const items of snapshots) runs.push(await commitItems(store, items.length > 0 ? [items] : []));
  return { store, runs };
}

const byId = (items: Iterable<Item>) => new Map([...items].map((item) => [item.id, item]));

describe('diff properties', () => {
  it('the diff of a snapshot with itself is empty', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(snapshotArb, { minLength: 1, maxLength: 3 }), async (snapshots) => {
        const { store, runs } = await storeOf(snapshots);
        try {
          for (const run of runs) expect([...diffRuns(store, run, run)]).toEqual([]);
        } finally {
          store.close();
        }
      }),
      { numRuns: 25 },
    );
  });

  it('applying the diff from run A to run B to A’s snapshot gives B’s, through any runs between', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(snapshotArb, { minLength: 2, maxLength: 4 }), async (snapshots) => {
        const { store, runs } = await storeOf(snapshots);
        try {
          const from = runs[0] as number;
          const to = runs.at(-1) as number;
          const applied = byId(snapshotItems(store, from));
          for (const change of diffRuns(store, from, to)) {
            if (change.change === 'removed') {
              expect(applied.has(change.id)).toBe(true);
              applied.delete(change.id);
            } else {
              expect(applied.has(change.id)).toBe(change.change === 'updated');
              const after = change.after as Item;
              if (change.change === 'updated') expect(change.fields.length).toBeGreaterThan(0);
              applied.set(change.id, after);
            }
          }
          expect([...applied.values()].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual([
            ...snapshotItems(store, to),
          ]);
        } finally {
          store.close();
        }
      }),
      { numRuns: 25 },
    );
  });
});
