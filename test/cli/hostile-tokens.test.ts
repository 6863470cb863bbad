import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { HOSTILE_ACCESS_TOKEN_SENTENCE, HOSTILE_ACCESS_TOKENS } from '../helpers/hostile-tokens.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/**
 * A failure retried as transient spends nearly all of the budget (its last wait would pass it); a permanent
 * one, a process start, under half of it even on a loaded machine.
 */
const BUDGET_SECONDS = 30;

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let before: Buffer;
beforeAll(async () => {
  sim = await startSimulator({ items: 60, seed: 20 });
  temp = tempDir('shop-sync-hostile-tokens-');
  env = { ...simEnv(sim, temp.dir), SYNC_RETRY_BUDGET_SECONDS: String(BUDGET_SECONDS) };
  expect((await runCli(['sync'], env)).code).toBe(0);
  before = readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv);
});
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

describe('sync against a token endpoint that hands out a token no header can carry', () => {
  it.each(HOSTILE_ACCESS_TOKENS)(
    'fails at once with one sentence naming the endpoint (%s), never echoing the token',
    async (_kind, token) => {
      sim.setFaults({ tokenValues: { accessToken: token } });
      try {
        const started = Date.now();
        const result = await runCli(['sync'], env);
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr).toBe(`shop-sync: ${HOSTILE_ACCESS_TOKEN_SENTENCE}\n`);
        // Permanent: not retried for the budget.
        expect(Date.now() - started).toBeLessThan((BUDGET_SECONDS * 1000) / 2);
      } finally {
        sim.setFaults({ tokenValues: null });
      }
    },
  );

  it('fails the same way for a refresh_token that cannot be sent back', async () => {
    sim.setFaults({ tokenValues: { refreshToken: 'refresh\r\nX-Injected: yes' } });
    try {
      const result = await runCli(['sync'], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'shop-sync: POST /v1/oauth/token (grant password) failed: the token endpoint returned a refresh_token that cannot be sent back in a request.\n',
      );
    } finally {
      sim.setFaults({ tokenValues: null });
    }
  });

  it('records the run as failed with that sentence and keeps the previous data and feeds', async () => {
    const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as {
      status: string;
      error: string | null;
    }[];
    // A failed run is resumed by the next attempt: the runs after the first are failed, none left running.
    expect(runs[0]?.status).toBe('complete');
    expect(runs.slice(1).map((r) => r.status)).toEqual(runs.slice(1).map(() => 'failed'));
    expect(runs.at(-1)?.error).toMatch(
      /^POST \/v1\/oauth\/token \(grant password\) failed: the token endpoint returned a/,
    );
    expect(Buffer.from((await runCli(['export'], env)).stdout)).toEqual(before);
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv)).toEqual(before);
    // Nothing the endpoint handed out reached a message.
    const text = JSON.stringify(runs);
    for (const [, token] of HOSTILE_ACCESS_TOKENS) expect(text).not.toContain(token.trim());
  });

  it('syncs again once the endpoint hands out proper tokens', async () => {
    const result = await runCli(['sync', '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'complete', items: 60 });
  });
});
