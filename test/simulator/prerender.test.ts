import { expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { getPath, sellToken } from './client.js';

async function firstPages(sim: Simulator): Promise<string[]> {
  const { access } = await sellToken(sim);
  const bodies: string[] = [];
  for (let page = 1; page <= 4; page += 1) {
    const response = await getPath(sim, `/v1/sell/shop/items?page=${page}&per_page=100`, access);
    bodies.push((await response.text()).replaceAll(sim.baseUrl, 'BASE'));
  }
  return bodies;
}

it('serves the same pages, byte for byte, whether items were prerendered or rendered on first read', async () => {
  const cold = await startSimulator({ items: 300, seed: 9 });
  const warm = await startSimulator({ items: 300, seed: 9 });
  try {
    await warm.prerender();
    const coldPages = await firstPages(cold);
    expect(await firstPages(warm)).toEqual(coldPages);
    expect(coldPages.slice(0, 3).map((body) => (JSON.parse(body) as unknown[]).length)).toEqual([
      100, 100, 100,
    ]);
    expect(coldPages[3]).toBe('[]');
  } finally {
    await Promise.all([cold.close(), warm.close()]);
  }
});
