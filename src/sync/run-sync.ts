import { type ListingFilters, MarketplaceClient } from '../api/client.js';
import { parseCheckpoint } from '../api/listing/checkpoint.js';
import type { ShopConfig } from '../config/app-config.js';
import { requireConnection } from '../config/app-config.js';
import { InterruptedError, ShopSyncError, SyncBusyError } from '../errors.js';
import type { Logger } from '../log.js';
import { type CheckPlan, markChecked, takeCheckMark } from '../store/check-mark.js';
import { commitRun, tallyRun } from '../store/commit.js';
import { acquireLease, DEFAULT_LEASE, type Lease } from '../store/lease.js';
import { isSqliteError, openStore, type Store, storeError } from '../store/open.js';
import { shopPaths } from '../store/paths.js';
import { pruneRuns } from '../store/prune-runs.js';
import { ReadBodies } from '../store/read-bodies.js';
import {
  beginRun,
  discardRunData,
  discardUnfinishedRuns,
  failRun,
  getRun,
  getRunDetail,
  holdRun,
  previousCompleteRun,
  RUN_COUNT_FIELDS,
  type RunCounts,
  type RunStart,
} from '../store/run-records.js';
import { SentVersions } from '../store/sent-index.js';
import { StagingBatch } from '../store/staging.js';
import { type StoreCheck, startStoreCheck } from '../store/verify.js';
import { confirmRemovals } from './confirm-removals.js';
import type { SyncDeps } from './deps.js';
import type { RunEnded, SyncProgress, SyncSummary } from './outcome.js';
import { publishFeeds } from './publish-feeds.js';
import { heldBecause } from './removal-guard.js';
import { ReadingWatch, STAGING_BATCH, stageListing } from './stage-listing.js';

/**
 * One complete sync of one shop: read every page into the run's staging, confirm what seems removed,
 * commit the run as the latest snapshot, write the feeds, prune. The CLI and the worker both call it.
 */
export async function runSync(shop: ShopConfig, deps: SyncDeps): Promise<SyncSummary> {
  const { onRun } = deps;
  if (!onRun) return syncOnce(shop, deps);
  const started = Date.now();
  let run: number | null = null;
  let progress: SyncProgress | undefined;
  const told = (ended: RunEnded) =>
    onRun(ended).catch((error: unknown) =>
      deps.log.warn({ err: error, shop: shop.name }, 'could not report the end of the run'),
    );
  try {
    const summary = await syncOnce(shop, {
      ...deps,
      onRunStarted: (number) => {
        run = number;
      },
      onProgress: (now) => {
        progress = now;
        deps.onProgress?.(now);
      },
    });
    await told({ shop: shop.name, finishedAt: new Date(), status: summary.status, summary });
    return summary;
  } catch (error) {
    if (!(error instanceof InterruptedError || error instanceof SyncBusyError)) {
      const failure = error instanceof Error ? error : new Error(String(error));
      const duration_ms = Date.now() - started;
      await told({
        shop: shop.name,
        finishedAt: new Date(),
        status: 'failed',
        run,
        error: failure,
        progress,
        duration_ms,
      });
    }
    throw error;
  }
}

/** `runSync` without `onRun`; tells `onRunStarted` the run it began or resumed. */
async function syncOnce(
  shop: ShopConfig,
  deps: SyncDeps & { onRunStarted?: (run: number) => void },
): Promise<SyncSummary> {
  const started = Date.now();
  const connection = requireConnection(shop);
  const log = deps.log.child({ shop: shop.name });
  const client = new MarketplaceClient({
    ...connection,
    logger: log,
    retry: { budgetMs: deps.config.retryBudgetSeconds * 1000, ...deps.retry },
    tokenStore: deps.tokenStore,
    signal: deps.signal,
    events: deps.events,
    maxInFlight: deps.config.maxInFlight,
  });
  const held: Held = { client };
  let summary: SyncSummary;
  let rereads: number;
  let checked: Checked;
  try {
    ({ summary, rereads, checked } = await syncHeld(shop, deps, held, log, started));
  } catch (error) {
    const failure =
      held.store && isSqliteError(error)
        ? storeError(`Cannot write store ${held.store.path}`, held.store.path, error)
        : error;
    // The failure keeps its own sentence; one in letting go of the store after it is only worth a warning.
    const cleanup = await closeAll(held);
    if (cleanup !== undefined) log.warn({ err: cleanup }, 'could not release the store after the failure');
    throw failure;
  }
  // A complete run whose store then fails to let go (an I/O error on the lease's release) says so.
  const cleanup = await closeAll(held);
  if (cleanup !== undefined) throw cleanup;
  await rememberCheck(checked, log);
  const { shop: _shop, ...counted } = summary;
  if (summary.status === 'held') log.warn({ ...counted, rereads }, 'sync held');
  else log.info({ ...counted, rereads }, 'sync complete');
  return summary;
}

/** What a sync holds, as it acquires it: released by `closeAll` whatever happens. */
interface Held {
  readonly client: MarketplaceClient;
  store?: Store;
  lease?: Lease;
  check?: StoreCheck;
}

