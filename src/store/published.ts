import type { Store } from './open.js';
import { latestCompleteRun } from './run-records.js';

/**
 * Which complete run the shop's published feeds reflect. It is recorded only once the feeds are in
 * place, so after a crash or a full disk between a run's commit and its feeds it still names the
 * older run: the next feeds then count their changes from there, and no change misses a feed.
 */
export function publishedRun(store: Store): number | null {
  const run = store.db.prepare('SELECT run FROM published WHERE slot = 1').pluck().get() as
    | number
    | undefined;
  return run ?? null;
}

/** Records that the feeds now in place reflect complete run `run`. */
export function markPublished(store: Store, run: number): void {
  store.db
    .prepare(
      `INSERT INTO published (slot, run, published_at) VALUES (1, ?, ?)
       ON CONFLICT (slot) DO UPDATE SET run = excluded.run, published_at = excluded.published_at`,
    )
    .run(run, new Date().toISOString());
}

/** The run the feeds reflect beside the latest complete run: they lag when the two differ. */
export interface FeedsLag {
  readonly published: number | null;
  readonly latestComplete: number | null;
  readonly lagging: boolean;
}

/** For `runs`: whether the feeds lag behind the latest complete run (their last publication failed). */
export function feedsLag(store: Store): FeedsLag {
  const published = publishedRun(store);
  const latestComplete = latestCompleteRun(store);
  return { published, latestComplete, lagging: latestComplete !== null && published !== latestComplete };
}
