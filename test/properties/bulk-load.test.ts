import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commitRun } from '../../src/store/commit.js';
import type { Store } from '../../src/store/open.js';
import { openStore } from '../../src/store/open.js';
import { ReadBodies, recordBodiesOf } from '../../src/store/read-bodies.js';
import { beginRun } from '../../src/store/run-records.js';
import { type StagedPage, StagingBatch, stagePages } from '../../src/store/staging.js';
import { makeItem, openTempStore, tempDir } from '../store/fixtures.js';

/**
 * A first sync bulk-loaded (`StagingBatch` on a store with no versions) against the per-batch writer
 * (`stagePages`, the reference), over random first syncs: ids read more than once (within a batch and
 * across batches, with other values or the same), batches of any size, and a process that dies half
 * way, the run resumed by the next. After the commit both stores hold the same runs and the same
 * versions, and the listing bodies vouch for the same versions (numbered differently: the reference
 * rewrites an id read again in its first version, the bulk load keeps its latest). The bulk load may
 * vouch for more: it records every body once at its end, where the reference tries a body with its
 * batch and the next one only.
 *
 * An item's text here follows from its values: of an id read as two texts of the same values, the
 * reference keeps the text of whichever reading its batches met first, the bulk load the latest; either
 * is a text those very values were read from.
 */

const IDS = ['a', 'b', 'c', 'd', 'e', 'f'];
const VALUES = [1, 2, 3];
const sentOf = (id: string, quantity: number) => 1000 * (IDS.indexOf(id) + 1) + quantity;

const element = fc.record({ id: fc.constantFrom(...IDS), quantity: fc.constantFrom(...VALUES) });
/** A page lists an id once. */
const page = fc.uniqueArray(element, { minLength: 1, maxLength: 4, selector: ({ id }) => id });
const history = fc.record({
  pages: fc.array(page, { minLength: 1, maxLength: 8 }),
  /** After how many pages each batch is staged. */
  cuts: fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 8 }),
  /** Staged batches after which the process dies (none when beyond them). */
  diesAfter: fc.integer({ min: 0, max: 10 }),
});

type Page = { id: string; quantity: number }[];

const staged = (elements: Page, n: number): StagedPage => ({
  page: n,
  items: elements.map(({ id, quantity }) => makeItem(id, { quantity })),
  invalid: [],
  sent: elements.map(({ id, quantity }) => sentOf(id, quantity)),
});

const learnt = (bodies: ReadBodies, elements: Page, n: number) =>
  bodies.learn(
    JSON.stringify(elements),
    {
      ids: elements.map(({ id }) => id),
      sent: elements.map(({ id, quantity }) => sentOf(id, quantity)),
      read: elements.map(() => undefined),
    },
    `page ${n}`,
  );

/** The batches of a history: consecutive pages, cut where `cuts` say. */
function batches(pages: readonly Page[], cuts: readonly number[]): Page[][] {
  const out: Page[][] = [];
  let at = 0;
  for (const size of [...cuts, pages.length]) {
    if (at >= pages.length) break;
    out.push(pages.slice(at, at + size));
    at += size;
  }
  return out;
}

const begin = (store: Store) => beginRun(store, { query: 'q', resumeWindowMinutes: 60 });

/** The reference: every batch through `stagePages`, which writes with `writeItems`. */
function perBatch(store: Store, groups: readonly Page[][]): number {
  const { run } = begin(store);
  const bodies = new ReadBodies(store);
  let n = 0;
  for (const group of groups) {
    const pages = group.map((elements) => {
      n += 1;
      learnt(bodies, elements, n);
      return staged(elements, n);
    });
    stagePages(store, run, pages, () => undefined, { bodies });
  }
  commitRun(store, run, () => undefined);
  return run;
}

/** A batch that never commits by size or time within these histories: the test decides where it ends. */
function stagingBatch(store: Store, run: number, bodies: ReadBodies): StagingBatch {
  return new StagingBatch(store, run, () => undefined, { pages: 1000, ms: 3_600_000 }, undefined, bodies);
}

/** As a sync stages: a `StagingBatch`, finished once the listing is read; dying means reopening. */
async function bulk(file: string, groups: readonly Page[][], diesAfter: number): Promise<number> {
  let store = openStore(file);
  const { run } = begin(store);
  let bodies = new ReadBodies(store);
  let batch = stagingBatch(store, run, bodies);
  let n = 0;
  for (const [k, group] of groups.entries()) {
    for (const elements of group) {
      n += 1;
      learnt(bodies, elements, n);
      batch.add(staged(elements, n));
    }
    batch.flush();
    if (k + 1 === diesAfter) {
      store.close();
      store = openStore(file);
      expect(begin(store)).toMatchObject({ run, resumed: true });
      bodies = new ReadBodies(store);
      batch = stagingBatch(store, run, bodies);
    }
  }
  await batch.finish();
  commitRun(store, run, () => undefined);
  store.close();
  return run;
}

