import type { ChurnChange, Simulator } from '../../src/simulator/index.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { openStore, type Store } from '../../src/store/open.js';
import type { ShopPaths } from '../../src/store/paths.js';
import { listRuns } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';

/**
 * What happened to a listing over a stretch of time (one run, a killed run and its resume): the ids it
 * listed at the start and at the end, and what churn deleted and inserted meanwhile.
 */
export interface ListingSpan {
  readonly atStart: ReadonlySet<string>;
  readonly atEnd: ReadonlySet<string>;
  readonly deleted: ReadonlySet<string>;
  readonly inserted: ReadonlySet<string>;
  /**
   * Ids listed from the start to the end without a break: at the start, at the end, and never deleted in
   * between. The guarantee: every one is in a run that completes over this span, and none is reported
   * added (unless the previous run lacked it) or removed.
   */
  readonly survivors: ReadonlySet<string>;
  /** The churn changes made during the span, oldest first. */
  readonly changes: readonly ChurnChange[];
}

/**
 * Watches one listing of a simulator (a listing query such as `f.shipping_to=IT`, default the whole
 * shop): `start()` when the run starts, `finish()` when it has ended.
 */
export class ListingWatch {
  private constructor(
    private readonly sim: Simulator,
    private readonly query: string,
    private readonly atStart: ReadonlySet<string>,
    private readonly since: number,
  ) {}

  static start(sim: Simulator, query = ''): ListingWatch {
    const since = sim.churnLog().at(-1)?.seq ?? 0;
    return new ListingWatch(sim, query, new Set(sim.listedIds(query)), since);
  }

  finish(): ListingSpan {
    const changes = this.sim.churnLog(this.since);
    const atEnd = new Set(this.sim.listedIds(this.query));
    const deleted = new Set(changes.filter((c) => c.kind === 'delete').map((c) => c.id));
    const inserted = new Set(changes.filter((c) => c.kind === 'insert').map((c) => c.id));
    const survivors = new Set([...this.atStart].filter((id) => atEnd.has(id) && !deleted.has(id)));
    return { atStart: this.atStart, atEnd, deleted, inserted, survivors, changes };
  }
}

/** A complete run as the store holds it: its items and the changes it reported against the run before. */
export interface RunView {
  readonly run: number;
  readonly items: ReadonlySet<string>;
  /** The previous complete run's items (empty for a first run). */
  readonly previous: ReadonlySet<string>;
  readonly added: ReadonlySet<string>;
  readonly removed: ReadonlySet<string>;
}

export function viewRun(paths: ShopPaths, run: number): RunView {
  const store: Store = openStore(paths.store);
  try {
    const complete = listRuns(store)
      .filter((r) => r.status === 'complete' && r.run < run)
      .map((r) => r.run);
    const before = complete.at(-1);
    const ids = (r: number) => new Set([...snapshotItems(store, r)].map((item) => item.id));
    const added = new Set<string>();
    const removed = new Set<string>();
    if (before !== undefined) {
      for (const change of diffRuns(store, before, run)) {
        if (change.change === 'added') added.add(change.id);
        if (change.change === 'removed') removed.add(change.id);
      }
    }
    const items = ids(run);
    const previous = before === undefined ? new Set<string>() : ids(before);
    if (before === undefined) for (const id of items) added.add(id);
    return { run, items, previous, added, removed };
  } finally {
    store.close();
  }
}

/** Sorted, abridged: a report names the first few ids and how many there were. */
function some(ids: Iterable<string>, keep = 8): string {
  const all = [...ids].sort();
  return `${all.length} (${all.slice(0, keep).join(', ')}${all.length > keep ? ', …' : ''})`;
}

/**
 * Every broken promise of a run that completed over `span`, one sentence each: a survivor missing, a
 * survivor reported removed or wrongly added, an item that was never listed during the span.
 */
export function runProblems(span: ListingSpan, view: RunView): string[] {
  const problems: string[] = [];
  const survivors = [...span.survivors];
  const missing = survivors.filter((id) => !view.items.has(id));
  if (missing.length > 0) problems.push(`run ${view.run} lacks survivors: ${some(missing)}`);
  const removed = survivors.filter((id) => view.removed.has(id));
  if (removed.length > 0) problems.push(`run ${view.run} reports survivors removed: ${some(removed)}`);
  // A survivor is added exactly when the run before did not have it.
  const wronglyAdded = survivors.filter((id) => view.added.has(id) && view.previous.has(id));
  if (wronglyAdded.length > 0)
    problems.push(`run ${view.run} reports survivors added: ${some(wronglyAdded)}`);
  const notAdded = survivors.filter(
    (id) => view.items.has(id) && !view.previous.has(id) && !view.added.has(id),
  );
  if (notAdded.length > 0)
    problems.push(`run ${view.run} does not report new survivors added: ${some(notAdded)}`);
  const strangers = [...view.items].filter((id) => !span.atStart.has(id) && !span.inserted.has(id));
  if (strangers.length > 0)
    problems.push(`run ${view.run} holds items never listed during it: ${some(strangers)}`);
  return problems;
}

/** Survivors missing from the run or reported removed by it: what the soak counts as lost. */
export function lostSurvivors(span: ListingSpan, view: RunView): string[] {
  return [...span.survivors].filter((id) => !view.items.has(id) || view.removed.has(id));
}

/**
 * The run after a churned one, on a listing that held still (`span` is the churned run's): it must report
 * only true changes, that is, only items that appeared or disappeared during the churned run.
 */
export function settlingProblems(span: ListingSpan, next: RunView): string[] {
  const problems: string[] = [];
  const lateAdded = [...next.added].filter((id) => next.previous.size > 0 && span.survivors.has(id));
  if (lateAdded.length > 0)
    problems.push(`the next quiet run reports survivors added a run late: ${some(lateAdded)}`);
  const lateRemoved = [...next.removed].filter((id) => span.survivors.has(id));
  if (lateRemoved.length > 0)
    problems.push(`the next quiet run reports survivors removed: ${some(lateRemoved)}`);
  return problems;
}
