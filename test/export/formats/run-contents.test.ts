import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runContents } from '../../../src/export/formats/run-contents.js';
import type { Store } from '../../../src/store/open.js';
import { beginRun, failRun, getRun, type RunSummary } from '../../../src/store/run-records.js';
import { commitItems, makeItem, openTempStore, tempDir } from '../../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;
beforeEach(() => {
  temp = tempDir('shop-sync-contents-');
  store = openTempStore(temp.dir);
});
afterEach(() => {
  store.close();
  temp.cleanup();
});

const summary = (run: number) => getRun(store, run) as RunSummary;
const kinds = (changes: Iterable<{ change: string; id: string }>) =>
  [...changes].map((c) => `${c.change} ${c.id}`);

describe('runContents', () => {
  it('has no changes for a shop’s first run', async () => {
    const run = await commitItems(store, [[makeItem('a'), makeItem('b')]]);
    const contents = runContents(store, 'north', summary(run));
    expect(contents.previousRun).toBeNull();
    expect([...contents.changes]).toEqual([]);
  });

  it('counts changes from the previous complete run, skipping failed runs, or from the run given', async () => {
    const first = await commitItems(store, [[makeItem('a'), makeItem('b')]]);
    const second = await commitItems(store, [[makeItem('a', { quantity: 5 }), makeItem('b')]]);
    failRun(store, beginRun(store, { query: 'q', resumeWindowMinutes: 0 }).run, 'HTTP 503');
    const third = await commitItems(store, [[makeItem('a', { quantity: 5 }), makeItem('c')]]);

    const normal = runContents(store, 'north', summary(third));
    expect(normal.previousRun).toBe(second);
    expect(kinds(normal.changes)).toEqual(['removed b', 'added c']);

    const fromPublished = runContents(store, 'north', summary(third), first);
    expect(fromPublished.previousRun).toBe(first);
    expect(kinds(fromPublished.changes)).toEqual(['updated a', 'removed b', 'added c']);
  });

  it('reads the store only while the changes are iterated, and gives them all each time', async () => {
    await commitItems(store, [[makeItem('a'), makeItem('c')]]);
    const run = await commitItems(store, [[makeItem('b'), makeItem('c', { quantity: 2 })]]);
    const contents = runContents(store, 'north', summary(run));
    // Described but not iterated: the connection is free for writes.
    store.db.prepare('UPDATE runs SET heartbeat_at = heartbeat_at').run();
    // A reading left early (as the feeds' check for any change does) keeps nothing back.
    for (const _ of contents.changes) break;
    store.db.prepare('UPDATE runs SET heartbeat_at = heartbeat_at').run();
    expect(kinds(contents.changes)).toEqual(['removed a', 'added b', 'updated c']);
    expect(kinds(contents.changes)).toEqual(['removed a', 'added b', 'updated c']);
  });
});
