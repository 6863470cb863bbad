import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketplaceClient } from '../../src/api/client.js';
import type { Item } from '../../src/domain/item.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { commitRun } from '../../src/store/commit.js';
import { beginRun } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stagePages } from '../../src/store/staging.js';
import { confirmRemovals, type RemovalSources } from '../../src/sync/confirm-removals.js';
import { commitItems, freshStorePerTest } from '../store/fixtures.js';

let sim: Simulator;
let client: MarketplaceClient;
const sandbox = freshStorePerTest();

beforeAll(async () => {
  sim = await startSimulator({ items: 60, seed: 5 });
  client = new MarketplaceClient({ ...sim.credentials, baseUrl: sim.baseUrl, allowInsecure: true });
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

const QUERY = { perPage: 20 };

async function listing(): Promise<Item[][]> {
  const pages: Item[][] = [];
  for await (const page of client.readItems(QUERY)) pages.push(page.items);
  return pages;
}

/** A run that read only the first page of the listing: the items of the other pages look removed. */
async function runMissingPages(pages: Item[][]): Promise<number> {
  await commitItems(sandbox.store, pages);
  const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
  stagePages(sandbox.store, run, [{ page: 1, items: pages[0] ?? [], invalid: [] }], () => undefined);
  return run;
}

const sources = (relistCost: number, byUrl: boolean): RemovalSources => ({
  fetchItem: byUrl ? (url) => client.fetchItem(url) : undefined,
  relist: () => client.readItems(QUERY),
  relistCost,
});

describe('confirmRemovals', () => {
  it('finds by their URLs the items a run missed that are still there, and retires nothing', async () => {
    const pages = await listing();
    const run = await runMissingPages(pages);
    expect(await confirmRemovals(sandbox.store, run, sources(100, true))).toEqual({
      stillPresent: 40,
      gone: 0,
      kept: 0,
      relisted: false,
    });
    expect(commitRun(sandbox.store, run, () => undefined)).toMatchObject({ items: 60, removed: 0, added: 0 });
  });

  it('reads the listing again when there are more candidates than that costs, or URLs cannot tell', async () => {
    const pages = await listing();
    for (const byUrl of [true, false]) {
      const run = await runMissingPages(pages);
      expect(await confirmRemovals(sandbox.store, run, sources(3, byUrl))).toEqual({
        stillPresent: 40,
        gone: 0,
        kept: 0,
        relisted: true,
      });
      commitRun(sandbox.store, run, () => undefined);
      expect([...snapshotItems(sandbox.store, run)]).toHaveLength(60);
    }
  });

  it('retires the items that are really gone, and only those', async () => {
    const before = await listing();
    const truth = sim.mutate({ remove: 2 });
    const run = await runMissingPages(before);
    const firstPage = new Set(before[0]?.map((item) => item.id));
    // The run read page 1 before the removal: an item removed from it counts as read.
    const gone = truth.removed.filter((id) => !firstPage.has(id)).length;
    expect(gone).toBeGreaterThan(0);
    const check = await confirmRemovals(sandbox.store, run, sources(100, true));
    expect(check).toEqual({ stillPresent: 40 - gone, gone, kept: 0, relisted: false });
    expect(commitRun(sandbox.store, run, () => undefined)).toMatchObject({ items: 60 - gone, removed: gone });
    const ids = [...snapshotItems(sandbox.store, run)].map((item) => item.id);
    for (const id of truth.removed.filter((removed) => !firstPage.has(removed)))
      expect(ids).not.toContain(id);
  });

  it('keeps an item whose URL answers it with a value it cannot read, as invalid, never removed', async () => {
    const pages = await listing();
    const run = await runMissingPages(pages);
    const poisoned = pages[1]?.[0] as Item;
    sim.mutate({ poison: [{ id: poisoned.id, field: 'price', json: '"1e999999999"' }] });
    try {
      const check = await confirmRemovals(sandbox.store, run, sources(100, true));
      // Earlier tests of this file removed items of the shared simulator: count what is listed now.
      const listed = pages.flat().length;
      const missed = listed - (pages[0]?.length ?? 0);
      expect(check).toEqual({ stillPresent: missed - 1, gone: 0, kept: 1, relisted: false });
      expect(commitRun(sandbox.store, run, () => undefined)).toMatchObject({
        items: listed,
        removed: 0,
        invalid: 1,
      });
      const kept = [...snapshotItems(sandbox.store, run)].find((item) => item.id === poisoned.id);
      expect(kept?.price).toBe(poisoned.price);
    } finally {
      sim.mutate({ cure: [poisoned.id] });
    }
  });

  it('removes only what a 404 proves gone while the listing held an item without a readable id', async () => {
    const before = await listing();
    const truth = sim.mutate({ remove: 2 });
    const firstPage = new Set(before[0]?.map((item) => item.id));
    const goneIds = truth.removed.filter((id) => !firstPage.has(id));
    for (const [relistCost, byUrl, removed] of [
      [100, true, goneIds.length],
      [3, true, 0],
      [100, false, 0],
    ] as const) {
      const run = await runMissingPages(before);
      stagePages(
        sandbox.store,
        run,
        [{ page: 2, items: [], invalid: [{ id: null, page: 2, reason: 'item: id is not readable' }] }],
        () => undefined,
      );
      const check = await confirmRemovals(sandbox.store, run, sources(relistCost, byUrl));
      expect(check.gone).toBe(removed);
      const listed = before.flat().length;
      expect(check.stillPresent + check.kept + check.gone).toBe(listed - firstPage.size);
      expect(commitRun(sandbox.store, run, () => undefined)).toMatchObject({
        removed,
        invalid: 1,
        items: listed - removed,
      });
    }
    sim.mutate({ restore: truth.removed });
  });
});
