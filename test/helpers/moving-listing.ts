import { expect } from 'vitest';
import { compareSnapshot } from '../../bench/faults/harness.js';
import {
  type ListingSpan,
  ListingWatch,
  runProblems,
  settlingProblems,
  viewRun,
} from '../../bench/faults/survivors.js';
import { truthOf } from '../../bench/faults/truth.js';
import type { ChurnFault, Simulator } from '../../src/simulator/index.js';
import type { ShopPaths } from '../../src/store/paths.js';
import { type CliResult, runCli } from './cli.js';

export interface ChurnedSync {
  readonly result: CliResult;
  /** The `sync --json` summary, when the sync printed one. */
  readonly summary: { run: number; status: string; added: number; removed: number } | null;
  /** The listing over the sync: what it had at the start and the end, what churn did meanwhile. */
  readonly span: ListingSpan;
}

export interface ChurnOptions {
  /** The listing query the shop reads (its filters), as the simulator parses it: `f.shipping_to=IT`. */
  readonly query?: string;
  /** Started before the sync (a run resumed from an earlier attempt): the span then covers both. */
  readonly watch?: ListingWatch;
}

/** A CLI sync (`sync --json`, as users run it) while the simulator churns as `churn` says. */
export async function syncWhileChurning(
  sim: Simulator,
  env: Readonly<Record<string, string>>,
  churn: Partial<ChurnFault>,
  options: ChurnOptions = {},
): Promise<ChurnedSync> {
  const watch = options.watch ?? ListingWatch.start(sim, options.query);
  sim.setFaults({ churn });
  let result: CliResult;
  try {
    result = await runCli(['sync', '--json'], env);
  } finally {
    sim.setFaults({ churn: null });
  }
  const span = watch.finish();
  const summary = result.code === 0 ? (JSON.parse(result.stdout) as ChurnedSync['summary']) : null;
  return { result, summary, span };
}

/**
 * What a user checks after a sync through a moving listing: it completed; every item listed from its start
 * to its end is in its snapshot, none reported removed, none reported added unless the run before lacked
 * it; and the next sync of the now quiet listing converges exactly and reports only true changes (of
 * items that appeared or disappeared during the churned run), never a survivor a run late.
 */
export async function expectHonestRun(
  sim: Simulator,
  paths: ShopPaths,
  env: Readonly<Record<string, string>>,
  churned: ChurnedSync,
  query = '',
): Promise<void> {
  expect(churned.result.stderr.trim().split('\n').at(-1) ?? '', 'the churned sync exits 0').not.toMatch(
    /^shop-sync:/,
  );
  expect(churned.result.code).toBe(0);
  expect(churned.summary?.status).toBe('complete');
  const run = churned.summary?.run as number;
  expect(churned.span.changes.length, 'churn changed the listing during the sync').toBeGreaterThan(0);
  const problems = runProblems(churned.span, viewRun(paths, run));
  const quiet = await runCli(['sync', '--json'], env);
  expect(quiet.code).toBe(0);
  const next = (JSON.parse(quiet.stdout) as { run: number }).run;
  problems.push(...settlingProblems(churned.span, viewRun(paths, next)));
  const listed = new Set(sim.listedIds(query));
  const truth = truthOf(sim.truth().filter((item) => listed.has(item.id)));
  problems.push(...compareSnapshot(paths, truth).problems.map((p) => `after the quiet sync: ${p}`));
  expect(problems).toEqual([]);
}
