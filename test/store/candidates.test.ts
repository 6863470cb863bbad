import { describe, expect, it } from 'vitest';
import type { InvalidItem, Item } from '../../src/domain/item.js';
import { candidateCount, forEachCandidateSlice } from '../../src/store/candidates.js';
import { commitRun } from '../../src/store/commit.js';
import { beginRun, discardUnfinishedRuns, failRun } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stageConfirmed, stagePages } from '../../src/store/staging.js';
import { confirmRemovals } from '../../src/sync/confirm-removals.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

/** The removal candidates of `run` by brute force: what the counts must agree with. */
const candidatesBySql = (run: number): string[] =>
  sandbox.store.db
    .prepare(
      `SELECT v.id FROM item_versions v
        WHERE v.valid_to_run IS NULL AND v.valid_from_run < @run
          AND v.id NOT IN (SELECT id FROM item_versions WHERE valid_from_run = @run)
          AND v.id NOT IN (SELECT w.id FROM run_matched m JOIN item_versions w USING (version) WHERE m.run = @run)
          AND v.id NOT IN (SELECT id FROM invalid_items WHERE run = @run AND id IS NOT NULL)
        ORDER BY v.id`,
    )
    .pluck()
    .all({ run }) as string[];

const scanned = async (run: number): Promise<string[]> => {
  const found: string[] = [];
  await forEachCandidateSlice(sandbox.store, run, (items) => found.push(...items.map((i) => i.id)));
  return found.sort();
};

const begin = (resume = 0) => beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: resume }).run;

let pageNumber = 0;
const stage = (run: number, items: Item[], invalid: InvalidItem[] = []) => {
  pageNumber += 1;
  stagePages(sandbox.store, run, [{ page: pageNumber, items, invalid }], () => undefined);
};

/** A second look at the listing that finds nothing: every candidate is gone. */
const noSecondLook = {
  relist: async function* () {
    yield* [];
  },
  relistCost: 100,
};

/** Confirms and commits `run`; returns the ids of its snapshot. */
async function finish(run: number): Promise<string[]> {
  await confirmRemovals(sandbox.store, run, noSecondLook);
  commitRun(sandbox.store, run, () => undefined);
  return [...snapshotItems(sandbox.store, run)].map((item) => item.id);
}

const a = makeItem('a');
const b = makeItem('b');
const c = makeItem('c');

/** The counts agree with the brute force and with the scan, whose shortcut they decide. */
async function expectCandidates(run: number, ids: string[]): Promise<void> {
  expect(candidatesBySql(run)).toEqual(ids);
  expect(candidateCount(sandbox.store, run)).toBe(ids.length);
  expect(await scanned(run)).toEqual(ids);
}

describe('counting removal candidates instead of scanning for them', () => {
  it('counts none when a run read every item unchanged, and one per item it missed', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const run = begin();
    stage(run, [a, b]);
    await expectCandidates(run, ['c']);
    stage(run, [c]);
    await expectCandidates(run, []);
  });

  it('still finds a missing item when an item read unchanged is read again changed', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const run = begin();
    stage(run, [a, b]);
    stage(run, [makeItem('a', { quantity: 7 })]);
    await expectCandidates(run, ['c']);
    expect(await finish(run)).toEqual(['a', 'b']);
  });

  it('still finds a missing item when a changed item is read again back at its old values', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const run = begin();
    stage(run, [makeItem('a', { quantity: 7 }), b]);
    stage(run, [a]);
    await expectCandidates(run, ['c']);
    expect(await finish(run)).toEqual(['a', 'b']);
  });

  it('keeps an invalid item without counting it, nor counting twice one invalid twice or also read valid', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const run = begin();
    const invalidA = (page: number) => [{ id: 'a', page, reason: 'price is not a number' }];
    stage(run, [b], invalidA(1));
    await expectCandidates(run, ['c']);
    stage(run, [], invalidA(2));
    await expectCandidates(run, ['c']);
    stage(run, [a], invalidA(3));
    await expectCandidates(run, ['c']);
    expect(await finish(run)).toEqual(['a', 'b']);
  });

  it('counts an item confirmed still present as read', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const run = begin();
    stage(run, [a]);
    stageConfirmed(sandbox.store, run, [b]);
    stageConfirmed(sandbox.store, run, [b]);
    await expectCandidates(run, ['c']);
    expect(await finish(run)).toEqual(['a', 'b']);
  });

  it('keeps what a resumed run matched before it stopped, an item read on both sides counting once', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const run = begin(60);
    stage(run, [a]);
    failRun(sandbox.store, run, 'interrupted');
    expect(begin(60)).toBe(run);
    stage(run, [a, b]);
    await expectCandidates(run, ['c']);
    expect(await finish(run)).toEqual(['a', 'b']);
  });

  it('counts again the versions a discarded run had closed', async () => {
    await commitItems(sandbox.store, [[a, b, c]]);
    const failed = begin();
    stage(failed, [makeItem('a', { quantity: 7 }), b, c]);
    failRun(sandbox.store, failed, 'interrupted');
    const run = begin();
    await discardUnfinishedRuns(sandbox.store, run);
    stage(run, [b, c]);
    await expectCandidates(run, ['a']);
    expect(await finish(run)).toEqual(['b', 'c']);
  });
});