/** What a reader of the store sees, with versions named by id and run. */
function contents(store: Store) {
  const { db } = store;
  const runs = db
    .prepare('SELECT run, status, pages, items, added, updated, removed, invalid FROM runs')
    .all();
  const versions = db
    .prepare('SELECT * FROM item_versions ORDER BY id, valid_from_run')
    .all()
    .map((row) => {
      const { version: _version, ...rest } = row as Record<string, unknown>;
      return rest;
    });
  const idOf = new Map(
    (db.prepare('SELECT version, id FROM item_versions').raw().all() as [number, string][]).map(([v, id]) => [
      v,
      id,
    ]),
  );
  const bodies = (
    db
      .prepare(
        `SELECT digest, elements, r.run, versions, versions_run
           FROM listing_bodies JOIN listing_body_runs r USING (body) ORDER BY digest`,
      )
      .all() as {
      digest: string;
      versions: string | null;
    }[]
  ).map(({ versions, ...row }) => {
    const named = versions === null ? null : (JSON.parse(versions) as [number[], number[]]);
    return { ...row, versions: named && [named[0].map((v) => idOf.get(v)), named[1]] };
  });
  return { runs, versions, bodies };
}

describe('a first sync bulk-loaded', () => {
  it('leaves the store the per-batch writer leaves, whatever the batches and wherever the process dies', async () => {
    await fc.assert(
      fc.asyncProperty(history, async ({ pages, cuts, diesAfter }) => {
        const groups = batches(pages, cuts);
        const temp = tempDir();
        try {
          const reference = openTempStore(temp.dir);
          perBatch(reference, groups);
          const file = reference.path.replace('inventory.sqlite', 'bulk.sqlite');
          await bulk(file, groups, diesAfter);
          const loaded = openStore(file);
          const [want, got] = [contents(reference), contents(loaded)];
          reference.close();
          loaded.close();
          expect(got.runs).toEqual(want.runs);
          expect(got.versions).toEqual(want.versions);
          expect(got.bodies.map(({ versions: _v, ...row }) => row)).toEqual(
            want.bodies.map(({ versions: _v, ...row }) => row),
          );
          for (const [i, body] of want.bodies.entries())
            if (body.versions !== null) expect(got.bodies[i]?.versions).toEqual(body.versions);
        } finally {
          temp.cleanup();
        }
      }),
      { numRuns: 100 },
    );
  });
});

/**
 * The versions a bulk load hands over to the listing bodies as it stages (`BulkLoad.versionOf`) against
 * reading them back from the store once it is loaded (`recordBodiesOf`, the reference), over random
 * first syncs: pages read ahead of the batch that stages them, ids read more than once, elements whose
 * item could not be read (no version to hand over).
 */
const aheadHistory = fc.record({
  pages: fc.array(
    fc.uniqueArray(
      fc.record({ id: fc.constantFrom(...IDS), quantity: fc.constantFrom(...VALUES), invalid: fc.boolean() }),
      {
        minLength: 1,
        maxLength: 4,
        selector: ({ id }) => id,
      },
    ),
    { minLength: 1, maxLength: 8 },
  ),
  cuts: fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 8 }),
  /** How many pages are read (their bodies learnt) before the batch before them is staged. */
  ahead: fc.integer({ min: 0, max: 3 }),
  /** Whether the first page's body is in the store already, with versions an earlier, failed run recorded. */
  stale: fc.boolean(),
});

type AheadPage = { id: string; quantity: number; invalid: boolean }[];

async function bulkAhead(
  store: Store,
  { pages, cuts, ahead, stale }: { pages: AheadPage[]; cuts: number[]; ahead: number; stale: boolean },
) {
  const { run } = begin(store);
  if (stale) {
    const digest = JSON.stringify(pages[0]);
    store.db
      .prepare(
        `INSERT INTO listing_bodies (digest, elements, page, versions, versions_run)
         VALUES (?, '[[],[]]', 'page 1', '[[999],[1]]', ?)`,
      )
      .run(digest, run - 1);
    store.db
      .prepare(
        'INSERT INTO listing_body_runs (body, run) SELECT body, ? FROM listing_bodies WHERE digest = ?',
      )
      .run(run - 1, digest);
  }
  const bodies = new ReadBodies(store);
  const batch = stagingBatch(store, run, bodies);
  const ends = new Set<number>();
  let end = 0;
  for (const size of cuts) {
    end += size;
    ends.add(end);
  }
  let learntThrough = 0;
  const learnThrough = (n: number) => {
    for (; learntThrough < Math.min(n, pages.length); learntThrough += 1) {
      const elements = pages[learntThrough] as AheadPage;
      learnt(bodies, elements, learntThrough + 1);
    }
  };
  for (const [i, elements] of pages.entries()) {
    learnThrough(i + 1);
    batch.add({
      page: i + 1,
      items: elements.filter((e) => !e.invalid).map(({ id, quantity }) => makeItem(id, { quantity })),
      invalid: elements.filter((e) => e.invalid).map(({ id }) => ({ id, page: i + 1, reason: 'unreadable' })),
      sent: elements.filter((e) => !e.invalid).map(({ id, quantity }) => sentOf(id, quantity)),
    });
    if (ends.has(i + 1)) {
      learnThrough(i + 1 + ahead);
      batch.flush();
    }
  }
  await batch.finish();
  return run;
}

const bodyVersions = (store: Store) =>
  store.db.prepare('SELECT digest, versions, versions_run FROM listing_bodies ORDER BY digest').all();

describe('a bulk load hands its versions to the listing bodies', () => {
  it('records the versions reading them back would record, whatever was read ahead or twice', async () => {
    await fc.assert(
      fc.asyncProperty(aheadHistory, async (history) => {
        const temp = tempDir();
        const store = openTempStore(temp.dir);
        try {
          const run = await bulkAhead(store, history);
          const handed = bodyVersions(store);
          recordBodiesOf(store.db, run);
          expect(handed).toEqual(bodyVersions(store));
        } finally {
          store.close();
          temp.cleanup();
        }
      }),
      { numRuns: 200 },
    );
  });
});
