import { RemovalsHeldError } from '../errors.js';
import type { RunCounts } from '../store/run-records.js';

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

/** How a run ended, for `onRun`: its summary (complete or held), or its failure with how far it got. */
export type RunEnded = { readonly shop: string; readonly finishedAt: Date } & (
  | { readonly status: 'complete' | 'held'; readonly summary: SyncSummary }
  | {
      readonly status: 'failed';
      /** Null when the sync failed before it began a run (settings, the store). */
      readonly run: number | null;
      readonly error: Error;
      readonly progress: SyncProgress | undefined;
      readonly duration_ms: number;
    }
);

/**
 * What one sync did: its run's counts, between the run and how long it took. A held run's counts are
 * what completing it would have made; `held` is the sentence that says why it was not.
 */
export type SyncSummary = { shop: string; run: number } & (
  | { status: 'complete' }
  | { status: 'held'; held: string }
) &
  RunCounts & { duration_ms: number };

/** The summary of a held run. */
export type HeldSummary = SyncSummary & { status: 'held' };

/**
 * The failure a held run ends its command or job with: the one sentence, naming the shop, that `sync`,
 * `trigger --wait` and the worker's failed job all say.
 */
export function heldError(summary: HeldSummary): RemovalsHeldError {
  return new RemovalsHeldError(`Shop ${summary.shop}: ${summary.held}.`);
}

/** The contract's `sync --json` object. */
export type SummaryJson = { shop: string; run: number; status: SyncSummary['status'] } & RunCounts & {
    duration_ms: number;
  };

/** What `sync --all --json` and `trigger --wait --json` print for a shop whose sync failed. */
export function failedJson(shop: string, error: Error): { shop: string; status: 'failed'; error: string } {
  return { shop, status: 'failed', error: error.message };
}

/** The contract's `sync --json` shape, keys in the documented order (notifications extend it). */
export function summaryJson(s: SyncSummary): SummaryJson {
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
