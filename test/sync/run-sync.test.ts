import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../src/config/app-config.js';
import { findShop } from '../../src/config/app-config.js';
import { TRACKED_FIELDS } from '../../src/domain/item.js';
import {
  ApiError,
  ConfigError,
  CredentialsError,
  InterruptedError,
  StoreCorruptError,
} from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type CheckMark, checkMarkPath } from '../../src/store/check-mark.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { ITEM_COLUMNS, rowToItem } from '../../src/store/item-row.js';
import { openStore, type Store } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { getRunDetail, latestCompleteRun, listRuns } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { runSync, type SyncDeps } from '../../src/sync/index.js';
import { capturedLogger } from '../api/helpers.js';
import {
  corruptMiddlePage,
  diffAsTruth,
  simConfig,
  sortedTruth,
  tempDir,
  truthById,
  withoutRaw,
} from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let config: AppConfig;

beforeAll(async () => {
  sim = await startSimulator({ items: 300, seed: 7, defaultPerPage: 20 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-sync-');
  config = simConfig(sim, temp.dir, { SYNC_PER_PAGE: '25' });
  sim.setFaults({ moving: null, latencyMs: 0 });
});
afterEach(() => temp.cleanup());

const deps = (extra: Partial<SyncDeps> = {}): SyncDeps => ({ config, log: silentLogger(), ...extra });
const sync = (extra: Partial<SyncDeps> = {}) => runSync(findShop(config, 'shop'), deps(extra));

/** Opens the shop's store for a look, closing it after. */
function inspect<T>(look: (store: Store) => T): T {
  const store = openStore(shopPaths(config.dataDir, 'shop').store);
  try {
    return look(store);
  } finally {
    store.close();
  }
}

describe('runSync against the simulator', () => {
  it('snapshots exactly the catalogue and diffs exactly a mutation', async () => {
    const first = await sync();
    expect(first).toMatchObject({
      shop: 'shop',
      run: 1,
      status: 'complete',
      added: 300,
      removed: 0,
      invalid: 0,
    });
    expect(first.items).toBe(300);
    expect(inspect((s) => withoutRaw(snapshotItems(s, 1)))).toEqual(truthById(sim));

    const truth = sim.mutate({ prices: 4, quantities: 3, publish: 2, titles: 2, add: 3, remove: 2 });
    const second = await sync();
    expect(second).toMatchObject({
      run: 2,
      added: truth.added.length,
      updated: truth.updated.length,
      removed: truth.removed.length,
    });
    expect(inspect((s) => diffAsTruth(diffRuns(s, 1, 2)))).toEqual(sortedTruth(truth));
    expect(inspect((s) => withoutRaw(snapshotItems(s, 2)))).toEqual(truthById(sim));
    expect(readFileSync(shopPaths(config.dataDir, 'shop').inventoryCsv, 'utf8').split('\n')[0]).toMatch(
      /^id,title,/,
    );
  });

  it('sees no change when only the representation of prices changed', async () => {
    await sync();
    sim.mutate({ representation: 20 });
    const second = await sync();
    expect(second).toMatchObject({ added: 0, updated: 0, removed: 0 });
    expect(inspect((s) => [...diffRuns(s, 1, 2)])).toEqual([]);
  });

  it('brings removed items back as added when they are restored', async () => {
    await sync();
    const removal = sim.mutate({ remove: 3 });
    await sync();
    sim.mutate({ restore: removal.removed });
    const third = await sync();
    expect(third).toMatchObject({ added: 3, removed: 0, updated: 0 });
    const added = inspect((s) => [...diffRuns(s, 2, 3)].map((c) => [c.change, c.id]));
    expect(added).toEqual([...removal.removed].sort().map((id) => ['added', id]));
    expect(inspect((s) => [...diffRuns(s, 1, 3)])).toEqual([]);
  });

  it('reports no phantom removal when the listing moves while it is read', async () => {
    await sync();
    sim.setFaults({ moving: { insertBeforeEvery: 3, removeBehindEvery: 2 } });
    const second = await sync();
    sim.setFaults({ moving: null });
    const skipped = sim.moves().filter((m) => m.kind === 'remove' && m.affectedId !== null);
    expect(skipped.length).toBeGreaterThan(0);
    expect(second.removed).toBe(0);
    const snapshot = new Set(inspect((s) => [...snapshotItems(s, 2)].map((i) => i.id)));
    for (const move of skipped) expect(snapshot.has(move.affectedId as string)).toBe(true);
    const current = new Set(sim.truth().map((i) => i.id));
    const inserted = new Set(
      sim
        .moves()
        .filter((m) => m.kind === 'insert')
        .map((m) => m.id),
    );
    const missing = [...current].filter((id) => !snapshot.has(id) && !inserted.has(id));
    expect(missing).toEqual([]);
  });

  it('stops after the current page when aborted, keeps the last snapshot, and the next sync resumes', async () => {
    await sync();
    const truth = sim.mutate({ prices: 3, add: 2, remove: 2 });
    const controller = new AbortController();
    const interrupted = sync({
      signal: controller.signal,
      onProgress: (p) => {
        if (p.pages === 3) controller.abort();
      },
    });
    await expect(interrupted).rejects.toThrow(InterruptedError);
    await expect(interrupted).rejects.toThrow(
      'The sync of shop shop was interrupted after page 3; the next sync resumes from there.',
    );
    expect(
      inspect((s) => [latestCompleteRun(s), getRunDetail(s, 2)?.status, getRunDetail(s, 2)?.checkpoint_page]),
    ).toEqual([1, 'failed', 3]);

    const resumed = await sync();
    expect(resumed.run).toBe(2);
    expect(inspect((s) => getRunDetail(s, 2)?.resumed_from_page)).toBe(4);
    expect(inspect((s) => diffAsTruth(diffRuns(s, 1, 2)))).toEqual(sortedTruth(truth));
    expect(inspect((s) => withoutRaw(snapshotItems(s, 2)))).toEqual(truthById(sim));
  });

  it('stages every page read before the listing fails, and the next sync resumes after them', async () => {
    await sync();
    const truth = sim.mutate({ prices: 3, add: 2, remove: 2 });
    let read = 0;
    const failure = sync({
      retry: { maxAttempts: 1 },
      onProgress: (p) => {
        read = p.pages;
        if (p.pages === 4) sim.setFaults({ rate5xx: 1 });
      },
    });
    await expect(failure).rejects.toThrow(ApiError);
    sim.setFaults({ rate5xx: 0 });
    expect(read).toBeGreaterThanOrEqual(4);
    expect(read).toBeLessThan(12);
    expect(
      inspect((s) => [latestCompleteRun(s), getRunDetail(s, 2)?.status, getRunDetail(s, 2)?.checkpoint_page]),
    ).toEqual([1, 'failed', read]);

    const resumed = await sync();
    expect(resumed.run).toBe(2);
    expect(inspect((s) => getRunDetail(s, 2)?.resumed_from_page)).toBe(read + 1);
    expect(inspect((s) => diffAsTruth(diffRuns(s, 1, 2)))).toEqual(sortedTruth(truth));
    expect(inspect((s) => withoutRaw(snapshotItems(s, 2)))).toEqual(truthById(sim));
  });

  it('prunes to the configured number of runs after each sync', async () => {
    config = simConfig(sim, temp.dir, { SYNC_PER_PAGE: '25', SYNC_KEEP_RUNS: '2' });
    await sync();
    sim.mutate({ quantities: 2 });
    await sync();
    const truth = sim.mutate({ prices: 2 });
    await sync();
    expect(inspect((s) => listRuns(s).map((r) => r.run))).toEqual([2, 3]);
    expect(inspect((s) => diffAsTruth(diffRuns(s, 2, 3)))).toEqual(sortedTruth(truth));
  });

  it('fails naming MARKETPLACE_BASE_URL when nothing ever answered there, and leaves the previous snapshot as it was', async () => {
    await sync();
    const unreachable = simConfig(sim, temp.dir, { MARKETPLACE_BASE_URL: 'http://127.0.0.1:9' });
    const failure = runSync(findShop(unreachable, 'shop'), {
      config: unreachable,
      log: silentLogger(),
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, budgetMs: 1000 },
    });
    await expect(failure).rejects.toThrow(ConfigError);
    await expect(failure).rejects.toThrow(
      /^MARKETPLACE_BASE_URL is http:\/\/127\.0\.0\.1:9, but nothing accepts connections at 127\.0\.0\.1:9 \(ECONNREFUSED, after 2 attempts/,
    );
    expectIntactFirstRun();
  });

  it('fails with rejected credentials, naming them without their value, and keeps the snapshot', async () => {
    await sync();
    const wrong = simConfig(sim, temp.dir, { MARKETPLACE_PASSWORD: 'not-the-password' });
    const failure = runSync(findShop(wrong, 'shop'), { config: wrong, log: silentLogger() });
    await expect(failure).rejects.toThrow(CredentialsError);
    await expect(failure).rejects.not.toThrow(/not-the-password/);
    expectIntactFirstRun();
  });
});

function expectIntactFirstRun(): void {
  inspect((s) => {
    expect(latestCompleteRun(s)).toBe(1);
    expect(listRuns(s).map((r) => r.status)).toEqual(['complete', 'failed']);
    expect(withoutRaw(snapshotItems(s, 1))).toEqual(truthById(sim));
  });
}

describe('the store check of a sync', () => {
  const storeFile = () => shopPaths(config.dataDir, 'shop').store;
  const mark = () => JSON.parse(readFileSync(checkMarkPath(storeFile()), 'utf8')) as CheckMark;
  /** The sync's debug lines about the store check: what it planned and, when it ran one, its answer. */
  async function checkedSync(extra: Partial<SyncDeps> = {}): Promise<{ plan: unknown; checked: unknown[] }> {
    const { logger, output } = capturedLogger();
    await sync({ ...extra, log: logger });
    const lines = output()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
    const plans = lines.filter((line) => line.msg === 'store check');
    expect(plans).toHaveLength(1);
    const { check, reason } = plans[0];
    return { plan: { check, reason }, checked: lines.filter((line) => line.msg === 'store checked') };
  }

  it('is skipped while the file is as the last checked sync left it, and run again once that check is a day old', async () => {
    expect(await checkedSync()).toEqual({ plan: { check: 'none', reason: 'a new store' }, checked: [] });
    const first = mark();
    expect(new Date(first.checkedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);

    expect(await checkedSync()).toEqual({
      plan: { check: 'skip', reason: 'the file is as the last checked sync left it' },
      checked: [],
    });
    // The skipped check carries the last full check's time on: a day after it, the file is checked again.
    expect(mark().checkedAt).toBe(first.checkedAt);
    const dayOld = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString();
    writeFileSync(checkMarkPath(storeFile()), JSON.stringify({ ...mark(), checkedAt: dayOld }));

    expect(await checkedSync()).toEqual({
      plan: { check: 'full', reason: 'its last full check is a day old' },
      checked: [expect.objectContaining({ status: 'ok' })],
    });
    expect(new Date(mark().checkedAt).getTime()).toBeGreaterThan(new Date(first.checkedAt).getTime());
  });

  it("with its fsyncs off the event loop (the worker's), leaves the store checkpointed and marked: the next sync skips the check", async () => {
    expect(await checkedSync({ fsyncsOffLoop: true })).toEqual({
      plan: { check: 'none', reason: 'a new store' },
      checked: [],
    });
    // The keeper closed last: it checkpointed the WAL into the file, which is what lets the mark be written.
    expect(existsSync(`${storeFile()}-wal`)).toBe(false);
    expect(existsSync(checkMarkPath(storeFile()))).toBe(true);
    expect(await checkedSync({ fsyncsOffLoop: true })).toEqual({
      plan: { check: 'skip', reason: 'the file is as the last checked sync left it' },
      checked: [],
    });
    inspect((store) => {
      expect(listRuns(store).map((run) => run.status)).toEqual(['complete', 'complete']);
      expect(withoutRaw(snapshotItems(store, 2))).toEqual(truthById(sim));
    });
  });

  it('still finds damage written into the file as soon as a checked sync left it, and keeps the snapshot', async () => {
    await sync();
    await sync();
    expect(existsSync(checkMarkPath(storeFile()))).toBe(true);
    corruptMiddlePage(storeFile(), 'item_versions');
    const failure = sync();
    await expect(failure).rejects.toThrow(StoreCorruptError);
    await expect(failure).rejects.toThrow(
      new RegExp(`^The store ${storeFile()} is corrupt \\(SQLite's quick_check: .+\\)\\. Move it aside`),
    );
    expect(existsSync(checkMarkPath(storeFile()))).toBe(false);
    expect(inspect((s) => listRuns(s).map((r) => r.status))).toEqual(['complete', 'complete', 'failed']);
  });

  it('runs in full after a sync that failed, which leaves no mark', async () => {
    await sync();
    const failure = sync({ retry: { maxAttempts: 1 }, onProgress: () => sim.setFaults({ rate5xx: 1 }) });
    await expect(failure).rejects.toThrow(ApiError);
    sim.setFaults({ rate5xx: 0 });
    expect(existsSync(checkMarkPath(storeFile()))).toBe(false);
    expect(await checkedSync()).toEqual({
      plan: { check: 'full', reason: 'no mark of a checked store' },
      checked: [expect.objectContaining({ status: 'ok' })],
    });
  });
});

describe('what runSync reports as it goes', () => {
  it('passes through its phases and sync points in order, and logs pages re-read', async () => {
    const points: string[] = [];
    const phases = new Set<string>();
    const { logger, output } = capturedLogger();
    const summary = await sync({
      log: logger,
      onPoint: (point) => points.push(point),
      onProgress: (progress) => phases.add(progress.phase),
    });
    const mine = points.filter((point) => point !== 'page-staged');
    expect(mine.slice(0, 3)).toEqual(['read', 'removals-confirmed', 'committed']);
    expect(points.indexOf('page-staged')).toBe(0);
    expect([...phases]).toEqual(['reading', 'confirming', 'committing', 'feeds']);
    const complete = output()
      .split('\n')
      .filter((line) => line.includes('"sync complete"'))
      .map((line) => JSON.parse(line));
    // The last page is short (296 items, 25 a page): confirming the end reads it again.
    expect(complete).toEqual([
      expect.objectContaining({ pages: summary.pages, items: summary.items, rereads: expect.any(Number) }),
    ]);
    expect(complete[0].rereads).toBeGreaterThan(0);
  });

  it('warns when a run reads far more pages than the previous complete run', async () => {
    const previous = (await sync()).pages;
    const added = previous * 25 * 3;
    sim.mutate({ add: added });
    const { logger, output } = capturedLogger();
    await sync({ log: logger });
    const warnings = output()
      .split('\n')
      .filter((line) => line.includes('more than 3 times'))
      .map((line) => JSON.parse(line));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        pages: previous * 3 + 1,
        previousPages: previous,
        msg: `this run has read ${previous * 3 + 1} pages, more than 3 times the ${previous} of the previous complete run`,
      }),
    ]);
    sim.mutate({ remove: added });
  });
});

