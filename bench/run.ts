import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MarketplaceClient } from '../src/api/client.js';
import { findShop, loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startSimulator } from '../src/simulator/index.js';
import { runSync } from '../src/sync.js';
import { measureFeedMemory } from './feeds.js';
import { measureSimulatorPagesPerSecond } from './simulator.js';

/**
 * `npm run bench`: throughput and memory of each stage, each figure given as a ratio against a
 * baseline measured in the same run, so that results compare across machines.
 */

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    'feed-items': { type: 'string', default: '1000000' },
  },
});
const items = Number(values.items);
const feedItems = Number(values['feed-items']);

type Credentials = { clientId: string; clientSecret: string; username: string; password: string };

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
const ratio = (a: number, b: number) => (a / b).toFixed(2);

function line(label: string, figure: string, versus: string): void {
  process.stdout.write(`${label.padEnd(44)} ${figure.padStart(16)}   ${versus}\n`);
}

async function readAll(baseUrl: string, credentials: Credentials, concurrency: number): Promise<number> {
  const client = new MarketplaceClient({ baseUrl, ...credentials });
  const started = performance.now();
  let count = 0;
  try {
    for await (const page of client.readItems({ perPage: 100, maxInFlight: concurrency }))
      count += page.items.length;
  } finally {
    await client.close();
  }
  if (count !== items) throw new Error(`read ${count} items, expected ${items}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  process.stdout.write(`shop-sync benchmark: ${items} items, 100 per page, simulator in this process\n\n`);

  // First, while the process is small: peak RSS is what this measures.
  const small = await measureFeedMemory(1000);
  const large = await measureFeedMemory(feedItems);
  line('feeds, peak RSS writing 1,000 items', `${small.rssPeakMiB} MiB`, 'baseline C');
  line(
    `feeds, peak RSS writing ${feedItems} items`,
    `${large.rssPeakMiB} MiB`,
    `${ratio(large.rssPeakMiB, small.rssPeakMiB)}x C for ${ratio(feedItems, 1000)}x the items`,
  );
  line(
    `feeds, time at ${feedItems} items`,
    `${large.seconds} s`,
    `${rate(feedItems, large.seconds * 1000)} items/s`,
  );

  const server = await measureSimulatorPagesPerSecond({ items, perPage: 100, concurrency: 1 });
  const prerendered = await measureSimulatorPagesPerSecond({
    items,
    perPage: 100,
    concurrency: 1,
    prerender: true,
  });
  line('simulator, pages of 100 served per second', `${Math.round(server.pagesPerSecond)}/s`, 'baseline A');
  line(
    'simulator, first pass, rendering as it goes',
    `${Math.round(server.firstPassPagesPerSecond)}/s`,
    `${ratio(server.firstPassPagesPerSecond, server.pagesPerSecond)}x A`,
  );
  line(
    'simulator, first pass after prerender',
    `${Math.round(prerendered.firstPassPagesPerSecond)}/s`,
    `${ratio(prerendered.firstPassPagesPerSecond, server.pagesPerSecond)}x A`,
  );

  const sim = await startSimulator({ items, perPageCap: 100 });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shop-sync-bench-'));
  try {
    const { clientId, clientSecret, username, password } = sim.credentials;
    const credentials = { clientId, clientSecret, username, password };
    await readAll(sim.baseUrl, credentials, 4);
    const serial = await readAll(sim.baseUrl, credentials, 1);
    const ahead = await readAll(sim.baseUrl, credentials, 4);
    line('client read, one page at a time', `${rate(items, serial)} items/s`, 'baseline B');
    line('client read, 4 pages ahead', `${rate(items, ahead)} items/s`, `${ratio(serial, ahead)}x B`);
    // Over a network each page waits for a round trip: that is what reading ahead is for.
    sim.setFaults({ latencyMs: 5 });
    const serialSlow = await readAll(sim.baseUrl, credentials, 1);
    const aheadSlow = await readAll(sim.baseUrl, credentials, 4);
    sim.setFaults({ latencyMs: 0 });
    line('client read, 5 ms latency, one at a time', `${rate(items, serialSlow)} items/s`, 'baseline D');
    line(
      'client read, 5 ms latency, 4 pages ahead',
      `${rate(items, aheadSlow)} items/s`,
      `${ratio(serialSlow, aheadSlow)}x D`,
    );

    const config = loadConfig({
      DATA_DIR: dataDir,
      MARKETPLACE_BASE_URL: sim.baseUrl,
      MARKETPLACE_CLIENT_ID: clientId,
      MARKETPLACE_CLIENT_SECRET: clientSecret,
      MARKETPLACE_USERNAME: username,
      MARKETPLACE_PASSWORD: password,
    });
    const shop = findShop(config, undefined);
    const first = await runSync(shop, { config, log: silentLogger() });
    line(
      'first sync (all new), feeds included',
      `${rate(items, first.duration_ms)} items/s`,
      `${ratio(first.duration_ms, ahead)}x the time of a read`,
    );
    sim.mutate({ prices: Math.ceil(items / 100), quantities: Math.ceil(items / 100) });
    const second = await runSync(shop, { config, log: silentLogger() });
    line(
      'second sync (2 % changed), feeds included',
      `${rate(items, second.duration_ms)} items/s`,
      `${ratio(second.duration_ms, ahead)}x the time of a read`,
    );
  } finally {
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
