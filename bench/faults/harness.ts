import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { exportRun } from '../../src/cli/export-run.js';
import { snapshotRun } from '../../src/export/formats/snapshot-sqlite.js';
import type { ChurnFault, FaultKind, Faults, Mutation, Simulator } from '../../src/simulator/index.js';
import { NO_FAULTS } from '../../src/simulator/index.js';
import { openStore, type Store } from '../../src/store/open.js';
import { type ShopPaths, shopPaths } from '../../src/store/paths.js';
import { publishedRun } from '../../src/store/published.js';
import { latestCompleteRun, listRuns } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import type { SyncPoint } from '../../src/sync/index.js';
import { CLI, CRASH_CHILD, type ProcessResult, runNode } from './processes.js';
import {
  type ListingSpan,
  ListingWatch,
  lostSurvivors,
  runProblems,
  settlingProblems,
  viewRun,
} from './survivors.js';
import {
  type ChangeKey,
  changedFields,
  changeKey,
  compareChanges,
  expectedChanges,
  parseCsv,
  type Truth,
  truthOf,
} from './truth.js';

/** Every point where a sync can be killed, in the order a sync passes them. */
export const CRASH_POINTS: readonly SyncPoint[] = [
  'page-staged',
  'read',
  'removals-confirmed',
  'committed',
  'feed-prepared',
  'feeds-renamed',
  'published',
];

export const SHOP = 'shop';

export interface CrashCase {
  /** Where the crashing sync is killed: the `nth` time it reaches `point`. */
  readonly point: SyncPoint;
  readonly nth: number;
  /** The catalogue change the crashing sync was reading. */
  readonly mutation: Mutation;
  /** Faults the marketplace serves during the crashing sync and the recovery (retries absorb them). */
  readonly faults?: Partial<Faults>;
  readonly perPage?: number;
  /**
   * The shop sells and lists items from the start of the crashing sync to the end of the sync after it
   * (which resumes the killed run when it was killed while reading): every item listed all along must be
   * in the run that completes, and the next quiet sync must report only true changes.
   */
  readonly churn?: Partial<ChurnFault>;
  /** SYNC_MAX_IN_FLIGHT of both syncs (the default otherwise). */
  readonly maxInFlight?: number;
  /**
   * The crashing sync is the shop's first (no baseline sync before it): killed, it must leave no complete
   * run and no feeds, and the next sync must publish every item (and no changes: its feeds are the first).
   */
  readonly firstSync?: boolean;
}

export interface CaseOutcome {
  /** Whether the crashing sync was killed (false: it never reached the point and completed). */
  readonly killed: boolean;
  /** Every broken promise found, one sentence each; empty when the case passed. */
  readonly problems: string[];
  readonly itemsCompared: number;
  readonly changesCompared: number;
  readonly faultsServed: Readonly<Record<FaultKind, number>>;
  /** Churn cases: the items listed from the crashing sync's start to the recovery's end. */
  readonly survivors: number;
  /** Churn cases: survivors missing from the run that completed, or reported removed. */
  readonly survivorsLost: number;
}

/**
 * One crash case, start to finish, against `sim` with a fresh data directory:
 * 1. a clean sync publishes a baseline (unless the case is of a first sync);
 * 2. the catalogue changes, and a sync of it is SIGKILLed at the case's point;
 * 3. the store must pass `integrity_check` and the feeds must be exactly those of the store's
 *    published run (a reader never sees a half-published state);
 * 4. the next sync (the CLI, as users run it) must exit 0 with the catalogue's exact truth, and its
 *    changes feed must hold every change since the previously published feeds, and nothing else.
 */
