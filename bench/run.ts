import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_REDIS_URL, type FleetResult, runFleet } from './fleet-bench.js';
import { runScale, type ScaleResult } from './fleet-scale.js';
import { runSingle, type SingleResult } from './single.js';

/**
 * `npm run bench [-- --items N --latencies 0,30]`: one shop against a simulator process, every figure a
 * ratio against the baseline client of the same run. `npm run bench -- --fleet [--shops S --shop-items M
 * --workers 1,2 --redis-url URL]`: many shops (100 x 2,000) through Redis and worker processes. `npm run
 * bench -- --scale [--shops S --shop-items M --redis-url URL]`: a thousand small shops (1,000 x 20) on one
 * worker: its start-up, Redis connections, memory, first syncs and shutdown. Each run writes its figures
 * to bench/results/.
 */

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    fleet: { type: 'boolean', default: false },
    scale: { type: 'boolean', default: false },
    shops: { type: 'string' },
    'shop-items': { type: 'string' },
    latencies: { type: 'string', default: '0,30' },
    workers: { type: 'string', default: '1,2' },
    'redis-url': { type: 'string', default: BENCH_REDIS_URL },
    out: { type: 'string', default: path.join(REPO, 'bench/results') },
  },
});

function count(name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
  return n;
}

function counts(name: string, text: string | undefined, min: number): number[] {
  const list = (text ?? '').split(',').map(Number);
  if (!list.every((n) => Number.isInteger(n) && n >= min))
    throw new Error(`--${name} must be integers >= ${min} separated by commas, got ${text}`);
  return list;
}

function git(args: readonly string[]): string {
  return execFileSync('git', args, { cwd: REPO, encoding: 'utf8' }).trim();
}

function commit(): string {
  const short = git(['rev-parse', '--short', 'HEAD']);
  return git(['status', '--porcelain', '--untracked-files=no']) === '' ? short : `${short}-dirty`;
}

function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

function table(header: readonly string[], rows: ReadonlyArray<readonly (string | number | null)[]>): void {
  const cells = [header, ...rows.map((row) => row.map((cell) => (cell === null ? '-' : String(cell))))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  for (const row of cells) {
    const line = row.map((cell, i) =>
      i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0),
    );
    process.stdout.write(`${line.join('  ')}\n`);
  }
  process.stdout.write('\n');
}

function printSingle(result: SingleResult): void {
  process.stdout.write(
    `shop-sync benchmark: ${result.items} items, 100 a page, simulator in its own process\n\n`,
  );
  table(
    [
      'process',
      'wall s',
      'x baseline',
      'CPU s',
      'x baseline',
      'peak RSS MiB',
      'loop block ms',
      'max WAL MiB',
      'store MiB',
      'listing requests',
    ],
    result.rows.map((row) => [
      row.name,
      (row.wallMs / 1000).toFixed(2),
      row.timeVsBaseline.toFixed(2),
      (row.cpuMs / 1000).toFixed(2),
      row.cpuVsBaseline.toFixed(2),
      row.peakRssMiB,
      row.loopMaxMs,
      row.walMaxMiB,
      row.storeMiB,
      row.listingRequests,
    ]),
  );
  const { sizes } = result;
  process.stdout.write(
    `after 3 runs: inventory.sqlite ${sizes.storeMiB} MiB = ${sizes.storeVsCsv}x inventory.csv (${sizes.inventoryCsvMiB} MiB); ` +
      `snapshot.sqlite ${sizes.snapshotSqliteMiB} MiB = ${sizes.snapshotVsCsv}x inventory.csv\n`,
  );
}

