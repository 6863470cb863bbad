import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect } from 'vitest';
import { type AppConfig, loadConfig } from '../../src/config/app-config.js';
import type { Change } from '../../src/domain/change.js';
import { type Decimal, parseDecimal } from '../../src/domain/decimal.js';
import type { Item } from '../../src/domain/item.js';
import type { Simulator } from '../../src/simulator/index.js';
import type { MutationTruth, SimItem } from '../../src/simulator/types.js';
import { closeRemoved } from '../../src/store/candidates.js';
import { commitRun } from '../../src/store/commit.js';
import { openStore, type Store } from '../../src/store/open.js';
import { beginRun, discardRunData, discardUnfinishedRuns } from '../../src/store/run-records.js';
import { stagePages } from '../../src/store/staging.js';

/** A fresh directory under the OS temp dir, removed by the returned cleanup. */
export function tempDir(prefix = 'shop-sync-store-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function openTempStore(dir: string): Store {
  return openStore(path.join(dir, 'shop', 'inventory.sqlite'));
}

/** A test's own temp dir and store, opened before each test and closed and removed after it. */
export interface FreshStore {
  readonly store: Store;
  readonly dir: string;
  /** Closes the store and opens its file again, as the next process would. */
  reopen(): Store;
}

/** Registers `beforeEach`/`afterEach` giving every test of the file a fresh store in a temp dir. */
export function freshStorePerTest(): FreshStore {
  let temp: ReturnType<typeof tempDir> | undefined;
  let store: Store | undefined;
  beforeEach(() => {
    temp = tempDir();
    store = openTempStore(temp.dir);
  });
  afterEach(() => {
    store?.close();
    temp?.cleanup();
    store = undefined;
    temp = undefined;
  });
  const current = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('freshStorePerTest() values exist only inside a test.');
    return value;
  };
  return {
    get store() {
      return current(store);
    },
    get dir() {
      return current(temp).dir;
    },
    reopen() {
      const file = current(store).path;
      current(store).close();
      store = openStore(file);
      return store;
    },
  };
}

/** A plausible item; `overrides` set the values a test cares about. */
export function makeItem(id: string, overrides: Partial<Item> = {}): Item {
  return {
    id,
    title: `Item ${id}`,
    price: parseDecimal('10.5') as Decimal,
    original_price: null,
    currency: 'EUR',
    quantity: 1,
    published: true,
    created_at: '2024-01-01T00:00:00Z',
    url: `https://market.example/v1/items/${id}`,
    web_url: null,
    photos: [],
    photos_id: [],
    description: null,
    raw_description: null,
    fbcomments: null,
    shop_id: 'shop-1',
    shop_name: 'Shop',
    shop_url: 'https://market.example/shop',
    shop_image: null,
    shop_items_url: 'https://market.example/shop/items',
    raw: `{"id":"${id}"}`,
    ...overrides,
  };
}

/**
 * Runs a whole run of the given items, one page each, without any marketplace, as a sync does
 * (unfinished runs discarded, items missing from the pages retired as confirmed gone): returns its number.
 */
export async function commitItems(store: Store, pages: readonly (readonly Item[])[]): Promise<number> {
  const { run } = beginRun(store, { query: 'test', resumeWindowMinutes: 0 });
  await discardUnfinishedRuns(store, run);
  pages.forEach((items, index) => {
    stagePages(store, run, [{ page: index + 1, items, invalid: [] }], () => undefined);
  });
  await closeRemoved(store, run);
  commitRun(store, run, () => undefined);
  await discardRunData(store, run, { complete: true });
  return run;
}

/** Configuration for one shop reading `sim`, with its data under `dataDir`, through the real loader. */
export function simConfig(sim: Simulator, dataDir: string, extra: Record<string, string> = {}): AppConfig {
  return loadConfig({ ...simEnv(sim, dataDir), ...extra });
}

/**
 * A schedule that never fires while a test runs. A worker started with the default (every quarter hour)
 * starts a sync of its own when a test spans :00, :15, :30 or :45, beside the one the test triggers: CI
 * failed so twice (docs/testing.md).
 */
export const NEVER_DURING_TESTS = '0 0 1 1 *';

export function simEnv(sim: Simulator, dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    SYNC_SCHEDULE: NEVER_DURING_TESTS,
    MARKETPLACE_BASE_URL: sim.baseUrl,
    MARKETPLACE_CLIENT_ID: sim.credentials.clientId,
    MARKETPLACE_CLIENT_SECRET: sim.credentials.clientSecret,
    MARKETPLACE_USERNAME: sim.credentials.username,
    MARKETPLACE_PASSWORD: sim.credentials.password,
    SHOP_NAME: 'shop',
    LOG_LEVEL: 'silent',
  };
}

/** A diff reduced to what a mutation's ground truth says: ids per kind and the changed fields' values. */
export function diffAsTruth(changes: Iterable<Change>): MutationTruth {
  const truth: MutationTruth = { added: [], removed: [], updated: [] };
  for (const change of changes) {
    if (change.change === 'added') truth.added.push(change.id);
    else if (change.change === 'removed') truth.removed.push(change.id);
    else {
      const fields = Object.fromEntries(
        change.fields.map((f) => [f, { before: change.before?.[f], after: change.after?.[f] }]),
      );
      truth.updated.push({ id: change.id, fields });
    }
  }
  return truth;
}

/** The ground truth in the order diffs use (by id), for exact comparison. */
export function sortedTruth(truth: MutationTruth): MutationTruth {
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    added: [...truth.added].sort(byId),
    removed: [...truth.removed].sort(byId),
    updated: [...truth.updated].sort((a, b) => byId(a.id, b.id)),
  };
}

/** Items without `raw`, as the simulator's `truth()` gives them, ordered by id like snapshots. */
export function withoutRaw(items: Iterable<Item>): SimItem[] {
  return [...items].map(({ raw: _raw, ...rest }) => rest);
}

export function truthById(sim: Simulator): SimItem[] {
  return sim.truth().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Overwrites the header of a leaf page in the middle of `table`'s b-tree with garbage, as a bad sector
 * or a torn write would: SQLite's own header (page 1) stays intact, so the file still opens.
 */
export function corruptMiddlePage(file: string, table: string): number {
  const db = new Database(file, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db
    .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno")
    .pluck()
    .all(table) as number[];
  db.close();
  expect(pages.length).toBeGreaterThan(4);
  const page = pages[Math.floor(pages.length / 2)] as number;
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, (page - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
  return page;
}
