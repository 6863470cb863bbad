import {
  type ItemPage,
  type ListingFilters,
  MarketplaceClient,
  type RetryOptions,
  type TokenStore,
} from './api/client.js';
import type { AppConfig, ShopConfig } from './config.js';
import { requireConnection } from './config.js';
import { InterruptedError } from './errors.js';
import { writeFeeds } from './export/feeds.js';
import type { Logger } from './log.js';
import { commitRun, type RunCounts } from './store/commit.js';
import { acquireLease, type Lease } from './store/lease.js';
import { openStore, type Store, storeError } from './store/open.js';
import { shopPaths } from './store/paths.js';
import { pruneRuns } from './store/prune.js';
import { confirmRemovals } from './store/removals.js';
import { beginRun, failRun, type RunStart } from './store/runs.js';
import { type BatchLimits, StagingBatch } from './store/staging.js';

export interface SyncProgress {
  pages: number;
  items: number;
  invalid: number;
}

/** Points a sync passes, for observers that must act exactly there (the fault suite kills the process). */
export type SyncPoint =
  | 'page-staged'
  | 'read'
  | 'removals-confirmed'
  | 'committed'
  | 'feed-prepared'
  | 'feeds-renamed'
  | 'published';

export interface SyncDeps {
  /** Called synchronously as the sync passes each point. */
  onPoint?: (point: SyncPoint) => void;
  config: AppConfig;
  log: Logger;
  /** Aborting stops the run once the pages read so far are staged; a later sync resumes it. */
  signal?: AbortSignal;
  onProgress?: (progress: SyncProgress) => void;
  /** How hard to retry each marketplace request (the client's defaults within the configured budget otherwise). */
  retry?: Partial<RetryOptions>;
  /** Where the shop's token is kept: shared between worker processes; this process's memory otherwise. */
  tokenStore?: TokenStore;
}

export interface SyncSummary {
  shop: string;
  run: number;
  status: 'complete';
  pages: number;
  items: number;
  added: number;
  updated: number;
  removed: number;
  invalid: number;
  duration_ms: number;
}

/**
 * One complete sync of one shop: read every page into the run's staging, confirm what seems removed,
 * commit the run as the latest snapshot, write the feeds, prune. The CLI and the worker both call it.
 */
export async function runSync(shop: ShopConfig, deps: SyncDeps): Promise<SyncSummary> {
  const started = Date.now();
  const connection = requireConnection(shop);
  const paths = shopPaths(deps.config.dataDir, shop.name);
  const log = deps.log.child({ shop: shop.name });
  const client = new MarketplaceClient({
    ...connection,
    logger: log,
    retry: { budgetMs: deps.config.retryBudgetSeconds * 1000, ...deps.retry },
    tokenStore: deps.tokenStore,
  });
  let store: Store | undefined;
  let lease: Lease | undefined;
  try {
    store = openStore(paths.store);
    lease = acquireLease(store, shop.name, (error) => log.warn({ err: error }, 'lease renewal failed'));
    const held = lease;
    const start = beginRun(store, {
      query: queryKey(shop),
      resumeWindowMinutes: deps.config.resumeWindowMinutes,
    });
    log.info({ run: start.run, resumed: start.resumed, startPage: start.startPage }, 'sync started');
    const counts = await completeRun(store, client, shop, start, held, deps, log);
    await writeFeeds(store, paths, start.run, { gzip: deps.config.feedsGzip, log, onPoint: deps.onPoint });
    if (deps.config.keepRuns !== null) {
      const pruned = pruneRuns(store, deps.config.keepRuns);
      if (pruned.runs.length > 0)
        log.info({ runs: pruned.runs, versions: pruned.versions }, 'pruned old runs');
    }
    const summary: SyncSummary = {
      shop: shop.name,
      run: start.run,
      status: 'complete',
      pages: counts.pages,
      items: counts.items,
      added: counts.added,
      updated: counts.updated,
      removed: counts.removed,
      invalid: counts.invalid,
      duration_ms: Date.now() - started,
    };
    const { shop: _shop, ...counted } = summary;
    log.info(counted, 'sync complete');
    return summary;
  } finally {
    lease?.release();
    await client.close();
    store?.close();
  }
}

/** Reads, confirms and commits one run; a failure marks the run failed (resumable) and is rethrown. */
async function completeRun(
  store: Store,
  client: MarketplaceClient,
  shop: ShopConfig,
  start: RunStart,
  lease: Lease,
  deps: SyncDeps,
  log: Logger,
): Promise<RunCounts & { pages: number }> {
  try {
    const query = {
      perPage: shop.perPage,
      order: shop.order,
      locale: shop.locale,
      filters: shop.filters as ListingFilters,
    };
    const batch = new StagingBatch(store, start.run, () => lease.assertHeld(), STAGING_BATCH);
    await stageListing(client.readItems({ ...query, startPage: start.startPage }), batch, shop, deps, log);
    deps.onPoint?.('read');
    const removals = await confirmRemovals(store, start.run, {
      // Under filters an item may exist yet no longer be listed: only the listing can tell.
      fetchItem: Object.keys(shop.filters).length === 0 ? (url) => client.fetchItem(url) : undefined,
      relist: () => client.readItems(query),
      relistCost: runPages(store, start.run),
    });
    if (removals.stillPresent > 0) log.info(removals, 'items missing from the listing are still there');
    deps.onPoint?.('removals-confirmed');
    const counts = commitRun(store, start.run, () => lease.assertHeld());
    deps.onPoint?.('committed');
    return { ...counts, pages: runPages(store, start.run) };
  } catch (error) {
    const failure = isSqliteError(error)
      ? storeError(`Cannot write store ${store.path}`, store.path, error)
      : error;
    recordFailure(store, start.run, failure, log);
    throw failure;
  }
}

/** Pages per staging transaction, and the longest a read page waits to be staged while pages keep coming. */
const STAGING_BATCH: BatchLimits = { pages: 10, ms: 500 };

/**
 * Reads the listing into the run's staging. Whatever ends the reading (its end, an abort, a failure),
 * the pages read so far are staged first, so that a resumed run reads none of them again.
 */
async function stageListing(
  pages: AsyncIterable<ItemPage>,
  batch: StagingBatch,
  shop: ShopConfig,
  deps: SyncDeps,
  log: Logger,
): Promise<void> {
  const progress: SyncProgress = { pages: 0, items: 0, invalid: 0 };
  try {
    for await (const page of pages) {
      batch.add(page);
      deps.onPoint?.('page-staged');
      for (const bad of page.invalid)
        log.warn({ id: bad.id, page: bad.page, reason: bad.reason }, 'invalid item');
      progress.pages += 1;
      progress.items += page.items.length;
      progress.invalid += page.invalid.length;
      log.debug({ page: page.page, items: page.items.length, duplicates: page.duplicates }, 'page read');
      deps.onProgress?.({ ...progress });
      if (deps.signal?.aborted) {
        batch.flush();
        throw new InterruptedError(
          `The sync of shop ${shop.name} was interrupted after page ${page.page}; the next sync resumes from there.`,
        );
      }
    }
    batch.flush();
  } catch (error) {
    stageBeforeFailing(batch, log);
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
    failRun(store, run, failure instanceof Error ? failure.message : String(failure));
  } catch (error) {
    log.warn({ err: error, run }, 'could not mark the run failed; it stays running until reclaimed');
  }
}

function isSqliteError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

function runPages(store: Store, run: number): number {
  return store.db.prepare('SELECT pages FROM runs WHERE run = ?').pluck().get(run) as number;
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
