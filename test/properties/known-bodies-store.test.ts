import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Item } from '../../src/domain/item.js';
import type { StoredVersion, UnchangedItem } from '../../src/domain/unchanged-item.js';
import { commitRun } from '../../src/store/commit.js';
import type { Store } from '../../src/store/open.js';
import { pruneRuns } from '../../src/store/prune-runs.js';
import { ReadBodies } from '../../src/store/read-bodies.js';
import { beginRun, discardUnfinishedRuns } from '../../src/store/run-records.js';
import { SentVersions } from '../../src/store/sent-index.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { StagingBatch } from '../../src/store/staging.js';
import { makeItem, openTempStore, tempDir } from '../store/fixtures.js';

/**
 * The versions a listing body's row vouches for (`ReadBodies`, the fast path: a body received again, or
 * the elements of a page's changed answer that its previous row holds) against the reference, each
 * element looked up by its id and text (`SentVersions`) as the run began, over random histories: items read
 * changed, back to earlier values, as another text of the same values, twice in one run (within a
 * batch and across batches), runs that fail and are discarded, runs pruned. Whenever a row vouches
 * for its versions they are exactly the reference's, and every complete run's snapshot holds the values
 * read last of every id.
 */

const IDS = ['a', 'b', 'c', 'd', 'e'];
/** A text of an item: 0 and 2 are the same values sent as two different texts, 1 other values. */
const TEXTS = [0, 1, 2];
const quantityOf = (text: number) => (text === 1 ? 2 : 1);
const sentOf = (id: string, text: number) => 1000 * (IDS.indexOf(id) + 1) + text;

/** The ids a page may list: pages are often the same again, as a shop's are. */
const LAYOUTS = [['a', 'b'], ['c', 'd'], ['e'], ['b', 'c'], ['a']];
/** Mostly the first text: a page is often received again byte for byte. */
const text = fc.constantFrom(0, 0, 0, 0, ...TEXTS);
const page = fc
  .constantFrom(...LAYOUTS)
  .chain((ids) => fc.tuple(...ids.map((id) => text.map((t) => ({ id, text: t })))));
const run = fc.record({
  pages: fc.array(page, { minLength: 1, maxLength: 5 }),
  batch: fc.integer({ min: 1, max: 3 }),
  outcome: fc.constantFrom('complete', 'complete', 'complete', 'fail', 'prune'),
});

type Page = { id: string; text: number }[];

const digestOf = (elements: Page) => JSON.stringify(elements);

/** One run as the reader and staging do it; returns what the run read last of each id. */
async function readRun(store: Store, run: number, pages: readonly Page[], batchPages: number) {
  const bodies = new ReadBodies(store);
  const index = new SentVersions(store, run);
  const batch = new StagingBatch(
    store,
    run,
    () => undefined,
    { pages: batchPages, ms: 60_000 },
    undefined,
    bodies,
  );
  const asked = (elements: Page) => elements.map(({ id, text }) => ({ id, sent: sentOf(id, text) }));
  // The reference as the run began: what the run itself writes meanwhile, the writer checks again.
  const atStart = pages.map((elements) => index.versionsOf(asked(elements)));
  const read = new Map<string, number>();
  for (const [n, elements] of pages.entries()) {
    const ids = elements.map(({ id }) => id);
    const sent = elements.map(({ id, text }) => sentOf(id, text));
    const digest = digestOf(elements);
    const page = `page ${n + 1}`;
    const known = bodies.elementsOf(digest);
    let versions: (StoredVersion | undefined)[];
    if (known?.versions) {
      versions = known.versions.map((version, i) => ({ version, hash: known.hashes?.[i] as number }));
      expect(versions).toEqual(atStart[n]);
    } else if (known) versions = index.versionsOf(asked(elements));
    else {
      // A changed answer: the elements the page's previous row holds are that row's versions, the
      // others are looked up, as the reader does.
      const previous = bodies.previousOf(page);
      const fromRow = sent.map((hash): StoredVersion | undefined => {
        const k = previous?.sent.indexOf(hash) ?? -1;
        return previous && k !== -1
          ? { version: previous.versions[k] as number, hash: previous.hashes[k] as number }
          : undefined;
      });
      for (const [i, version] of fromRow.entries()) if (version) expect(version).toEqual(atStart[n]?.[i]);
      const lookedUp = index.versionsOf(asked(elements));
      versions = fromRow.map((version, i) => version ?? lookedUp[i]);
      bodies.learn(digest, { ids, sent, read: versions }, page);
    }
    for (const { id, text } of elements) read.set(id, text);
    const unchanged: UnchangedItem[] = [];
    const items: Item[] = [];
    const itemsSent: number[] = [];
    for (const [i, { id, text }] of elements.entries()) {
      const version = versions[i];
      if (version) unchanged.push({ id, ...version });
      else {
        items.push(makeItem(id, { quantity: quantityOf(text) }));
        itemsSent.push(sentOf(id, text));
      }
    }
    batch.add({ page: n + 1, items, invalid: [], unchanged, sent: itemsSent });
  }
  await batch.finish();
  return read;
}

describe('the versions a listing body row vouches for', () => {
  it('are the versions each element looked up by its text finds as the run begins, whatever happened before', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(run, { minLength: 2, maxLength: 7 }), async (runs) => {
        const temp = tempDir();
        const store = openTempStore(temp.dir);
        try {
          // Items not read stay (removals are confirmed elsewhere): the last values read of each id.
          const model = new Map<string, number>();
          for (const { pages, batch, outcome } of runs) {
            const { run: number } = beginRun(store, { query: 'q', resumeWindowMinutes: 0 });
            await discardUnfinishedRuns(store, number);
            const read = await readRun(store, number, pages, batch);
            if (outcome === 'fail') continue;
            commitRun(store, number, () => undefined);
            const snapshot = [...snapshotItems(store, number)].map((item) => [item.id, item.quantity]);
            for (const [id, text] of read) model.set(id, quantityOf(text));
            expect(snapshot).toEqual([...model].sort(([x], [y]) => x.localeCompare(y)));
            if (outcome === 'prune') pruneRuns(store, 1);
          }
        } finally {
          store.close();
          temp.cleanup();
        }
      }),
      { numRuns: 100 },
    );
  });
});
