import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../src/config.js';
import { findShop } from '../src/config.js';
import { diffRuns } from '../src/diff.js';
import { TRACKED_FIELDS } from '../src/domain/item.js';
import { silentLogger } from '../src/log.js';
import { type Simulator, startSimulator } from '../src/simulator/index.js';
import { ITEM_COLUMNS, rowToItem } from '../src/store/item-row.js';
import { openStore, type Store } from '../src/store/open.js';
import { shopPaths } from '../src/store/paths.js';
import { snapshotItems } from '../src/store/snapshot.js';
import { runSync } from '../src/sync.js';
import { diffAsTruth, simConfig, sortedTruth, tempDir, truthById, withoutRaw } from './store/fixtures.js';

/** Recognising an unchanged item from the text it was sent as (`item_versions.sent`), across the upgrade. */

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let config: AppConfig;

beforeAll(async () => {
  sim = await startSimulator({ items: 200, seed: 11, defaultPerPage: 20 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-sent-');
  config = simConfig(sim, temp.dir, { SYNC_PER_PAGE: '25' });
});
afterEach(() => temp.cleanup());

const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });

function inspect<T>(look: (store: Store) => T): T {
  const store = openStore(shopPaths(config.dataDir, 'shop').store);
  try {
    return look(store);
  } finally {
    store.close();
  }
}

/** Current versions that do not know the text they were read from. */
const withoutText = (store: Store) =>
  store.db
    .prepare('SELECT count(*) FROM item_versions WHERE valid_to_run IS NULL AND sent IS NULL')
    .pluck()
    .get();

/** The item hash as schema version 6 kept it: the first 52 bits of the SHA-1 of the values' JSON. */
function schema6Hash(...row: unknown[]): number {
  const item = rowToItem(row);
  const json = JSON.stringify(TRACKED_FIELDS.map((field) => item[field]));
  return Number.parseInt(createHash('sha1').update(json).digest('hex').slice(0, 13), 16);
}

/**
 * Turns the shop's store back into what schema version 6 (the version before texts were kept) wrote:
 * the same tables, its hashes (returned, in the order written), no `sent`, its index of ids as it was.
 */
function asWrittenBySchema6(): number[] {
  return inspect((store) => {
    store.db.function('schema6_hash', { varargs: true }, schema6Hash);
    store.db.exec(`
      UPDATE item_versions SET hash = schema6_hash(${ITEM_COLUMNS.join(', ')});
      DROP INDEX item_versions_id;
      ALTER TABLE item_versions DROP COLUMN sent;
      CREATE INDEX item_versions_id ON item_versions (id, valid_from_run, valid_to_run, hash);
      PRAGMA user_version = 6;
    `);
    return store.db.prepare('SELECT hash FROM item_versions ORDER BY version').pluck().all() as number[];
  });
}

describe('an item sent as the text its version was read from', () => {
  it('upgrades a store of schema version 6 with no phantom change, then learns every text', async () => {
    await sync();
    const before = asWrittenBySchema6();
    const hashes = () =>
      inspect((s) => s.db.prepare('SELECT hash FROM item_versions ORDER BY version').pluck().all());
    const upgraded = await sync();
    expect(upgraded).toMatchObject({ status: 'complete', items: 200, added: 0, updated: 0, removed: 0 });
    expect(inspect((s) => [...diffRuns(s, 1, 2)])).toEqual([]);
    expect(inspect(withoutText)).toBe(0);
    // Every hash was computed again, by the new definition.
    expect(hashes().every((hash, i) => hash !== before[i])).toBe(true);
  });

  it('is unchanged; a value changed in its text is a change; a new representation of a value is not', async () => {
    await sync();
    expect(inspect(withoutText)).toBe(0);
    expect(await sync()).toMatchObject({ items: 200, added: 0, updated: 0, removed: 0 });

    sim.mutate({ representation: 15 });
    expect(await sync()).toMatchObject({ items: 200, added: 0, updated: 0, removed: 0 });

    const truth = sim.mutate({ prices: 3, quantities: 3, publish: 2, titles: 2, add: 2, remove: 2 });
    const changed = await sync();
    expect(changed).toMatchObject({
      added: truth.added.length,
      updated: truth.updated.length,
      removed: truth.removed.length,
    });
    expect(inspect((s) => diffAsTruth(diffRuns(s, 3, 4)))).toEqual(sortedTruth(truth));
    expect(inspect((s) => withoutRaw(snapshotItems(s, 4)))).toEqual(truthById(sim));
  });
});
