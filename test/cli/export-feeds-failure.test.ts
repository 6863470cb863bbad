import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  sim = await startSimulator({ items: 120, seed: 9 });
  temp = tempDir('shop-sync-feeds-failure-');
});
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

describe('shop-sync sync when a feed cannot be replaced', () => {
  it('exits 1 naming the feed and leaves the previous feeds as they were', async () => {
    const env = simEnv(sim, temp.dir);
    const paths = shopPaths(temp.dir, 'shop');
    expect((await runCli(['sync'], env)).code).toBe(0);
    const previous = {
      inventory: readFileSync(paths.inventoryCsv),
      snapshot: readFileSync(paths.snapshotSqlite),
    };
    sim.mutate({ prices: 4, remove: 1 });
    rmSync(paths.changesCsv);
    mkdirSync(paths.changesCsv);

    const result = await runCli(['sync'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `shop-sync: Cannot write feed ${paths.changesCsv}: EISDIR illegal operation on a directory\n`,
    );
    expect(readFileSync(paths.inventoryCsv)).toEqual(previous.inventory);
    expect(readFileSync(paths.snapshotSqlite)).toEqual(previous.snapshot);
    expect(readdirSync(paths.feedsDir).sort()).toEqual(['changes.csv', 'inventory.csv', 'snapshot.sqlite']);
  });
});
