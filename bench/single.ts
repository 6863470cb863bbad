import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { shopPaths } from '../src/store/paths.js';
import type { BaselineShop } from './baseline-client.js';
import { BASELINE, type ChildFigures, CLI, fileSize, measure, mib } from './child.js';
import { type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';

/** One measured process of the single-shop run. */
export interface Row {
  name: string;
  latencyMs: number;
  wallMs: number;
  /** Wall time against the baseline client at the same latency. */
  timeVsBaseline: number;
  cpuMs: number;
  /** CPU time against the baseline client's (less sensitive to a busy machine than wall time). */
  cpuVsBaseline: number;
  peakRssMiB: number;
  loopMaxMs: number;
  walMaxMiB: number | null;
  /** `inventory.sqlite` (with its WAL) after the command. */
  storeMiB: number | null;
  /** Listing requests the simulator answered during the process (the extra cost of a reader's checks). */
  listingRequests: number | null;
}

export interface SingleResult {
  items: number;
  rows: Row[];
  sizes: {
    inventoryCsvMiB: number;
    storeMiB: number;
    snapshotSqliteMiB: number;
    storeVsCsv: number;
    snapshotVsCsv: number;
  };
}

const SHOP = 'default';
const round2 = (n: number) => Math.round(n * 100) / 100;

interface SyncJson {
  status: string;
  items: number;
  updated: number;
}

/** Each command of the run in order, with its figures against the baseline of the same latency. */
class SingleRun {
  readonly rows: Row[] = [];
  private reference = { wallMs: 0, cpuMs: 0 };

  constructor(
    private readonly sim: SimulatorProcess,
    private readonly root: string,
    private readonly items: number,
  ) {}

  env(dataDir: string): Record<string, string> {
    return {
      DATA_DIR: dataDir,
      MARKETPLACE_BASE_URL: this.sim.baseUrl,
      MARKETPLACE_CLIENT_ID: 'demo-client',
      MARKETPLACE_CLIENT_SECRET: 'demo-secret',
      MARKETPLACE_USERNAME: 'demo-owner',
      MARKETPLACE_PASSWORD: 'demo-password',
      SYNC_PER_PAGE: '100',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
    };
  }

  async baseline(latencyMs: number): Promise<void> {
    const shops: BaselineShop[] = [
      {
        baseUrl: this.sim.baseUrl,
        clientId: 'demo-client',
        clientSecret: 'demo-secret',
        username: 'demo-owner',
        password: 'demo-password',
        items: this.items,
      },
    ];
    const file = path.join(this.root, 'baseline-shops.json');
    writeFileSync(file, JSON.stringify(shops));
    const before = await this.listingRequests();
    const figures = await measure(BASELINE, ['--shops', file, '--in-flight', '1']);
    this.reference = figures;
    this.record(
      `baseline client (${latencyMs} ms)`,
      latencyMs,
      figures,
      null,
      (await this.listingRequests()) - before,
    );
  }

  /** `sync --json`, checked: complete, every item, and exactly the changed items as updated. */
  async sync(name: string, latencyMs: number, dataDir: string, updated: number | null): Promise<void> {
    const store = shopPaths(dataDir, SHOP).store;
    const before = await this.listingRequests();
    const figures = await measure(CLI, ['sync', '--json'], { env: this.env(dataDir), watch: `${store}-wal` });
    const listingRequests = (await this.listingRequests()) - before;
    const summary = JSON.parse(figures.stdout) as SyncJson;
    if (summary.status !== 'complete' || summary.items !== this.items) {
      throw new Error(
        `${name}: expected a complete run of ${this.items} items, got ${figures.stdout.trim()}`,
      );
    }
    if (updated !== null && summary.updated !== updated) {
      throw new Error(`${name}: expected ${updated} updated items, got ${summary.updated}`);
    }
    this.record(name, latencyMs, figures, dataDir, listingRequests);
  }

  private async listingRequests(): Promise<number> {
    return (await this.sim.stats()).listingRequests;
  }

  /** What every command pays before it starts: loading the CLI (its event-loop block included). */
  async startUp(): Promise<void> {
    this.record('CLI start-up only (--help)', 0, await measure(CLI, ['--help']), null);
  }

  async command(name: string, args: readonly string[], dataDir: string): Promise<void> {
    const figures = await measure(CLI, args, { env: this.env(dataDir) });
    this.record(name, 0, figures, dataDir);
  }

  private record(
    name: string,
    latencyMs: number,
    figures: ChildFigures,
    dataDir: string | null,
    listingRequests: number | null = null,
  ): void {
    const store = dataDir ? shopPaths(dataDir, SHOP).store : null;
    this.rows.push({
      name,
      latencyMs,
      wallMs: figures.wallMs,
      timeVsBaseline: round2(figures.wallMs / this.reference.wallMs),
      cpuMs: figures.cpuMs,
      cpuVsBaseline: round2(figures.cpuMs / this.reference.cpuMs),
      peakRssMiB: figures.peakRssMiB,
      loopMaxMs: figures.loopMaxMs,
      walMaxMiB: figures.watchedMaxMiB,
      storeMiB: store ? mib(fileSize(store) + fileSize(`${store}-wal`)) : null,
      listingRequests,
    });
  }
}

/**
 * Against a simulator process of `items` items, at each latency in turn: the baseline, a first sync,
 * an unchanged and a 1 % resync; at the first latency also the CLI's start-up, `diff` and `export`.
 */
export async function runSingle(
  items: number,
  latencies: readonly number[],
  root: string,
): Promise<SingleResult> {
  const sim = await startSimulatorProcess(['--items', String(items), '--per-page-cap', '100']);
  const percent = Math.max(1, Math.round(items / 200));
  const dataDirs = latencies.map((latencyMs) => path.join(root, `data-${latencyMs}ms`));
  const fast = dataDirs[0];
  if (fast === undefined) throw new RangeError('at least one latency is measured');
  try {
    const run = new SingleRun(sim, root, items);
    for (const [i, latencyMs] of latencies.entries()) {
      const dataDir = dataDirs[i] as string;
      mkdirSync(dataDir);
      await sim.setFaults({ latencyMs });
      await run.baseline(latencyMs);
      if (i === 0) await run.startUp();
      await run.sync(`first sync (${latencyMs} ms)`, latencyMs, dataDir, null);
      await run.sync(`unchanged resync (${latencyMs} ms)`, latencyMs, dataDir, 0);
      await sim.mutate({ prices: percent, quantities: percent });
      await run.sync(`1 % resync (${latencyMs} ms)`, latencyMs, dataDir, 2 * percent);
      if (i > 0) continue;
      const diffCsv = path.join(root, 'diff.csv');
      await run.command('diff of the last two runs', ['diff', '--format', 'csv', '--out', diffCsv], dataDir);
      const exportCsv = path.join(root, 'export.csv');
      await run.command('export --format csv', ['export', '--format', 'csv', '--out', exportCsv], dataDir);
    }
    const paths = shopPaths(fast, SHOP);
    const csv = fileSize(paths.inventoryCsv);
    const store = fileSize(paths.store) + fileSize(`${paths.store}-wal`);
    const snapshot = fileSize(paths.snapshotSqlite);
    return {
      items,
      rows: run.rows,
      sizes: {
        inventoryCsvMiB: mib(csv),
        storeMiB: mib(store),
        snapshotSqliteMiB: mib(snapshot),
        storeVsCsv: round2(store / csv),
        snapshotVsCsv: round2(snapshot / csv),
      },
    };
  } finally {
    await sim.close();
  }
}