/** The store a complete sync closed, and when it was last checked in full. */
interface Checked {
  readonly store: string;
  readonly at: Date;
}

/** The sync proper, between acquiring the store and releasing it. */
async function syncHeld(
  shop: ShopConfig,
  deps: SyncDeps & { onRunStarted?: (run: number) => void },
  held: Held,
  log: Logger,
  started: number,
): Promise<{ summary: SyncSummary; rereads: number; checked: Checked }> {
  const paths = shopPaths(deps.config.dataDir, shop.name);
  const plan = planCheck(paths.store);
  log.debug({ check: plan.kind, reason: plan.reason, checkedAt: plan.checkedAt }, 'store check');
  const store = openStore(paths.store);
  held.store = store;
  // Damage in pages this run never reads would otherwise go unnoticed and be built upon: unless the
  // file is exactly as the last checked sync left it, the whole file is checked off the main thread
  // while the listing is read, and the run commits only if it passed.
  const check = plan.kind === 'full' ? startStoreCheck(paths.store) : undefined;
  held.check = check;
  const lease = acquireLease(store, shop.name, (error) => log.warn({ err: error }, 'lease renewal failed'), {
    ...DEFAULT_LEASE,
    owner: deps.leaseOwner,
  });
  held.lease = lease;
  const start = beginRun(store, {
    query: queryKey(shop),
    resumeWindowMinutes: deps.config.resumeWindowMinutes,
  });
  log.info({ run: start.run, resumed: start.resumed, startPage: start.startPage }, 'sync started');
  deps.onRunStarted?.(start.run);
  const discarded = await discardUnfinishedRuns(store, start.run);
  if (discarded.length > 0) log.info({ runs: discarded }, 'discarded what unfinished runs wrote');
  const counts = await completeRun(store, held.client, shop, start, lease, check, deps, log);
  const checked = { store: paths.store, at: plan.checkedAt };
  if (counts.held !== null) {
    const summary: SyncSummary = {
      shop: shop.name,
      run: start.run,
      status: 'held',
      held: counts.held,
      ...pick(counts, RUN_COUNT_FIELDS),
      duration_ms: Date.now() - started,
    };
    return { summary, rereads: counts.rereads, checked };
  }
  deps.onProgress?.({ phase: 'feeds', pages: counts.pages, items: counts.items, invalid: counts.invalid });
  await publishFeeds(store, paths, start.run, { gzip: deps.config.feedsGzip, log, onPoint: deps.onPoint });
  // After the feeds: which versions the run matched is garbage once it is complete, and can wait.
  await discardRunData(store, start.run, { complete: true });
  if (deps.config.keepRuns !== null) {
    const pruned = pruneRuns(store, deps.config.keepRuns);
    if (pruned.runs.length > 0) log.info({ runs: pruned.runs, versions: pruned.versions }, 'pruned old runs');
  }
  const summary: SyncSummary = {
    shop: shop.name,
    run: start.run,
    status: 'complete',
    ...pick(counts, RUN_COUNT_FIELDS),
    duration_ms: Date.now() - started,
  };
  return { summary, rereads: counts.rereads, checked };
}

/** The check this sync needs; the store's mark is gone before the store is opened. */
function planCheck(file: string): CheckPlan {
  try {
    return takeCheckMark(file);
  } catch (error) {
    throw storeError(`Cannot write store ${file}`, file, error);
  }
}

/** Marks the store as checked for the next sync, which otherwise checks it in full: that is all a failure costs. */
async function rememberCheck(checked: Checked, log: Logger): Promise<void> {
  try {
    const marked = await markChecked(checked.store, checked.at);
    log.debug({ marked, checkedAt: checked.at }, 'store check mark');
  } catch (error) {
    log.warn({ err: error }, 'could not mark the store as checked; the next sync checks it in full');
  }
}

/**
 * Releases what a sync holds, each even if another fails: the lease, the store check, the client and
 * the store. Returns the first failure, as an error naming the file.
 */
async function closeAll(held: Held): Promise<unknown> {
  const { store } = held;
  const failures: unknown[] = [];
  const attempt = async (step: () => unknown) => {
    try {
      await step();
    } catch (error) {
      failures.push(
        store && isSqliteError(error)
          ? storeError(`Cannot close store ${store.path}`, store.path, error)
          : error,
      );
    }
  };
  await attempt(() => held.lease?.release());
  await attempt(() => held.check?.cancel());
  await attempt(() => held.client.close());
  await attempt(() => store?.close());
  return failures[0];
}

/**
 * What `completeRun` returns: the run's counts, its pages, the pages re-read to confirm them, and the
 * sentence that says why it was held (null: it is complete).
 */
type CompletedRun = RunCounts & { rereads: number; held: string | null };

/**
 * Reads, confirms and commits one run, or holds it when it would remove more than the shop allows; a
 * failure marks the run failed (resumable) and is rethrown.
 */
