import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  type ItemPage,
  type ListingFilters,
  MarketplaceClient,
  type MarketplaceEvents,
  type RetryOptions,
  type TokenStore,
} from './api/client.js';
import { parseCheckpoint } from './api/listing/checkpoint.js';
import type { AppConfig, ShopConfig } from './config.js';
import { requireConnection } from './config.js';
import type { Item } from './domain/item.js';
import { ITEM_FIELDS } from './domain/item-fields.js';
import { InterruptedError, ShopSyncError, SyncBusyError } from './errors.js';
import { writeFeeds } from './export/feeds.js';
import type { Logger } from './log.js';
import { commitRun } from './store/commit.js';
import { acquireLease, DEFAULT_LEASE, type Lease } from './store/lease.js';
import { isSqliteError, openStore, type Store, storeError } from './store/open.js';
import { shopPaths } from './store/paths.js';
import { pruneRuns } from './store/prune.js';
import { confirmRemovals } from './store/removals.js';
import {
  beginRun,
  discardRunData,
  discardUnfinishedRuns,
  failRun,
  getRun,
  getRunDetail,
  previousCompleteRun,
  RUN_COUNT_FIELDS,
  type RunCounts,
  type RunStart,
} from './store/runs.js';
import { SentVersions } from './store/sent-index.js';
import { type BatchLimits, StagingBatch } from './store/staging.js';
import { type StoreCheck, startStoreCheck } from './store/verify.js';

/** What a sync is doing: reading the listing, confirming removals, committing, writing the feeds. */
export type SyncPhase = 'reading' | 'confirming' | 'committing' | 'feeds';

export interface SyncProgress {
  phase: SyncPhase;
  pages: number;
  items: number;
  invalid: number;
}

/**
 * Where a sync reports it has got to, synchronously (the fault suite kills the process there): pages
 * staged, the listing read, removals confirmed, the run committed, then the feeds' own points.
 */
export type SyncPoint =
  | 'page-staged'
  | 'read'
  | 'removals-confirmed'
  | 'committed'
  | 'feed-prepared'
  | 'feeds-renamed'
  | 'published';

export interface SyncDeps {
  config: AppConfig;
  log: Logger;
  /** Aborting stops the run once the pages read so far are staged; a later sync resumes it. */
  signal?: AbortSignal;
  onProgress?: (progress: SyncProgress) => void;
  /** How hard to retry each marketplace request (the client's defaults within the configured budget otherwise). */
  retry?: Partial<RetryOptions>;
  /** Where the shop's token is kept: shared between worker processes; this process's memory otherwise. */
  tokenStore?: TokenStore;
  /** Told of every response and token renewal (metrics). */
  events?: MarketplaceEvents;
  /** Called synchronously at each `SyncPoint`. */
  onPoint?: (point: SyncPoint) => void;
  /** Who the sync belongs to beyond this process (the worker's job id): see `LeaseOptions.owner`. */
  leaseOwner?: string;
  /**
   * Told once a run ends, complete or failed (not when stopped or busy: that run is not over), before
   * `runSync` returns or throws; awaited, and its own failure only logged: it never changes the sync's
   * outcome. The CLI delivers the notification from here, the worker queues it.
   */
  onRun?: (ended: RunEnded) => Promise<void>;
}

/** How a run ended, for `onRun`: its summary, or its failure with how far it got. */
export type RunEnded = { readonly shop: string; readonly finishedAt: Date } & (
  | { readonly status: 'complete'; readonly summary: SyncSummary }
  | {
      readonly status: 'failed';
      /** Null when the sync failed before it began a run (settings, the store). */
      readonly run: number | null;
      readonly error: Error;
      readonly progress: SyncProgress | undefined;
      readonly duration_ms: number;
    }
);

/** What one sync did: its run's counts, between the run and how long it took. */
export type SyncSummary = { shop: string; run: number; status: 'complete' } & RunCounts & {
    duration_ms: number;
  };

