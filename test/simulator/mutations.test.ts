import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { TrackedField } from '../../src/domain/item.js';
import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { getPath, listAll, normalise, sellToken } from './client.js';

let sim: Simulator;
beforeEach(async () => {
  await sim?.close();
  sim = await startSimulator({ items: 60 });
});
afterAll(() => sim.close());

const byId = (items: readonly SimItem[]) => new Map(items.map((item) => [item.id, item]));

/** The fields that differ between two versions of an item. */
function differing(before: SimItem, after: SimItem): TrackedField[] {
  return (Object.keys(before) as Array<keyof SimItem>).filter(
    (key): key is TrackedField => key !== 'id' && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
  );
}

/** Checks the mutation's truth against the catalogue before and after, field by field. */
function expectTruthMatches(
  before: readonly SimItem[],
  after: readonly SimItem[],
  truth: ReturnType<Simulator['mutate']>,
) {
  const old = byId(before);
  const now = byId(after);
  expect([...now.keys()].filter((id) => !old.has(id)).sort()).toEqual([...truth.added].sort());
  expect([...old.keys()].filter((id) => !now.has(id)).sort()).toEqual([...truth.removed].sort());
  const changed = [...now.values()].filter(
    (item) => old.has(item.id) && differing(old.get(item.id) as SimItem, item).length,
  );
  expect(changed.map((item) => item.id).sort()).toEqual(truth.updated.map((u) => u.id).sort());
  for (const { id, fields } of truth.updated) {
    const was = old.get(id) as SimItem;
    const is = now.get(id) as SimItem;
    expect(Object.keys(fields).sort()).toEqual(differing(was, is).sort());
    for (const [field, change] of Object.entries(fields)) {
      expect(change).toEqual({ before: was[field as TrackedField], after: is[field as TrackedField] });
    }
  }
}

describe('mutations', () => {
  it.each([
    [{ prices: 5 }, 'price'],
    [{ quantities: 5 }, 'quantity'],
    [{ publish: 5 }, 'published'],
    [{ titles: 5 }, 'title'],
  ] as const)('%o changes exactly that many items in %s, as the truth says', (mutation, field) => {
    const before = sim.truth();
    const truth = sim.mutate(mutation);
    expect(truth.updated).toHaveLength(5);
    expect(truth.updated.every((u) => Object.keys(u.fields).join() === field)).toBe(true);
    expectTruthMatches(before, sim.truth(), truth);
  });

  it('adds new items at the front of the newest-first listing and removes others', () => {
    const before = sim.truth();
    const truth = sim.mutate({ add: 3, remove: 4 });
    expect(truth.added).toHaveLength(3);
    expect(truth.removed).toHaveLength(4);
    expect(
      sim
        .truth()
        .slice(0, 3)
        .map((item) => item.id)
        .sort(),
    ).toEqual([...truth.added].sort());
    expectTruthMatches(before, sim.truth(), truth);
  });

  it('restores removed items with their last values', () => {
    const original = sim.truth();
    const { removed } = sim.mutate({ remove: 3 });
    const truth = sim.mutate({ restore: removed });
    expect(truth).toEqual({ added: removed, removed: [], updated: [] });
    expect(sim.truth()).toEqual(original);
  });

  it('changes the JSON of prices but no value for a representation change', async () => {
    const token = (await sellToken(sim)).access;
    const before = sim.truth();
    const itemTexts = () =>
      Promise.all(before.map(async (item) => (await getPath(sim, `/v1/items/${item.id}`, token)).text()));
    const textsBefore = await itemTexts();
    const truth = sim.mutate({ representation: 10 });
    expect(truth).toEqual({ added: [], removed: [], updated: [] });
    expect(sim.truth()).toEqual(before);
    const textsAfter = await itemTexts();
    expect(textsAfter.filter((text, i) => text !== textsBefore[i])).toHaveLength(10);
    expect((await listAll(sim, token)).map(normalise)).toEqual(before);
  });

  it('never touches an item twice in one mutation', () => {
    const before = sim.truth();
    const truth = sim.mutate({ prices: 10, quantities: 10, publish: 10, titles: 10, remove: 10, add: 2 });
    const touched = [...truth.updated.map((u) => u.id), ...truth.removed];
    expect(new Set(touched).size).toBe(50);
    expectTruthMatches(before, sim.truth(), truth);
  });

  it('serves the mutated values over HTTP, and 404 for a removed item', async () => {
    const token = (await sellToken(sim)).access;
    const truth = sim.mutate({ prices: 2, titles: 2, publish: 2, remove: 1 });
    expect((await listAll(sim, token)).map(normalise)).toEqual(sim.truth());
    const gone = await getPath(sim, `/v1/items/${truth.removed[0]}`, token);
    expect(gone.status).toBe(404);
  });

  it('refuses impossible mutations and leaves the catalogue unchanged', () => {
    const before = sim.truth();
    expect(() => sim.mutate({ prices: 40, remove: 30 })).toThrow(
      'mutation touches 70 items but the catalogue lists 60',
    );
    expect(() => sim.mutate({ prices: -1 })).toThrow('mutation.prices must be a non-negative integer');
    expect(() => sim.mutate({ restore: [before[0]?.id as string] })).toThrow('it was not removed');
    expect(sim.truth()).toEqual(before);
  });
});

