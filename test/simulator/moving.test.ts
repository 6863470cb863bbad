import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { getPath, type Json, listPage, sellToken } from './client.js';

let sim: Simulator;
afterEach(() => sim.close());

async function readAllPages(perPage: number): Promise<string[]> {
  const token = (await sellToken(sim)).access;
  const seen: string[] = [];
  for (let page = 1; ; page += 1) {
    const items: Json[] = await listPage(sim, token, `per_page=${perPage}&page=${page}`);
    if (items.length === 0) return seen;
    seen.push(...items.map((item) => String(item.id)));
  }
}

describe('a listing that moves while it is read', () => {
  it('inserts new items at the front, so the reader sees the boundary item twice', async () => {
    sim = await startSimulator({
      items: 50,
      faults: { moving: { insertBeforeEvery: 2, removeBehindEvery: 0 } },
    });
    const truthBefore = sim.truth().map((item) => item.id);
    const seen = await readAllPages(10);
    const inserts = sim.moves().filter((move) => move.kind === 'insert');
    expect(inserts.length).toBeGreaterThan(0);
    const repeated = seen.filter((id, i) => seen.indexOf(id) !== i);
    expect(repeated.sort()).toEqual(
      inserts
        .map((move) => move.affectedId)
        .filter((id) => id !== null)
        .sort(),
    );
    expect(new Set(seen)).toEqual(new Set(truthBefore));
    const truth = sim.truth().map((item) => item.id);
    expect(truth.slice(0, inserts.length).sort()).toEqual(inserts.map((move) => move.id).sort());
    expect(sim.stats().faultsInjected.moveInsert).toBe(inserts.length);
  });

  it('removes items behind the reader, so the reader skips an item that is still listed', async () => {
    sim = await startSimulator({
      items: 50,
      faults: { moving: { insertBeforeEvery: 0, removeBehindEvery: 2 } },
    });
    const seen = await readAllPages(10);
    const removals = sim.moves().filter((move) => move.kind === 'remove');
    expect(removals.length).toBeGreaterThan(0);
    const listed = new Set(sim.truth().map((item) => item.id));
    const skipped = removals.map((move) => move.affectedId).filter((id): id is string => id !== null);
    expect(skipped.length).toBeGreaterThan(0);
    for (const id of skipped) {
      expect(seen).not.toContain(id);
      expect(listed.has(id)).toBe(true);
    }
    expect([...listed].filter((id) => !seen.includes(id)).sort()).toEqual([...skipped].sort());
    for (const move of removals) expect(listed.has(move.id)).toBe(false);
  });

  it('still serves a skipped item at its url, so a client can confirm it exists', async () => {
    sim = await startSimulator({
      items: 30,
      faults: { moving: { insertBeforeEvery: 0, removeBehindEvery: 1 } },
    });
    await readAllPages(5);
    const skipped = sim.moves().find((move) => move.affectedId !== null)?.affectedId;
    const response = await getPath(sim, `/v1/items/${skipped}`, (await sellToken(sim)).access);
    expect(response.status).toBe(200);
  });
});
