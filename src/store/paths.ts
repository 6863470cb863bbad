import path from 'node:path';

/** Where one shop's files live: everything is shop-scoped so shops can be sharded across volumes. */
export interface ShopPaths {
  readonly dir: string;
  readonly store: string;
  readonly feedsDir: string;
  readonly inventoryCsv: string;
  readonly changesCsv: string;
  readonly snapshotSqlite: string;
}

export function shopPaths(dataDir: string, shop: string): ShopPaths {
  const dir = path.join(dataDir, shop);
  const feedsDir = path.join(dir, 'feeds');
  return Object.freeze({
    dir,
    store: path.join(dir, 'inventory.sqlite'),
    feedsDir,
    inventoryCsv: path.join(feedsDir, 'inventory.csv'),
    changesCsv: path.join(feedsDir, 'changes.csv'),
    snapshotSqlite: path.join(feedsDir, 'snapshot.sqlite'),
  });
}
