import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'vitest';
import { SHOP, syncEnv } from '../../bench/faults/harness.js';
import { runProblems, viewRun } from '../../bench/faults/survivors.js';
import { startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { syncWhileChurning } from '../helpers/moving-listing.js';
import { tempDir } from '../store/fixtures.js';

it('dbg filtered', async () => {
  const sim = await startSimulator({ items: 3000, seed: 20 });
  const configs = [
    { deleteBehind: 3, insertBehind: 1 },
    { deleteBehind: 3, insertAhead: 1 },
    { deleteBehind: 2, deleteAhead: 1, insertBehind: 1 },
  ];
  for (const inFlight of ['1', '8']) for (const churn of configs) {
    const temp = tempDir('dbg-');
    const config = path.join(temp.dir, 'shops.json');
    writeFileSync(config, JSON.stringify({ shops: { [SHOP]: { filters: { shipping_to: 'IT' } } } }));
    const env = { ...syncEnv(sim, temp.dir, 40), SHOP_SYNC_CONFIG: config, SYNC_MAX_IN_FLIGHT: inFlight };
    await runCli(['sync', '--json'], env);
    const c = await syncWhileChurning(sim, env, churn, { query: 'f.shipping_to=IT' });
    console.log(inFlight, JSON.stringify(churn), c.result.stdout.trim(), runProblems(c.span, viewRun(shopPaths(temp.dir, SHOP), c.summary!.run)));
    temp.cleanup();
  }
  await sim.close();
}, 300_000);
