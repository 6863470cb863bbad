import { readFileSync, rmSync, writeFileSync } from 'node:fs';
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

describe('shop-sync sync when the feeds cannot be written', () => {
  it('exits 1 saying the feeds path is a file, leaves it as it was, and catches up on the next sync', async () => {
    const env = simEnv(sim, temp.dir);
    const paths = shopPaths(temp.dir, 'shop');
    expect((await runCli(['sync'], env)).code).toBe(0);
    const truth = sim.mutate({ prices: 4, remove: 1 });
    rmSync(paths.feedsDir);
    writeFileSync(paths.feedsDir, 'a file in the way');

    const result = await runCli(['sync'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `shop-sync: Cannot write the feeds of shop shop: ${paths.feedsDir} is a file where a directory is needed.\n`,
    );
    expect(readFileSync(paths.feedsDir, 'utf8')).toBe('a file in the way');
    const lagging = await runCli(['runs'], env);
    expect(lagging.stdout).toContain(
      'The feeds reflect run 1, not the latest complete run 2: their last publication failed.',
    );

    rmSync(paths.feedsDir);
    expect((await runCli(['sync'], env)).code).toBe(0);
    expect((await runCli(['runs'], env)).stdout).not.toContain('The feeds reflect');
    const changes = readFileSync(paths.changesCsv, 'utf8').trim().split('\n');
    const kinds = changes.slice(1).map((line) => line.split(',')[0]);
    expect(kinds.filter((kind) => kind === 'removed')).toHaveLength(truth.removed.length);
    expect(kinds.filter((kind) => kind === 'updated')).toHaveLength(truth.updated.length);
    expect(kinds).toHaveLength(truth.removed.length + truth.updated.length);
  });
});