export async function runCrashCase(sim: Simulator, c: CrashCase): Promise<CaseOutcome> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shop-sync-crash-'));
  const paths = shopPaths(dataDir, SHOP);
  const env = syncEnv(sim, dataDir, c.perPage ?? 40);
  if (c.maxInFlight !== undefined) env.SYNC_MAX_IN_FLIGHT = String(c.maxInFlight);
  const faultsBefore = sim.stats().faultsInjected;
  const problems: string[] = [];
  const truthAtRun = new Map<number, Truth>();
  try {
    sim.setFaults(NO_FAULTS);
    if (!c.firstSync) problems.push(...(await cleanSync(env, 'the baseline sync', sim, truthAtRun)));
    sim.mutate(c.mutation);
    const changed = truthOf(sim.truth());
    const watch = c.churn ? ListingWatch.start(sim) : undefined;
    sim.setFaults({ ...NO_FAULTS, ...c.faults, churn: c.churn ?? null });
    const crash = await runNode(CRASH_CHILD, [], { ...env, CRASH_AT: `${c.point}:${c.nth}` });
    const killed = crash.signal === 'SIGKILL';
    if (!killed && crash.code !== 0) problems.push(`the crashing sync failed instead: ${lastLine(crash)}`);
    recordNewRuns(paths, truthAtRun, changed);
    problems.push(...(await checkAfterCrash(paths, dataDir, c.firstSync === true)));
    const published = withStore(paths, publishedRun);
    problems.push(...(await cleanSync(env, 'the sync after the crash', sim, truthAtRun)));
    if (watch) {
      const span = watch.finish();
      sim.setFaults({ churn: null });
      const churned = await checkChurned(env, paths, sim, span, truthAtRun);
      return {
        killed,
        problems: abridged([...problems, ...churned.problems]),
        itemsCompared: churned.items,
        changesCompared: 0,
        faultsServed: servedSince(faultsBefore, sim.stats().faultsInjected),
        survivors: span.survivors.size,
        survivorsLost: churned.lost,
      };
    }
    // The first feeds' changes are their header only, as if counted from the very catalogue they hold.
    if (c.firstSync) truthAtRun.set(NONE_PUBLISHED, truthOf(sim.truth()));
    const compared = checkConverged(paths, sim, truthAtRun, published ?? NONE_PUBLISHED);
    problems.push(...compared.problems);
    return {
      killed,
      problems: abridged(problems),
      itemsCompared: compared.items,
      changesCompared: compared.changes,
      faultsServed: servedSince(faultsBefore, sim.stats().faultsInjected),
      survivors: 0,
      survivorsLost: 0,
    };
  } finally {
    sim.setFaults(NO_FAULTS);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * After a churned crash case: the run that completed keeps every survivor; then, the listing quiet, the
 * next sync reports only true changes and converges to the marketplace exactly. (The changes feed is not
 * compared with a truth here: no single moment of the catalogue is what a churned run read.)
 */
async function checkChurned(
  env: Record<string, string>,
  paths: ShopPaths,
  sim: Simulator,
  span: ListingSpan,
  truthAtRun: Map<number, Truth>,
): Promise<{ problems: string[]; lost: number; items: number }> {
  const latest = withStore(paths, latestCompleteRun);
  if (latest === null)
    return { problems: ['no run completed after the crash'], lost: span.survivors.size, items: 0 };
  const view = viewRun(paths, latest);
  const problems = runProblems(span, view);
  problems.push(...(await cleanSync(env, 'the quiet sync after the churned one', sim, truthAtRun)));
  const next = withStore(paths, latestCompleteRun);
  if (next !== null && next !== latest) problems.push(...settlingProblems(span, viewRun(paths, next)));
  const snapshot = compareSnapshot(paths, truthOf(sim.truth()));
  return {
    problems: [...problems, ...snapshot.problems],
    lost: lostSurvivors(span, view).length,
    items: snapshot.items,
  };
}

/**
 * A CLI sync's settings against `sim`. The catalogue changes and churn of these cases delete a good part
 * of a small shop for real: SYNC_MAX_REMOVED would rightly hold such runs, and what the harness holds
 * runs to is the reading and the crash safety, so the guard is off.
 */
export function syncEnv(sim: Simulator, dataDir: string, perPage: number): Record<string, string> {
  return {
    SYNC_MAX_REMOVED: 'none',
    DATA_DIR: dataDir,
    SHOP_NAME: SHOP,
    MARKETPLACE_BASE_URL: sim.baseUrl,
    MARKETPLACE_CLIENT_ID: sim.credentials.clientId,
    MARKETPLACE_CLIENT_SECRET: sim.credentials.clientSecret,
    MARKETPLACE_USERNAME: sim.credentials.username,
    MARKETPLACE_PASSWORD: sim.credentials.password,
    SYNC_PER_PAGE: String(perPage),
    SYNC_RETRY_BUDGET_SECONDS: '60',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
  };
}

/** A CLI sync that must complete; the run it made is recorded as showing the catalogue of now. */
async function cleanSync(
  env: Record<string, string>,
  what: string,
  sim: Simulator,
  truthAtRun: Map<number, Truth>,
): Promise<string[]> {
  const truth = truthOf(sim.truth());
  const result = await runNode(CLI, ['sync', '--json'], env);
  if (result.code !== 0) return [`${what} exited ${result.code}: ${lastLine(result)}`];
  const summary = JSON.parse(result.stdout) as { run: number };
  if (!truthAtRun.has(summary.run)) truthAtRun.set(summary.run, truth);
  return [];
}

/** Runs the crashed sync completed before it died (killed after its commit) show `truth`. */
function recordNewRuns(paths: ShopPaths, truthAtRun: Map<number, Truth>, truth: Truth): void {
  for (const run of withStore(paths, listRuns)) {
    if (run.status === 'complete' && !truthAtRun.has(run.run)) truthAtRun.set(run.run, truth);
  }
}

/** What a reader finds right after the kill: an intact store, and the published run's feeds, whole. */
/** The run number no run has, standing for a shop with no published feeds. */
const NONE_PUBLISHED = 0;

async function checkAfterCrash(paths: ShopPaths, dataDir: string, firstSync: boolean): Promise<string[]> {
  const problems: string[] = [];
  const db = new Database(paths.store);
  try {
    const verdict = db.pragma('integrity_check', { simple: true });
    if (verdict !== 'ok') problems.push(`integrity_check of the store says ${String(verdict)}`);
  } finally {
    db.close();
  }
  const [published, latest] = withStore(paths, (store) => [publishedRun(store), latestCompleteRun(store)]);
  if (firstSync && published === null) return [...problems, ...nothingYet(paths, latest)];
  if (published === null) return [...problems, 'no run is recorded as published after the baseline'];
  const exported = path.join(dataDir, 'expected-inventory.csv');
  return [...problems, ...(await feedsAreOneRun(paths, published, latest, exported))];
}

/** A first sync killed before it published leaves what there was before it: no complete run, no feeds. */
function nothingYet(paths: ShopPaths, latest: number | null): string[] {
  const problems: string[] = [];
  if (latest !== null) problems.push(`run ${latest} is complete, yet no feeds are recorded as published`);
  for (const feed of [paths.inventoryCsv, paths.snapshotSqlite])
    if (existsSync(feed)) problems.push(`${feed} exists before any run was published`);
  return problems;
}

/**
 * The feeds must be wholly one complete run's: the run recorded as published, or the newer complete
 * run whose feeds were switched in just before the kill, ahead of their record. In that second case the
 * next feeds count their changes from the recorded run and repeat the newer run's changes: a consumer
 * sees them at least once, never not at all.
 */
async function feedsAreOneRun(
  paths: ShopPaths,
  published: number,
  latest: number | null,
  exported: string,
): Promise<string[]> {
  if (!existsSync(paths.inventoryCsv)) return [`${paths.inventoryCsv} is missing after the crash`];
  const run = existsSync(paths.snapshotSqlite) ? snapshotRun(paths.snapshotSqlite) : null;
  if (run === null || (run !== published && run !== latest)) {
    return [
      `snapshot.sqlite describes run ${run}: neither the published run ${published} nor the latest ${latest}`,
    ];
  }
  await exportRun({ shop: SHOP, paths, run, format: 'csv', out: exported, stdout: process.stdout });
  if (readFileSync(exported, 'utf8') !== readFileSync(paths.inventoryCsv, 'utf8'))
    return [`inventory.csv is not run ${run}'s inventory, which snapshot.sqlite describes`];
  return [];
}

/** After the recovery: the latest snapshot is the catalogue, and the changes feed covers the gap. */
function checkConverged(
  paths: ShopPaths,
  sim: Simulator,
  truthAtRun: ReadonlyMap<number, Truth>,
  publishedBefore: number | null,
): { problems: string[]; items: number; changes: number } {
  const truth = truthOf(sim.truth());
  const snapshot = compareSnapshot(paths, truth);
  const base = publishedBefore === null ? undefined : truthAtRun.get(publishedBefore);
  if (!base) {
    return {
      ...snapshot,
      problems: [...snapshot.problems, 'no truth is known for the published run'],
      changes: 0,
    };
  }
  const expected = expectedChanges(base, truth);
  const changes = compareChanges(expected, changesInFeed(paths.changesCsv), 'changes.csv');
  return { problems: [...snapshot.problems, ...changes], items: snapshot.items, changes: expected.size };
}

/** The latest complete snapshot against the catalogue: every item, every tracked value, nothing else. */
export function compareSnapshot(paths: ShopPaths, truth: Truth): { problems: string[]; items: number } {
  const problems: string[] = [];
  const snapshot = withStore(paths, (store) => {
    const run = latestCompleteRun(store);
    return run === null ? [] : [...snapshotItems(store, run)];
  });
  const seen = new Set<string>();
  for (const item of snapshot) {
    seen.add(item.id);
    const expected = truth.get(item.id);
    if (!expected) problems.push(`the snapshot holds item ${item.id}, which the marketplace does not list`);
    else {
      const { raw: _raw, ...values } = item;
      const differs = changedFields(expected, values);
      if (differs.length > 0) problems.push(`item ${item.id} differs from the marketplace in ${differs}`);
    }
  }
  for (const id of truth.keys()) if (!seen.has(id)) problems.push(`item ${id} is missing from the snapshot`);
  return { problems: abridged(problems), items: seen.size };
}

function changesInFeed(file: string): Set<ChangeKey> {
  const [header, ...rows] = parseCsv(readFileSync(file, 'utf8'));
  const at = (name: string) => header?.indexOf(name) ?? -1;
  const [change, id, fields] = [at('change'), at('id'), at('changed_fields')];
  return new Set(
    rows.map((row) => {
      const list = row[fields] ?? '';
      return changeKey(row[change] ?? '', row[id] ?? '', list === '' ? [] : list.split('|'));
    }),
  );
}

function withStore<T>(paths: ShopPaths, look: (store: Store) => T): T {
  const store = openStore(paths.store);
  try {
    return look(store);
  } finally {
    store.close();
  }
}

function servedSince(
  before: Readonly<Record<FaultKind, number>>,
  after: Readonly<Record<FaultKind, number>>,
): Record<FaultKind, number> {
  const served = { ...after };
  for (const kind of Object.keys(served) as FaultKind[]) served[kind] -= before[kind] ?? 0;
  return served;
}

/** A long list of problems is one cause seen many times: the first few tell it. */
function abridged(problems: string[], keep = 12): string[] {
  if (problems.length <= keep) return problems;
  return [...problems.slice(0, keep), `… and ${problems.length - keep} more problems`];
}

function lastLine(result: ProcessResult): string {
  return result.stderr.trim().split('\n').at(-1) ?? `signal ${result.signal}`;
}
