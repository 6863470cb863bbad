import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeFeeds } from '../src/export/feeds.js';
import { silentLogger } from '../src/log.js';
import { commitRun } from '../src/store/commit.js';
import { openStore, type Store } from '../src/store/open.js';
import { shopPaths } from '../src/store/paths.js';
import { beginRun } from '../src/store/runs.js';

export interface FeedMemory {
  items: number;
  /** Resident set size just before writing the feeds. */
  rssBeforeMiB: number;
  /** Highest resident set size sampled while writing them. */
  rssPeakMiB: number;
  /** What writing the feeds added at its peak: the figure that must not grow with `items`. */
  rssGrowthMiB: number;
  seconds: number;
  inventoryCsvMiB: number;
  snapshotSqliteMiB: number;
}

/**
 * Seeds a store with one complete run of `items` synthetic items (staged in SQL, committed by the
 * store's own commit), then writes its feeds while sampling the process's RSS.
 */
export async function measureFeedMemory(items: number): Promise<FeedMemory> {
  const dir = mkdtempSync(path.join(tmpdir(), 'shop-sync-bench-feeds-'));
  const paths = shopPaths(dir, 'bench');
  const store = openStore(paths.store);
  try {
    const run = seedRun(store, items);
    const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 10);
    const started = performance.now();
    try {
      await writeFeeds(store, paths, run, { gzip: false, log: silentLogger() });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage.rss());
    return {
      items,
      rssBeforeMiB: mib(before),
      rssPeakMiB: mib(peak),
      rssGrowthMiB: mib(peak - before),
      seconds: Math.round((performance.now() - started) / 10) / 100,
      inventoryCsvMiB: mib(statSync(paths.inventoryCsv).size),
      snapshotSqliteMiB: mib(statSync(paths.snapshotSqlite).size),
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One complete run of `items` items with the text quirks the feeds must escape. */
function seedRun(store: Store, items: number): number {
  const { run } = beginRun(store, { query: 'bench', resumeWindowMinutes: 0 });
  store.db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @items)
       INSERT INTO staged_items (run, page, id, hash, title, price, original_price, currency, quantity, published,
         created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments, shop_id, shop_name,
         shop_url, shop_image, shop_items_url, raw)
       SELECT @run, 1 + i / 100, printf('item-%08d', i), printf('%040x', i),
              CASE i % 4 WHEN 0 THEN printf('=Mug "%d", blue', i) WHEN 1 THEN printf('Lamp %d' || char(10) || 'two lines', i)
                         WHEN 2 THEN printf('Кружка %d ☕', i) ELSE printf('-20%% chair %d', i) END,
              printf('%d.%02d', i % 1000, i % 100), NULL, 'EUR', i % 50, i % 7 <> 0,
              '2024-05-01T10:00:00Z', printf('https://market.example/v1/items/item-%08d', i), NULL,
              printf('["https://img.example/%d/1.jpg","https://img.example/%d/2.jpg"]', i, i), '[1,2]',
              'A description, with "quotes" and a comma.', '<p>A description</p>', NULL, 'shop-1', 'Bench shop',
              'https://market.example/shop', NULL, 'https://market.example/shop/items', '{}'
         FROM n`,
    )
    .run({ run, items });
  commitRun(store, run, () => undefined);
  return run;
}
