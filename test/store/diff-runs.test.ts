import { describe, expect, it } from 'vitest';
import type { Decimal } from '../../src/domain/decimal.js';
import { UsageError } from '../../src/errors.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { beginRun } from '../../src/store/run-records.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

describe('diffRuns', () => {
  it('reports added, removed and updated items by id, with changed fields in TRACKED_FIELDS order', async () => {
    const gone = makeItem('b-gone');
    const before = makeItem('c-changed');
    const after = makeItem('c-changed', { title: 'Renamed', published: false, price: '11' as Decimal });
    const from = await commitItems(sandbox.store, [[makeItem('a-same'), gone, before]]);
    const fresh = makeItem('d-new');
    const to = await commitItems(sandbox.store, [[makeItem('a-same'), after, fresh]]);
    expect([...diffRuns(sandbox.store, from, to)]).toEqual([
      { change: 'removed', id: 'b-gone', title: gone.title, fields: [], before: gone, after: null },
      {
        change: 'updated',
        id: 'c-changed',
        title: 'Renamed',
        fields: ['price', 'published', 'title'],
        before,
        after,
      },
      { change: 'added', id: 'd-new', title: fresh.title, fields: [], before: null, after: fresh },
    ]);
  });

  it('sees changes across several runs, and none for an item changed and changed back', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    await commitItems(sandbox.store, [[makeItem('a', { quantity: 7 }), makeItem('b', { quantity: 7 })]]);
    const r3 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b', { quantity: 8 })]]);
    expect([...diffRuns(sandbox.store, r1, r3)].map((c) => [c.id, c.fields])).toEqual([['b', ['quantity']]]);
    expect([...diffRuns(sandbox.store, r3, r3)]).toEqual([]);
  });

  it('refuses runs in the wrong order, runs that do not exist and runs that are not complete', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('a')]]);
    const r2 = await commitItems(sandbox.store, [[makeItem('a')]]);
    const running = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60 }).run;
    expect(() => diffRuns(sandbox.store, r2, r1)).toThrow(
      new UsageError(`--from run ${r2} is later than --to run ${r1}; give the older run as --from.`),
    );
    expect(() => diffRuns(sandbox.store, r1, 99)).toThrow(`Run 99 does not exist in ${sandbox.store.path}.`);
    expect(() => diffRuns(sandbox.store, r1, running)).toThrow(
      `Run ${running} is running, not complete: only complete runs can be compared.`,
    );
  });
});