/** Current versions that do not know the text they were read from. */
const withoutText = (store: Store) =>
  store.db
    .prepare('SELECT count(*) FROM item_versions WHERE valid_to_run IS NULL AND sent IS NULL')
    .pluck()
    .get();

/** The item hash as schema version 7 kept it: the first 52 bits of the SHA-1 of the values' JSON. */
function schema7Hash(...row: unknown[]): number {
  const item = rowToItem(row);
  const json = JSON.stringify(TRACKED_FIELDS.map((field) => item[field]));
  return Number.parseInt(createHash('sha1').update(json).digest('hex').slice(0, 13), 16);
}

/**
 * Turns the shop's store back into what schema version 7 (the version before texts were kept) wrote:
 * the same tables, its hashes (returned, in the order written), no `sent`, its index of ids as it was,
 * no listing bodies, no answered origins.
 */
function asWrittenBySchema7(): number[] {
  return inspect((store) => {
    store.db.function('schema7_hash', { varargs: true }, schema7Hash);
    store.db.exec(`
      UPDATE item_versions SET hash = schema7_hash(${ITEM_COLUMNS.join(', ')});
      DROP INDEX item_versions_id;
      ALTER TABLE item_versions DROP COLUMN sent;
      CREATE INDEX item_versions_id ON item_versions (id, valid_from_run, valid_to_run, hash);
      DROP TABLE listing_bodies;
      DROP TABLE listing_body_runs;
      DROP TABLE answered_origins;
      PRAGMA user_version = 7;
    `);
    return store.db.prepare('SELECT hash FROM item_versions ORDER BY version').pluck().all() as number[];
  });
}