/** The contract's `sync --json` shape, keys in the documented order (notifications extend it). */
export function summaryJson(s: SyncSummary): SyncSummary {
  return {
    shop: s.shop,
    run: s.run,
    status: s.status,
    pages: s.pages,
    items: s.items,
    added: s.added,
    updated: s.updated,
    removed: s.removed,
    invalid: s.invalid,
    duration_ms: s.duration_ms,
  };
}

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
    await told({ shop: shop.name, finishedAt: new Date(), status: 'complete', summary });
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
  try {
    ({ summary, rereads } = await syncHeld(shop, deps, held, log, started));
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
  const { shop: _shop, ...counted } = summary;
  log.info({ ...counted, rereads }, 'sync complete');
  return summary;
}

/** What a sync holds, as it acquires it: released by `closeAll` whatever happens. */
interface Held {
  readonly client: MarketplaceClient;
  store?: Store;
  lease?: Lease;
  check?: StoreCheck;
}

/** The sync proper, between acquiring the store and releasing it. */
async function syncHeld(
  shop: ShopConfig,
  deps: SyncDeps & { onRunStarted?: (run: number) => void },
  held: Held,
  log: Logger,
  started: number,
): Promise<{ summary: SyncSummary; rereads: number }> {
  const paths = shopPaths(deps.config.dataDir, shop.name);
  const store = openStore(paths.store);
  held.store = store;
  // Damage in pages this run never reads would otherwise go unnoticed and be built upon: the whole
  // file is checked off the main thread while the listing is read, and the run commits only if it passed.
  const check = startStoreCheck(paths.store);
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
  deps.onProgress?.({ phase: 'feeds', pages: counts.pages, items: counts.items, invalid: counts.invalid });
  await writeFeeds(store, paths, start.run, { gzip: deps.config.feedsGzip, log, onPoint: deps.onPoint });
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
  return { summary, rereads: counts.rereads };
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

/** What `completeRun` returns: the run's counts, its pages, and the pages re-read to confirm them. */
type CompletedRun = RunCounts & { rereads: number };

/** Reads, confirms and commits one run; a failure marks the run failed (resumable) and is rethrown. */
async function completeRun(
  store: Store,
  client: MarketplaceClient,
  shop: ShopConfig,
  start: RunStart,
  lease: Lease,
  check: StoreCheck,
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
    const batch = new StagingBatch(
      store,
      start.run,
      () => lease.assertHeld(),
      STAGING_BATCH,
      () => deps.onPoint?.('page-staged'),
    );
    const reading = new ReadingWatch(store, start.run, deps, log);
    const known = await SentVersions.load(store, start.run);
    await stageListing(
      client.readItems({ ...query, resume: parseCheckpoint(start.checkpoint), known }),
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
    const waiting = Date.now();
    const health = await check.result;
    log.debug({ waitedMs: Date.now() - waiting, status: health.status }, 'store checked');
    if (health.status !== 'ok') throw health.error;
    deps.onProgress?.({ ...reading.progress, phase: 'committing' });
    const counts = commitRun(store, start.run, () => lease.assertHeld());
    deps.onPoint?.('committed');
    return { ...counts, rereads: reading.rereads };
  } catch (error) {
    const failure = asRunFailure(error, store, start.run, shop, deps);
    recordFailure(store, start.run, failure, log);
    throw failure;
  }
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

/**
 * Pages per staging transaction, and the longest a read page waits to be staged while pages keep
 * coming. 40 pages rather than 10 cut writing 100,000 new items alone from 1.18 s to 1.01 s of CPU, but
 * not a whole first sync measurably (4.47 / 4.39 s against 4.51 / 4.34 s), for 55 MiB more peak RSS.
 */
const STAGING_BATCH: BatchLimits = { pages: 10, ms: 500 };

/**
 * Follows the reading: progress, invalid items, pages re-read, and a warning once the run has read
 * far more pages than the previous complete run (an endless listing shows itself early).
 */
class ReadingWatch {
  readonly progress: SyncProgress = { phase: 'reading', pages: 0, items: 0, invalid: 0 };
  rereads = 0;
  private readonly pagesBefore: number;
  private readonly previousPages: number | undefined;
  private warned = false;

  constructor(
    store: Store,
    run: number,
    readonly deps: SyncDeps,
    readonly log: Logger,
  ) {
    this.pagesBefore = getRun(store, run)?.pages ?? 0;
    const previous = previousCompleteRun(store, run);
    this.previousPages = previous === null ? undefined : getRun(store, previous)?.pages;
  }

  page(page: ItemPage): void {
    for (const bad of page.invalid)
      this.log.warn({ id: bad.id, page: bad.page, reason: bad.reason }, 'invalid item');
    for (const item of page.items) {
      const fields = replacedText(item);
      if (fields.length > 0)
        this.log.warn(
          { id: item.id, page: page.page, fields },
          'item text held bytes that are not UTF-8 or lone surrogates; each was replaced by U+FFFD',
        );
    }
    this.progress.pages += 1;
    this.progress.items += page.items.length + (page.unchanged?.length ?? 0);
    this.progress.invalid += page.invalid.length;
    this.rereads += page.rereads;
    this.log.debug({ page: page.page, items: page.items.length, duplicates: page.duplicates }, 'page read');
    this.deps.onProgress?.({ ...this.progress });
    this.warnIfFarLonger();
  }

  private warnIfFarLonger(): void {
    const previous = this.previousPages;
    const pages = this.pagesBefore + this.progress.pages;
    if (this.warned || previous === undefined || pages <= previous * FAR_LONGER.factor) return;
    if (pages <= previous + FAR_LONGER.pages) return;
    this.warned = true;
    this.log.warn(
      { pages, previousPages: previous },
      `this run has read ${pages} pages, more than ${FAR_LONGER.factor} times the ${previous} of the previous complete run`,
    );
  }
}

/** The item's text fields (the id is never one: `identifier` refuses it). */
const TEXT_FIELDS = ITEM_FIELDS.filter((field) => field.kind === 'text' || field.kind === 'list').map(
  (field) => field.name,
);

/**
 * The text fields of `item` holding U+FFFD: what the body's decoding put for bytes that were not UTF-8,
 * and normalisation for lone surrogates (`wellFormed`). A server that sends U+FFFD itself is reported
 * too: rare, and worth a look either way.
 */
function replacedText(item: Item): string[] {
  const fields: string[] = [];
  for (const name of TEXT_FIELDS) {
    const value = item[name];
    if (
      typeof value === 'string'
        ? value.includes('\ufffd')
        : Array.isArray(value) && value.some(hasReplacement)
    )
      fields.push(name);
  }
  return fields;
}

const hasReplacement = (value: unknown) => typeof value === 'string' && value.includes('\ufffd');

/** A run reading more pages than this many times, and this many more than, the previous complete run is worth a warning. */
const FAR_LONGER = { factor: 3, pages: 10 };

/**
 * Reads the listing into the run. Whatever ends the reading (its end, an abort, a failure), the pages
 * read so far are written first, so that a resumed run reads none of them again.
 */
async function stageListing(
  pages: AsyncIterable<ItemPage>,
  batch: StagingBatch,
  reading: ReadingWatch,
): Promise<void> {
  const { deps } = reading;
  try {
    for await (const page of pages) {
      batch.add(page);
      reading.page(page);
      if (deps.signal?.aborted) {
        // The page just read is staged first: asRunFailure tells the stop as resuming after it.
        batch.flush();
        deps.signal.throwIfAborted();
      }
      // Pages read ahead are already settled, so without this turn the loop would stage them all in
      // one unbroken chain of microtasks, holding up timers (lease renewals) and other shops' I/O.
      await nextTurn();
    }
    batch.flush();
  } catch (error) {
    stageBeforeFailing(batch, reading.log);
    throw error;
  }
}

/** Stages the pages read before a failure; if that fails too, the original failure still wins. */
function stageBeforeFailing(batch: StagingBatch, log: Logger): void {
  try {
    batch.flush();
  } catch (error) {
    log.warn(
      { err: error },
      'could not stage the pages read before the failure; the next sync reads them again',
    );
  }
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
