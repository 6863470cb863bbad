import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type AppConfig, type ShopConfig, shopWithCredentials } from '../config/app-config.js';
import type { Change } from '../domain/change.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { type Mutation, type MutationTruth, type Simulator, startSimulator } from '../simulator/index.js';
import { diffRuns } from '../store/diff-runs.js';
import { openStore } from '../store/open.js';
import { type ShopPaths, shopPaths } from '../store/paths.js';
import { runSync, type SyncSummary } from '../sync/index.js';

/** The demo always uses this shop name, so its files sit apart from real shops' under DATA_DIR. */
export const DEMO_SHOP = 'demo';

/** Marks the demo shop's directory as the demo's own, to be replaced by the next demo. */
const MARKER = '.shop-sync-demo';

/** A little of everything a diff can show, small enough for the smallest demo catalogue. */
export const DEMO_MUTATION: Readonly<Mutation> = Object.freeze({
  prices: 4,
  quantities: 4,
  publish: 2,
  titles: 2,
  add: 3,
  remove: 2,
});

export interface DemoOptions {
  readonly items: number;
  readonly seed: number;
  /** Settings other than the shops (data dir, gzip, retention) come from here. */
  readonly config: AppConfig;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

export interface DemoResult {
  readonly baseUrl: string;
  readonly first: SyncSummary;
  readonly mutation: MutationTruth;
  readonly second: SyncSummary;
  /** Between the demo's two runs. */
  readonly changes: readonly Change[];
  readonly paths: ShopPaths;
}

/**
 * End to end against the bundled simulator: sync, change the catalogue, sync again, diff. Each demo
 * starts from an empty demo shop: the previous demo's store remembers items of a simulator that is
 * gone (on another port), so its runs would mean nothing to this one. Only a directory the demo made
 * itself is replaced.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const paths = shopPaths(options.config.dataDir, DEMO_SHOP);
  await freshDemoDir(paths);
  const simulator = await startSimulator({ items: options.items, seed: options.seed, port: 0 });
  try {
    const shop = demoShop(simulator);
    const config: AppConfig = { ...options.config, shops: { [DEMO_SHOP]: shop }, defaultShop: DEMO_SHOP };
    const deps = { config, log: options.log, ...(options.signal ? { signal: options.signal } : {}) };
    const first = await runSync(shop, deps);
    const mutation = simulator.mutate(DEMO_MUTATION);
    const second = await runSync(shop, deps);
    return {
      baseUrl: simulator.baseUrl,
      first,
      mutation,
      second,
      changes: changesBetween(paths, first, second),
      paths,
    };
  } finally {
    await simulator.close();
  }
}

async function freshDemoDir(paths: ShopPaths): Promise<void> {
  const marker = path.join(paths.dir, MARKER);
  if (existsSync(paths.dir) && !existsSync(marker)) {
    throw new UsageError(
      `${paths.dir} exists and was not made by the demo, which would replace it: give the demo another --data-dir.`,
    );
  }
  await rm(paths.dir, { recursive: true, force: true });
  await mkdir(paths.dir, { recursive: true });
  await writeFile(marker, 'Made by "shop-sync demo", which replaces this directory each time it runs.\n');
}

function demoShop(simulator: Simulator): ShopConfig {
  return shopWithCredentials(DEMO_SHOP, { baseUrl: simulator.baseUrl, ...simulator.credentials });
}

function changesBetween(paths: ShopPaths, first: SyncSummary, second: SyncSummary): Change[] {
  const store = openStore(paths.store);
  try {
    return [...diffRuns(store, first.run, second.run)];
  } finally {
    store.close();
  }
}