describe('an item sent as the text its version was read from', () => {
  it('upgrades a store of schema version 7 with no phantom change, then learns every text', async () => {
    await sync();
    const before = asWrittenBySchema7();
    const hashes = () =>
      inspect((s) => s.db.prepare('SELECT hash FROM item_versions ORDER BY version').pluck().all());
    const upgraded = await sync();
    expect(upgraded).toMatchObject({ status: 'complete', added: 0, updated: 0, removed: 0 });
    expect(inspect((s) => [...diffRuns(s, 1, 2)])).toEqual([]);
    expect(inspect(withoutText)).toBe(0);
    // Every hash was computed again, by the new definition.
    expect(hashes().every((hash, i) => hash !== before[i])).toBe(true);
  });

  it('is unchanged; a value changed in its text is a change; a new representation of a value is not', async () => {
    await sync();
    expect(inspect(withoutText)).toBe(0);
    expect(await sync()).toMatchObject({ added: 0, updated: 0, removed: 0 });

    sim.mutate({ representation: 15 });
    expect(await sync()).toMatchObject({ added: 0, updated: 0, removed: 0 });

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

/** The listing bodies the store knows: each digest with the run that received it last. */
const bodies = (store: Store) =>
  Object.fromEntries(
    store.db
      .prepare('SELECT digest, run FROM listing_bodies JOIN listing_body_runs USING (body)')
      .raw()
      .all() as [string, number][],
  );

describe('a listing body received byte for byte as before', () => {
  it('is known without being read; a page that changed is read, and its change is exact', async () => {
    await sync();
    const learnt = inspect(bodies);
    expect(Object.values(learnt).every((run) => run === 1)).toBe(true);
    const items = truthById(sim).length;
    expect(await sync()).toMatchObject({ status: 'complete', items, added: 0, updated: 0, removed: 0 });
    // Every body came again, and none was read in full: the same digests, each received by run 2.
    expect(inspect(bodies)).toEqual(Object.fromEntries(Object.keys(learnt).map((digest) => [digest, 2])));

    const truth = sim.mutate({ prices: 2, quantities: 2, add: 1, remove: 1 });
    const changed = await sync();
    expect(changed).toMatchObject({ added: 1, updated: truth.updated.length, removed: 1 });
    expect(inspect((s) => diffAsTruth(diffRuns(s, 2, 3)))).toEqual(sortedTruth(truth));
    expect(inspect((s) => withoutRaw(snapshotItems(s, 3)))).toEqual(truthById(sim));
    // The bodies of the pages as they were before the change are gone; each left was received by run 3.
    const now = inspect(bodies);
    expect(Object.values(now).every((run) => run === 3)).toBe(true);
    expect(Object.keys(now).filter((digest) => !(digest in learnt)).length).toBeGreaterThan(0);
  });
});