async function completeRun(
  store: Store,
  client: MarketplaceClient,
  shop: ShopConfig,
  start: RunStart,
  lease: Lease,
  check: StoreCheck | undefined,
  deps: SyncDeps,
  log: Logger,
): Promise<CompletedRun> {
  try {
    const query = {
      perPage: shop.perPage,
      order: shop.order,
      locale: shop.locale,
      filters: shop.filters as ListingFilters,
      maxInFlight: deps.config.maxInFlight,
    };
    const bodies = new ReadBodies(store);
    const batch = new StagingBatch(
      store,
      start.run,
      () => lease.assertHeld(),
      STAGING_BATCH,
      () => deps.onPoint?.('page-staged'),
      bodies,
    );
    const reading = new ReadingWatch(store, start.run, deps, log);
    const known = new SentVersions(store, start.run);
    await stageListing(
      client.readItems({ ...query, resume: parseCheckpoint(start.checkpoint), known, bodies }),
      batch,
      reading,
    );
    deps.onPoint?.('read');
    const pages = getRun(store, start.run)?.pages ?? 0;
    deps.onProgress?.({ ...reading.progress, phase: 'confirming' });
    const removals = await confirmRemovals(store, start.run, {
      // Under filters an item may exist yet no longer be listed: only the listing can tell.
      fetchItem: Object.keys(shop.filters).length === 0 ? (url) => client.fetchItem(url) : undefined,
      relist: () => client.readItems(query),
      relistCost: pages,
    });
    if (removals.stillPresent > 0) log.info(removals, 'items missing from the listing are still there');
    if (removals.kept > 0)
      log.warn(
        removals,
        'items missing from the listing were kept at their last version: they are there but cannot be read, or may be items whose id could not be read; the next run settles them',
      );
    deps.onPoint?.('removals-confirmed');
    if (check) await passed(check, log);
    if (removals.gone > 0 && !deps.acceptRemovals) {
      const held = guardRemovals(store, start.run, shop);
      if (held) {
        lease.assertHeld();
        holdRun(store, start.run, held.counts, held.reason);
        return { ...held.counts, rereads: reading.rereads, held: held.reason };
      }
    }
    deps.onProgress?.({ ...reading.progress, phase: 'committing' });
    const counts = commitRun(store, start.run, () => lease.assertHeld());
    deps.onPoint?.('committed');
    return { ...counts, rereads: reading.rereads, held: null };
  } catch (error) {
    const failure = asRunFailure(error, store, start.run, shop, deps);
    recordFailure(store, start.run, failure, log);
    throw failure;
  }
}

/** The run's counts and why it is held, when it would remove more than the shop's SYNC_MAX_REMOVED. */
function guardRemovals(
  store: Store,
  run: number,
  shop: ShopConfig,
): { counts: RunCounts; reason: string } | undefined {
  const counts = tallyRun(store, run);
  const previous = previousCompleteRun(store, run);
  const of = previous === null ? null : (getRun(store, previous)?.items ?? null);
  const reason = heldBecause(run, shop.maxRemoved, counts.removed, of);
  return reason === null ? undefined : { counts, reason };
}

/** Waits for the store check; a store that is not intact fails the run before anything is committed. */
async function passed(check: StoreCheck, log: Logger): Promise<void> {
  const waiting = Date.now();
  const health = await check.result;
  log.debug({ waitedMs: Date.now() - waiting, status: health.status }, 'store checked');
  if (health.status !== 'ok') throw health.error;
}

/**
 * A store error names the file; a stop, wherever it reached the sync (between pages, in a request, in
 * a retry wait), is told as the interruption it is, with the page the next sync resumes after.
 */
function asRunFailure(error: unknown, store: Store, run: number, shop: ShopConfig, deps: SyncDeps): unknown {
  if (isSqliteError(error)) return storeError(`Cannot write store ${store.path}`, store.path, error);
  if (!deps.signal?.aborted) return error;
  const page = getRunDetail(store, run)?.checkpoint_page ?? 0;
  return new InterruptedError(
    `The sync of shop ${shop.name} was interrupted after page ${page}; the next sync resumes from there.`,
    { cause: error },
  );
}

/** Marks the run failed; if even that fails (the store is the problem), the original error still wins. */
function recordFailure(store: Store, run: number, failure: unknown, log: Logger): void {
  try {
    const code = failure instanceof ShopSyncError ? failure.code : null;
    failRun(store, run, failure instanceof Error ? failure.message : String(failure), new Date(), code);
  } catch (error) {
    log.warn({ err: error, run }, 'could not mark the run failed; it stays running until reclaimed');
  }
}

/** What a checkpoint's page numbers refer to: a run is only resumed with the same query. */
function queryKey(shop: ShopConfig): string {
  return JSON.stringify({
    perPage: shop.perPage,
    order: shop.order ?? null,
    locale: shop.locale ?? null,
    filters: Object.entries(shop.filters).sort(([a], [b]) => a.localeCompare(b)),
  });
}

/** The counts alone, in the contract's order. */
function pick(counts: RunCounts, fields: readonly (keyof RunCounts)[]): RunCounts {
  return Object.fromEntries(fields.map((field) => [field, counts[field]])) as unknown as RunCounts;
}
