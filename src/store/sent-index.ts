import type { StoredVersion } from '../domain/unchanged-item.js';
import type { Store } from './open.js';

/**
 * The texts the current versions were read from (`item_versions.sent`), for the listing reader to
 * tell an item sent as the same text again (`SentIndex` in `src/api/known-elements.ts`). Loaded once
 * per run, from the covering index of ids (the rows themselves are most of the file): ~0.15 s and
 * ~8 MB for 100,000 items.
 */
export class SentVersions {
  private readonly at = new Map<string, number>();
  private readonly sent: Float64Array;
  private readonly hash: Float64Array;
  private readonly version: Float64Array;

  /** The open versions of complete runs before `run` that know their text. */
  constructor(store: Store, run: number) {
    const rows = store.db
      .prepare(
        `SELECT id, sent, hash, version FROM item_versions INDEXED BY item_versions_id
          WHERE valid_to_run IS NULL AND valid_from_run < ? AND sent IS NOT NULL`,
      )
      .raw()
      .all(run) as [string, number, number, number][];
    // Number arrays beside one map of positions: a map of 100,000 small objects costs twice as much.
    this.sent = new Float64Array(rows.length);
    this.hash = new Float64Array(rows.length);
    this.version = new Float64Array(rows.length);
    for (const [index, [id, sent, hash, version]] of rows.entries()) {
      this.at.set(id, index);
      this.sent[index] = sent;
      this.hash[index] = hash;
      this.version[index] = version;
    }
  }

  versionOf(id: string, sent: number): StoredVersion | undefined {
    const index = this.at.get(id);
    if (index === undefined || this.sent[index] !== sent) return undefined;
    return { hash: this.hash[index] as number, version: this.version[index] as number };
  }
}
