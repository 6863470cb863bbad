import { it } from 'vitest';
import { startSimulator } from '../src/simulator/index.js';
import { clientFor, readAll } from './api/helpers.js';

it('dbg', async () => {
  const sim = await startSimulator({ items: 300, seed: 3 });
  sim.setFaults({ moving: { insertBeforeEvery: Number(process.env.INS ?? 1), removeBehindEvery: Number(process.env.REM ?? 0) } });
  try {
    const r = await readAll(clientFor(sim), { perPage: 20, maxInFlight: Number(process.env.MIF ?? 1) });
    console.error('items', new Set(r.items.map((i) => i.id)).size, 'requests', sim.stats().listingRequests);
  } finally {
    await sim.close();
  }
});