describe('poison', () => {
  /** The item's bytes as the listing sends them. */
  async function sentBytes(id: string): Promise<Buffer> {
    const { access } = await sellToken(sim);
    const response = await getPath(sim, `/v1/items/${id}`, access);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  }

  it('sends a member as the bytes asked for, in the listing and at its URL, until cured', async () => {
    const [first, second] = sim.truth();
    const id = (first as SimItem).id;
    const other = (second as SimItem).id;
    const truth = sim.mutate({
      poison: [
        { id, field: 'price', json: '"1e999999999"' },
        { id, field: 'quantity', json: '9223372036854775807' },
        { id, field: 'title', hex: '226d7567ff22' },
        { id: other, field: 'price', json: '"1.5"', padZeros: 1000 },
        { id: other, field: 'id', json: '{"not":"an id"}' },
        { id: other, field: 'x_new', json: 'true' },
      ],
    });
    expect(truth).toEqual({ added: [], removed: [], updated: [] });
    const bytes = await sentBytes(id);
    expect(bytes.toString('latin1')).toContain('"price":"1e999999999"');
    expect(bytes.toString('latin1')).toContain('"quantity":9223372036854775807');
    expect(bytes.includes(Buffer.from('"title":"mug\xff"', 'latin1'))).toBe(true);
    const otherText = (await sentBytes(other)).toString();
    expect(otherText).toContain(`"price":"1${'0'.repeat(1000)}.5"`);
    expect(otherText).toContain('"id":{"not":"an id"}');
    expect(otherText.endsWith(',"x_new":true}')).toBe(true);
    const { access } = await sellToken(sim);
    const listed = Buffer.concat(
      await Promise.all(
        [1, 2, 3].map(async (page) =>
          Buffer.from(
            await (await getPath(sim, `/v1/sell/shop/items?page=${page}&per_page=20`, access)).arrayBuffer(),
          ),
        ),
      ),
    );
    expect(listed.includes(bytes)).toBe(true);

    sim.mutate({ cure: [id, other] });
    expect(JSON.parse((await sentBytes(id)).toString())).toMatchObject({
      id,
      title: (first as SimItem).title,
    });
    expect(JSON.parse((await sentBytes(other)).toString())).toMatchObject({ id: other });
  });

  it('refuses a poison of an item that is not listed, or without exactly one value', () => {
    const id = (sim.truth()[0] as SimItem).id;
    expect(() => sim.mutate({ poison: [{ id: 'nope', field: 'price', json: '1' }] })).toThrow(/not listed/);
    expect(() => sim.mutate({ poison: [{ id, field: 'price' }] })).toThrow(/exactly one of json and hex/);
    expect(() => sim.mutate({ cure: ['nope'] })).toThrow(/not listed/);
  });
});
