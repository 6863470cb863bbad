import { openReader } from '../export/publish/reader.js';
import { type FeedOptions, writeFeeds } from '../export/publish/write-feeds.js';
import type { Store } from '../store/open.js';
import type { ShopPaths } from '../store/paths.js';
import { markPublished } from '../store/published.js';

/**
 * Writes the feeds of complete run `run`, read through a connection of their own (lease renewals and
 * progress go on through `store`'s meanwhile), and records on `store` that they are published.
 */
export async function publishFeeds(
  store: Store,
  paths: ShopPaths,
  run: number,
  options: Omit<FeedOptions, 'record'>,
): Promise<void> {
  const reader = openReader(store);
  try {
    await writeFeeds(reader, paths, run, { ...options, record: () => markPublished(store, run) });
  } finally {
    reader.close();
  }
}