function printScale(result: ScaleResult): void {
  process.stdout.write(
    `shop-sync fleet-scale benchmark: ${result.shops} shops x ${result.itemsPerShop} items, ${result.latencyMs} ms a request, one worker (WORKER_CONCURRENCY=${result.concurrency}, UV_THREADPOOL_SIZE=${result.threadpool})\n\n`,
  );
  const { first, baseline } = result;
  table(
    ['process', 'wall s', 'shops/s', 'x baseline', 'CPU ms/shop', 'x baseline', 'peak RSS MiB'],
    [
      [
        `baseline client (${result.concurrency} in flight)`,
        (baseline.wallMs / 1000).toFixed(2),
        baseline.shopsPerSecond,
        '1.00',
        baseline.cpuPerShopMs,
        '1.00',
        baseline.peakRssMiB,
      ],
      [
        'worker: first syncs',
        (first.wallMs / 1000).toFixed(2),
        first.shopsPerSecond,
        first.shopsPerSecondVsBaseline.toFixed(2),
        first.cpuPerShopMs,
        first.cpuPerShopVsBaseline.toFixed(2),
        first.peakRssMiB,
      ],
    ],
  );
  table(
    ['worker', 'figure'],
    [
      ['start-up until `worker started`', `${(result.startupMs / 1000).toFixed(2)} s`],
      [
        'Redis connections held (idle / peak in the round)',
        `${result.connections.idle} / ${result.connections.peak}`,
      ],
      [
        'CLIENT LIST before / after start-up (whole server)',
        `${result.clientList.before} / ${result.clientList.after}`,
      ],
      ['idle RSS', `${result.idleRssMiB} MiB`],
      ['shutdown (SIGTERM until exit)', `${(result.shutdownMs / 1000).toFixed(2)} s`],
      ['longest event-loop block', `${result.loopMaxMs} ms`],
    ],
  );
  process.stdout.write(
    'bars: <= 10 connections (goal 5); start-up <= 3 s; idle RSS <= 150 MiB; >= 60 shops/s; peak RSS <= 250 MiB\n',
  );
}

function printFleet(result: FleetResult): void {
  process.stdout.write(
    `shop-sync fleet benchmark: ${result.shops} shops x ${result.itemsPerShop} items, ${result.latencyMs} ms a request, worker processes through Redis\n\n`,
  );
  table(
    [
      'workers',
      'round',
      'until all done s',
      'items/s',
      'x baseline',
      'CPU ms/shop',
      'x baseline',
      'peak RSS MiB',
      'logins',
      'listing requests/shop',
    ],
    result.runs.flatMap((run) => [
      [
        `${run.workers} (${run.inFlight} in flight)`,
        'baseline client',
        (run.baseline.wallMs / 1000).toFixed(2),
        run.baseline.itemsPerSecond,
        '1.00',
        run.baseline.cpuPerShopMs,
        '1.00',
        run.baseline.peakRssMiB,
        result.shops,
        null,
      ],
      ...run.rounds.map((round) => [
        '',
        round.name,
        (round.wallMs / 1000).toFixed(2),
        round.itemsPerSecond,
        round.itemsPerSecondVsBaseline.toFixed(2),
        round.cpuPerShopMs,
        round.cpuPerShopVsBaseline.toFixed(2),
        round.peakRssMiB,
        round.passwordLogins,
        round.listingRequestsPerShop,
      ]),
    ]),
  );
  const blocks = result.runs.map((run) => `${run.workers} worker(s) ${run.loopMaxMs} ms`).join(', ');
  process.stdout.write(`longest event-loop block in a worker process (start-up included): ${blocks}\n`);
  process.stdout.write(
    'goals: first syncs items/s >= 0.6x the baseline; unchanged resync CPU/shop <= 1.5x the baseline\n',
  );
}

async function main(): Promise<void> {
  const started = new Date();
  const root = mkdtempSync(path.join(os.tmpdir(), 'shop-sync-bench-'));
  const before = machine();
  let result: { single: SingleResult } | { fleet: FleetResult } | { scale: ScaleResult };
  try {
    result = values.scale
      ? {
          scale: await runScale(
            count('shops', values.shops ?? '1000'),
            count('shop-items', values['shop-items'] ?? '20'),
            root,
            values['redis-url'],
          ),
        }
      : values.fleet
        ? {
            fleet: await runFleet(
              count('shops', values.shops ?? '100'),
              count('shop-items', values['shop-items'] ?? '2000'),
              counts('workers', values.workers, 1),
              root,
              values['redis-url'],
            ),
          }
        : {
            single: await runSingle(
              count('items', values.items),
              counts('latencies', values.latencies, 0),
              root,
            ),
          };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  if ('fleet' in result) printFleet(result.fleet);
  else if ('scale' in result) printScale(result.scale);
  else printSingle(result.single);
  // To the second: runs started in the same minute each keep their file.
  const name = `${started.toISOString().slice(0, 19).replace(/:/g, '')}-${commit()}${values.scale ? '-scale' : values.fleet ? '-fleet' : ''}.json`;
  mkdirSync(values.out, { recursive: true });
  const file = path.join(values.out, name);
  const loadAverageAfter = machine().loadAverage;
  writeFileSync(
    file,
    `${JSON.stringify({ date: started.toISOString(), commit: commit(), machine: { ...before, loadAverageAfter }, ...result }, null, 2)}\n`,
  );
  process.stdout.write(`\nwritten to ${path.relative(process.cwd(), file)}\n`);
}

await main();
