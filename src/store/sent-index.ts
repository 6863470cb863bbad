import type { StoredVersion } from '../domain/unchanged-item.js';
import type { Store } from './open.js';
import { statementsPerConnection } from './per-connection.js';

/**
 * The bytes the current versions were read from (`item_versions.sent`, their hash), for the listing
 * reader to tell an item sent as the same bytes again (`SentIndex` in `src/api/item/known-elements.ts`): one
 * statement per page, over the covering index of ids. Nothing is loaded up front: an unchanged resync
 * whose bodies the store vouches for (`read-bodies.ts`) asks nothing, and memory does not grow with
 * the shop (loading every version took ~0.3 s and 8 MB for 100,000 items, and at 1,000,000 a bound of
 * 250,000 left the rest to one query per id, ~3.5 s).
 */
export class SentVersions {
  /**
   * Whether the store holds no version of a run before `run` (a first sync's): nothing to ask then,
   * which spares a first sync of 100,000 items ~0.55 s of look-ups that could find nothing, and a bulk
   * load (`bulk-load.ts`) has no index of ids to ask through. No such version appears later.
   */
  private readonly none: boolean;

  /** Asks about the open versions of complete runs before `run` that know their bytes. */
  constructor(
    private readonly store: Store,
    private readonly run: number,
  ) {
    // Not among `statements`: those are prepared together, and a bulk load has no index of ids to name.
    this.none = store.db.prepare(NONE_BEFORE).pluck().get(run) === 1;
  }

  versionsOf(
    elements: readonly { readonly id: string; readonly sent: number }[],
  ): (StoredVersion | undefined)[] {
    if (this.none) return elements.map(() => undefined);
    const pairs = JSON.stringify(elements.map(({ id, sent }) => [id, sent]));
    const rows = statements(this.store.db).versions.all({ run: this.run, pairs }) as VersionRow[];
    const found: (StoredVersion | undefined)[] = elements.map(() => undefined);
    for (const [at, hash, version] of rows) found[at] = { hash, version };
    return found;
  }
}

type VersionRow = [at: number, hash: number, version: number];

const NONE_BEFORE =
  'SELECT NOT EXISTS (SELECT 1 FROM item_versions INDEXED BY item_versions_from WHERE valid_from_run < ?)';

const statements = statementsPerConnection({
  // json_each first: the planner would otherwise walk the whole index for each element. An id has
  // one open version, so an element finds one row at most.
  versions: (db) =>
    db
      .prepare(
        `SELECT j.key, v.hash, v.version
         FROM json_each(@pairs) j
        CROSS JOIN item_versions v INDEXED BY item_versions_id
        WHERE v.id = j.value ->> 0 AND v.valid_to_run IS NULL AND v.valid_from_run < @run
          AND v.sent = j.value ->> 1`,
      )
      .raw(),
});
