import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { syncEnv } from '../../bench/faults/harness.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../store/fixtures.js';

/**
 * Full syncs at LOG_LEVEL=trace through faults, token expiry and refused refreshed tokens, plus a
 * refused login: no byte of any command's output, of the feeds or of either SQLite file may hold the
 * password, the client secret or any token the marketplace issued.
 */
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
const WRONG_PASSWORD = 'wrong-password-5ecr3t';

beforeAll(async () => {
  sim = await startSimulator({ items: 300, seed: 21, expiresIn: 0.3 });
  temp = tempDir('shop-sync-secrets-');
});
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile());
}

it('never writes a secret or a token anywhere, even at trace level through faults', async () => {
  // Ten items a page at 20 ms each: a sync outlives its token and renews it mid-listing.
  const env = { ...syncEnv(sim, temp.dir, 10), LOG_LEVEL: 'trace' };
  const outputs: string[] = [];
  const run = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const result = await runCli(args, { ...env, ...extraEnv });
    outputs.push(result.stdout, result.stderr);
    return result;
  };
  sim.setFaults({ rate429: 0.05, rate5xx: 0.05, dropRate: 0.03, malformedRate: 0.03, latencyMs: 20 });
  expect((await run(['sync', '--json'])).code).toBe(0);
  sim.mutate({ prices: 10, quantities: 10, add: 3, remove: 3 });
  // Now refreshed tokens are refused: the sync logs in again mid-listing.
  sim.setFaults({ refreshDeadEnd: true });
  expect((await run(['sync', '--json'])).code).toBe(0);
  const refused = await run(['sync'], { MARKETPLACE_PASSWORD: WRONG_PASSWORD });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/refused/);
  for (const args of [['runs', '--json'], ['diff', '--format', 'json'], ['export']]) {
    expect((await run(args)).code).toBe(0);
  }

  const tokens = sim.issuedTokens();
  expect(sim.stats().tokenRequests.refresh_token).toBeGreaterThan(0);
  expect(sim.stats().faultsInjected.refreshDeadEnd).toBeGreaterThan(0);
  const secrets = [sim.credentials.password, sim.credentials.clientSecret, WRONG_PASSWORD, ...tokens];
  const places = [
    ...outputs.map((text, index) => ({ where: `command output #${index}`, text })),
    ...filesUnder(temp.dir).map((file) => ({ where: file, text: readFileSync(file).toString('latin1') })),
  ];
  expect(places.some((place) => place.where.endsWith('inventory.sqlite'))).toBe(true);
  expect(places.some((place) => place.where.endsWith('snapshot.sqlite'))).toBe(true);
  const leaks = places.flatMap(({ where, text }) =>
    secrets
      .filter((secret) => text.includes(secret))
      .map((secret) => `${where} holds ${secret.slice(0, 4)}…`),
  );
  expect(leaks).toEqual([]);
});
