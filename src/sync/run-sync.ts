import { type ListingFilters, MarketplaceClient, type ReadItemsQuery } from '../api/client.js';
import type { ShopConfig } from '../config/app-config.js';
import { requireConnection } from '../config/app-config.js';
import { InterruptedError, ShopSyncError, SyncBusyError } from '../errors.js';
import type { Logger } from '../log.js';
import { answeredBefore, recordAnswered } from '../store/answered-origins.js';
import { type CheckPlan, markChecked, takeCheckMark } from '../store/check-mark.js';
import { commitRun, tallyRun } from '../store/commit.js';
import { keepStore, type StoreKeeper } from '../store/keeper.js';
import { acquireLease, DEFAULT_LEASE, type Lease } from '../store/lease.js';
import { createStoreFile } from '../store/new-store.js';
import { isSqliteError, openStore, type Store, storeError } from '../store/open.js';
import { type ShopPaths, shopPaths } from '../store/paths.js';
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
 * hold the run if it would remove more than the shop allows, else commit it as the latest snapshot,
 * write the feeds, prune. The CLI and the worker both call it; `onRun` is told how the run ended.
 */
export async function runSync(shop: ShopConfig, deps: SyncDeps): Promise<SyncSummary> {
  const { onRun } = deps;
  if (!onRun) return new ShopSync(shop, deps).run();
  const started = Date.now();
  let run: number | null = null;
  let progress: SyncProgress | undefined;
  const told = (ended: RunEnded) =>
    onRun(ended).catch((error: unknown) =>
      deps.log.warn({ err: error, shop: shop.name }, 'could not report the end of the run'),
    );
  try {
    const summary = await new ShopSync(shop, {
      ...deps,
      onRunStarted: (number) => {
        run = number;
      },
      onProgress: (now) => {
        progress = now;
        deps.onProgress?.(now);
      },
    }).run();
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

/** `SyncDeps` and who is told the run a sync began or resumed. */
type ShopSyncDeps = SyncDeps & { onRunStarted?: (run: number) => void };

/** The store a sync holds, its lease, and the check of the whole file that runs beside the reading. */
interface Holding {
  readonly store: Store;
  readonly lease: Lease;
  readonly check: StoreCheck | undefined;
  readonly plan: CheckPlan;
}

/** What a run's steps return: its counts, the pages re-read to confirm them, and why it was held (null: complete). */
type Ended = RunCounts & { rereads: number; held: string | null };

/**
 * One sync of one shop. It acquires the marketplace client, the store, the store's check and the
 * shop's lease as it goes; `run` does the steps in the order the sync does them, and `release` lets go
 * of whatever was acquired, once, however the steps ended.
 */
class ShopSync {
  private readonly started = Date.now();
  private readonly log: Logger;
  private readonly paths: ShopPaths;
  private readonly client: MarketplaceClient;
  private store: Store | undefined;
  private keeper: StoreKeeper | undefined;
  private lease: Lease | undefined;
  private check: StoreCheck | undefined;

  constructor(
    private readonly shop: ShopConfig,
    private readonly deps: ShopSyncDeps,
  ) {
    const connection = requireConnection(shop);
    this.log = deps.log.child({ shop: shop.name });
    this.paths = shopPaths(deps.config.dataDir, shop.name);
    this.client = new MarketplaceClient({
      ...connection,
      logger: this.log,
      retry: { budgetMs: deps.config.retryBudgetSeconds * 1000, ...deps.retry },
      tokenStore: deps.tokenStore,
      signal: deps.signal,
      events: deps.events,
      maxInFlight: deps.config.maxInFlight,
      pools: deps.pools,
    });
  }

  async run(): Promise<SyncSummary> {
    let summary: SyncSummary;
    let rereads: number;
    let plan: CheckPlan;
    try {
      const holding = await this.acquire();
      plan = holding.plan;
      const start = await this.begin(holding.store);
      const ended = await this.complete(holding, start);
      if (ended.held === null) {
        recordAnswered(holding.store, this.client.origin, start.run);
        await this.publish(holding.store, start.run, ended);
      }
      summary = this.summary(start.run, ended);
      rereads = ended.rereads;
    } catch (error) {
      const failure = this.store && isSqliteError(error) ? this.writeError(this.store, error) : error;
      // The failure keeps its own sentence; one in letting go of the store after it is only worth a warning.
      const cleanup = await this.release();
      if (cleanup !== undefined)
        this.log.warn({ err: cleanup }, 'could not release the store after the failure');
      throw failure;
    }
    // A run whose store then fails to let go (an I/O error on the lease's release) says so.
    const cleanup = await this.release();
    if (cleanup !== undefined) throw cleanup;
    await this.rememberCheck(plan.checkedAt);
    const { shop: _shop, ...counted } = summary;
    if (summary.status === 'held') this.log.warn({ ...counted, rereads }, 'sync held');
    else this.log.info({ ...counted, rereads }, 'sync complete');
    return summary;
  }

  /**
   * Opens the store, starts its check and takes the shop's lease. Damage in pages this run never reads
   * would otherwise go unnoticed and be built upon: unless the file is exactly as the last checked sync
   * left it, the whole file is checked off the main thread while the listing is read, and the run
   * commits only if it passed.
   */
  private async acquire(): Promise<Holding> {
    const plan = this.planCheck();
    this.log.debug({ check: plan.kind, reason: plan.reason, checkedAt: plan.checkedAt }, 'store check');
    if (plan.kind === 'none') await createStoreFile(this.paths.store);
    if (this.deps.fsyncsOffLoop) this.keeper = await keepStore(this.paths.store);
    const store = openStore(this.paths.store);
    this.store = store;
    if (answeredBefore(store, this.client.origin)) this.client.knownToAnswer();
    const check = plan.kind === 'full' ? startStoreCheck(this.paths.store) : undefined;
    this.check = check;
    const lease = acquireLease(
      store,
      this.shop.name,
      (error) => this.log.warn({ err: error }, 'lease renewal failed'),
      { ...DEFAULT_LEASE, owner: this.deps.leaseOwner },
    );
    this.lease = lease;
    return { store, lease, check, plan };
  }

  /** The check this sync needs; the store's mark is gone before the store is opened. */
  private planCheck(): CheckPlan {
    try {
      return takeCheckMark(this.paths.store);
    } catch (error) {
      throw storeError(`Cannot write store ${this.paths.store}`, this.paths.store, error);
    }
  }

  /** Begins the run, or resumes the one interrupted recently, and discards what unfinished runs wrote. */
  private async begin(store: Store): Promise<RunStart> {
    const start = beginRun(store, {
      query: queryKey(this.shop),
      resumeWindowMinutes: this.deps.config.resumeWindowMinutes,
    });
    this.log.info({ run: start.run, resumed: start.resumed, startPage: start.startPage }, 'sync started');
    this.deps.onRunStarted?.(start.run);
    const discarded = await discardUnfinishedRuns(store, start.run);
    if (discarded.length > 0) this.log.info({ runs: discarded }, 'discarded what unfinished runs wrote');
    return start;
  }

  /**
   * Reads the listing, confirms the removals, waits for the store check, then holds the run if it would
   * remove more than the shop allows, or commits it. A failure marks the run failed (resumable) and is
   * rethrown.
   */
  private async complete(holding: Holding, start: RunStart): Promise<Ended> {
    const { store, lease, check } = holding;
    try {
      const reading = await this.read(holding, start);
      const gone = await this.confirmRemovals(store, start.run, reading);
      if (check) await this.passed(check);
      const held = gone > 0 && !this.deps.acceptRemovals ? this.guardRemovals(store, start.run) : undefined;
      if (held) {
        lease.assertHeld();
        holdRun(store, start.run, held.counts, held.reason);
        return { ...held.counts, rereads: reading.rereads, held: held.reason };
      }
      this.deps.onProgress?.({ ...reading.progress, phase: 'committing' });
      const counts = commitRun(store, start.run, () => lease.assertHeld());
      this.deps.onPoint?.('committed');
      return { ...counts, rereads: reading.rereads, held: null };
    } catch (error) {
      const failure = this.asRunFailure(error, store, start.run);
      this.recordFailure(store, start.run, failure);
      throw failure;
    }
  }

  /** Reads the listing into the run's staging, from where an interrupted run stopped. */
  private async read({ store, lease }: Holding, start: RunStart): Promise<ReadingWatch> {
    const { deps } = this;
    const bodies = new ReadBodies(store);
    const batch = new StagingBatch(
      store,
      start.run,
      () => lease.assertHeld(),
      STAGING_BATCH,
      () => deps.onPoint?.('page-staged'),
      bodies,
    );
    const reading = new ReadingWatch(store, start.run, deps.onProgress, this.log);
    const known = new SentVersions(store, start.run);
    const listedBefore = listedByPreviousRun(store, start.run);
    await stageListing(
      this.client.readItems({ ...this.query(), resume: start.checkpoint, known, bodies, listedBefore }),
      batch,
      reading,
      { signal: deps.signal, log: this.log },
    );
    deps.onPoint?.('read');
    return reading;
  }

  /** Confirms that the items the reading did not show are gone (retired) or there (written); returns how many are gone. */
  private async confirmRemovals(store: Store, run: number, reading: ReadingWatch): Promise<number> {
    const pages = getRun(store, run)?.pages ?? 0;
    this.deps.onProgress?.({ ...reading.progress, phase: 'confirming' });
    const removals = await confirmRemovals(store, run, {
      // Under filters an item may exist yet no longer be listed: only the listing can tell.
      fetchItem:
        Object.keys(this.shop.filters).length === 0 ? (url) => this.client.fetchItem(url) : undefined,
      relist: () => this.client.readItems(this.query()),
      relistCost: pages,
    });
    if (removals.stillPresent > 0) this.log.info(removals, 'items missing from the listing are still there');
    if (removals.kept > 0)
      this.log.warn(
        removals,
        'items missing from the listing were kept at their last version: they are there but cannot be read, or may be items whose id could not be read; the next run settles them',
      );
    this.deps.onPoint?.('removals-confirmed');
    return removals.gone;
  }

  /** The run's counts and why it is held, when it would remove more than the shop's SYNC_MAX_REMOVED. */
  private guardRemovals(store: Store, run: number): { counts: RunCounts; reason: string } | undefined {
    const counts = tallyRun(store, run);
    const previous = previousCompleteRun(store, run);
    const of = previous === null ? null : (getRun(store, previous)?.items ?? null);
    const reason = heldBecause(run, this.shop.maxRemoved, counts.removed, of);
    return reason === null ? undefined : { counts, reason };
  }

  /** Writes the feeds of the complete run, then forgets what only the run needed and prunes old runs. */
  private async publish(store: Store, run: number, counts: RunCounts): Promise<void> {
    const { deps } = this;
    deps.onProgress?.({ phase: 'feeds', pages: counts.pages, items: counts.items, invalid: counts.invalid });
    await publishFeeds(store, this.paths, run, {
      gzip: deps.config.feedsGzip,
      log: this.log,
      onPoint: deps.onPoint,
    });
    // After the feeds: which versions the run matched is garbage once it is complete, and can wait.
    await discardRunData(store, run, { complete: true });
    if (deps.config.keepRuns !== null) {
      const pruned = pruneRuns(store, deps.config.keepRuns);
      if (pruned.runs.length > 0)
        this.log.info({ runs: pruned.runs, versions: pruned.versions }, 'pruned old runs');
    }
  }

  private summary(run: number, ended: Ended): SyncSummary {
    const counts = pick(ended, RUN_COUNT_FIELDS);
    const duration_ms = Date.now() - this.started;
    return ended.held === null
      ? { shop: this.shop.name, run, status: 'complete', ...counts, duration_ms }
      : { shop: this.shop.name, run, status: 'held', held: ended.held, ...counts, duration_ms };
  }

  /** The listing as this shop asks for it. */
  private query(): ReadItemsQuery {
    return {
      perPage: this.shop.perPage,
      order: this.shop.order,
      locale: this.shop.locale,
      filters: this.shop.filters as ListingFilters,
      maxInFlight: this.deps.config.maxInFlight,
    };
  }

  /** Waits for the store check; a store that is not intact fails the run before anything is committed. */
  private async passed(check: StoreCheck): Promise<void> {
    const waiting = Date.now();
    const health = await check.result;
    this.log.debug({ waitedMs: Date.now() - waiting, status: health.status }, 'store checked');
    if (health.status !== 'ok') throw health.error;
  }

  /**
   * A store error names the file; a stop, wherever it reached the sync (between pages, in a request, in
   * a retry wait), is told as the interruption it is, with the page the next sync resumes after.
   */
  private asRunFailure(error: unknown, store: Store, run: number): unknown {
    if (isSqliteError(error)) return this.writeError(store, error);
    if (!this.deps.signal?.aborted) return error;
    const page = getRunDetail(store, run)?.checkpoint_page ?? 0;
    return new InterruptedError(
      `The sync of shop ${this.shop.name} was interrupted after page ${page}; the next sync resumes from there.`,
      { cause: error },
    );
  }

  /** Marks the run failed; if even that fails (the store is the problem), the original error still wins. */
  private recordFailure(store: Store, run: number, failure: unknown): void {
    try {
      const code = failure instanceof ShopSyncError ? failure.code : null;
      failRun(store, run, failure instanceof Error ? failure.message : String(failure), new Date(), code);
    } catch (error) {
      this.log.warn({ err: error, run }, 'could not mark the run failed; it stays running until reclaimed');
    }
  }

  private writeError(store: Store, error: unknown): unknown {
    return storeError(`Cannot write store ${store.path}`, store.path, error);
  }

  /** Marks the store as checked for the next sync, which otherwise checks it in full: that is all a failure costs. */
  private async rememberCheck(checkedAt: Date): Promise<void> {
    try {
      const marked = await markChecked(this.paths.store, checkedAt);
      this.log.debug({ marked, checkedAt }, 'store check mark');
    } catch (error) {
      this.log.warn({ err: error }, 'could not mark the store as checked; the next sync checks it in full');
    }
  }

  /**
   * Releases what the sync acquired, each even if another fails: the lease, the store check, the client,
   * the store and its keeper. Returns the first failure, as an error naming the file.
   */
  private async release(): Promise<unknown> {
    const { store } = this;
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
    await attempt(() => this.lease?.release());
    await attempt(() => this.check?.cancel());
    await attempt(() => this.client.close());
    await attempt(() => store?.close());
    // After the store: the keeper's connection, the last, checkpoints the WAL off the event loop.
    await attempt(() => this.keeper?.letGo());
    return failures[0];
  }
}

/**
 * How many items the complete run before `run` listed, if there is one: its items and the invalid ones
 * (an invalid item kept at its last version counts twice, a hint too long by a little costs a window at
 * most). Where an unchanged listing will end, for the reader's read-ahead.
 */
function listedByPreviousRun(store: Store, run: number): number | undefined {
  const previous = previousCompleteRun(store, run);
  const counts = previous === null ? undefined : getRun(store, previous);
  return counts && counts.items + counts.invalid;
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
