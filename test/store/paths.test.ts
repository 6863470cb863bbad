import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { shopPaths } from '../../src/store/paths.js';

describe('shopPaths', () => {
  it('puts every file of the contract under DATA_DIR/<shop>/', () => {
    const dataDir = path.join(path.sep, 'var', 'lib', 'shop-sync');
    const paths = shopPaths(dataDir, 'north-store');
    const shopDir = path.join(dataDir, 'north-store');
    expect(paths).toEqual({
      dir: shopDir,
      store: path.join(shopDir, 'inventory.sqlite'),
      feedsDir: path.join(shopDir, 'feeds'),
      inventoryCsv: path.join(shopDir, 'feeds', 'inventory.csv'),
      changesCsv: path.join(shopDir, 'feeds', 'changes.csv'),
      snapshotSqlite: path.join(shopDir, 'feeds', 'snapshot.sqlite'),
    });
  });

  it('keeps shops apart and cannot be changed by a caller', () => {
    const north = shopPaths('data', 'north');
    const south = shopPaths('data', 'south');
    for (const key of Object.keys(north) as (keyof typeof north)[]) expect(north[key]).not.toBe(south[key]);
    expect(Object.isFrozen(north)).toBe(true);
  });
});
