import { setImmediate as nextTurn } from 'node:timers/promises';
import type { StoredVersion } from '../domain/unchanged-item.js';
import type { Store } from './open.js';

/** Versions per statement of the load: one is one short synchronous stretch. */
const SLICE = 5000;

/**
 * The most versions loaded: about 45 MB. Without a bound a resync of 1,000,000 items peaked at 619 MiB
 * (against 195 MiB before the index). An id beyond it is looked up in the store, one indexed query each.
 */
const MAX_KNOWN_VERSIONS = 250_000;

/**
 * The texts the current versions were read from (`item_versions.sent`), for the listing reader to
 * tell an item sent as the same text again (`SentIndex` in `src/api/known-elements.ts`). Loaded once
 * per run, from the covering index of ids (the rows themselves are most of the file), in slices that
 * yield to the event loop between them: ~0.15 s and ~8 MB for 100,000 items, and at most
 * `MAX_KNOWN_VERSIONS` of them, so that memory stays bounded whatever the shop's size.
 */
export class SentVersions {
  private readonly at = new Map<string, number>();
  /** Set when the bound stopped the load: the versions of ids not loaded are looked up one by one. */
  private rest: ((id: string, sent: number) => StoredVersion | undefined) | undefined;
  // Number arrays beside one map of positions: a map of 100,000 small objects costs twice as much.
  private readonly sent: number[] = [];
  private readonly hash: number[] = [];
  private readonly version: number[] = [];

  private constructor() {}

  /** The open versions of complete runs before `run` that know their text, the first `limit` by id. */
  static async load(store: Store, run: number, limit = MAX_KNOWN_VERSIONS): Promise<SentVersions> {
    const index = new SentVersions();
    const slice = store.db
      .prepare(
        `SELECT id, sent, hash, version FROM item_versions INDEXED BY item_versions_id
          WHERE id > ? AND valid_to_run IS NULL AND valid_from_run < ? AND sent IS NOT NULL
          ORDER BY id LIMIT ${SLICE}`,
      )
      .raw();
    // An id has one open version: the next slice starts after the last id of this one.
    let after = '';
    for (;;) {
      const rows = slice.all(after, run) as [string, number, number, number][];
      for (const [id, sent, hash, version] of rows) index.add(id, sent, hash, version);
      const last = rows.at(-1);
      if (rows.length < SLICE || last === undefined) return index;
      if (index.size >= limit) {
        index.rest = storedVersion(store, run);
        return index;
      }
      after = last[0];
      await nextTurn();
    }
  }

  private add(id: string, sent: number, hash: number, version: number): void {
    this.at.set(id, this.sent.length);
    this.sent.push(sent);
    this.hash.push(hash);
    this.version.push(version);
  }

  get size(): number {
    return this.sent.length;
  }

  versionOf(id: string, sent: number): StoredVersion | undefined {
    const index = this.at.get(id);
    if (index === undefined) return this.rest?.(id, sent);
    if (this.sent[index] !== sent) return undefined;
    return { hash: this.hash[index] as number, version: this.version[index] as number };
  }
}

/**
 * The open version of complete runs before `run` read from text hashing as `sent`, looked up by the same
 * covering index (for the ids the load left out). Versions this run has closed meanwhile are not found:
 * their items are read in full, which is always right.
 */
function storedVersion(store: Store, run: number) {
  const query = store.db
    .prepare(
      `SELECT hash, version FROM item_versions INDEXED BY item_versions_id
        WHERE id = ? AND valid_to_run IS NULL AND valid_from_run < ? AND sent = ?`,
    )
    .raw();
  return (id: string, sent: number): StoredVersion | undefined => {
    const row = query.get(id, run, sent) as [number, number] | undefined;
    return row === undefined ? undefined : { hash: row[0], version: row[1] };
  };
}
