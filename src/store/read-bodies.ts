import type Database from 'better-sqlite3';
import type { KnownBody } from '../domain/unchanged-item.js';
import type { Store } from './open.js';
import { perConnection } from './per-connection.js';

/**
 * The listing bodies the store has read in full, by digest, with their elements (`KnownBodies` in
 * `src/api/listing/known-bodies.ts`): `listing_bodies`, one row a page. What a run learns and uses is
 * written with its staged pages (`write`, in their transaction); once a run completes, the bodies it
 * did not receive are dropped (`discardRunData`), so the table holds about one row per page of the shop.
 *
 * A row also keeps its elements' versions as run `versions_run` wrote or matched them. They are handed
 * out (`KnownBody.versions`) only while they are provably still current: that run is complete, so its
 * versions are not discarded, and none of them was closed at it or after (`ClosedVersions`); a version
 * of a complete run never changes otherwise, and one that the run itself rewrites or drops forgets the
 * rows that name it (`forgetVersion`). Without them a body's items are looked up one by one, as before.
 */
export class ReadBodies {
  private learnt = new Map<string, KnownBody>();
  private used = new Set<string>();
  /** Bodies used this run whose row holds no versions it can vouch for: recorded at `write`. */
  private unrecorded = new Set<string>();
  /** Bodies that recorded no versions with the latest batch. */
  private retry = new Set<string>();
  /** Whether the store knew no body when the run began (a first sync): nothing to look up then. */
  private readonly none: boolean;
  private readonly closed: ClosedVersions | undefined;

  constructor(private readonly store: Store) {
    this.none = statements(store.db).none.get() === 1;
    this.closed = this.none ? undefined : ClosedVersions.load(store.db);
  }

  /** Undefined too for a row that does not read as elements (the body is then read, and learnt again). */
  elementsOf(digest: string): KnownBody | undefined {
    if (this.none) return undefined;
    const row = statements(this.store.db).elements.get(digest) as BodyRow | undefined;
    const elements = row === undefined ? undefined : elementsIn(row.elements);
    if (row === undefined || elements === undefined) return undefined;
    this.used.add(digest);
    const versions = this.closed?.current(row, elements.ids.length);
    if (versions === undefined) this.unrecorded.add(digest);
    return versions === undefined ? elements : { ...elements, ...versions };
  }

  learn(digest: string, elements: KnownBody): void {
    this.learnt.set(digest, elements);
  }

  /**
   * Writes the bodies learnt and notes the ones used as received by `run`, in the caller's transaction,
   * after the batch's items: a body's versions are recorded as they stand then. Pages read ahead may
   * not be staged yet (their new items have no versions): a body that records none is tried once more
   * with the next batch.
   */
  write(run: number): void {
    const s = statements(this.store.db);
    const record = (digest: string) => s.record.get({ digest, run }) === 1;
    const retry = new Set<string>();
    for (const [digest, elements] of this.learnt) {
      s.learn.run(digest, JSON.stringify([elements.ids, elements.sent]), run);
      if (!record(digest)) retry.add(digest);
    }
    for (const digest of this.used) s.use.run(run, digest);
    for (const digest of this.unrecorded) if (!record(digest)) retry.add(digest);
    for (const digest of this.retry) if (!retry.has(digest)) record(digest);
    this.learnt = new Map();
    this.used = new Set();
    this.unrecorded = new Set();
    this.retry = retry;
  }
}

type Recorded = Required<Pick<KnownBody, 'versions' | 'hashes'>>;

interface BodyRow {
  readonly elements: string;
  readonly versions: string | null;
  readonly versions_run: number | null;
}

/**
 * The versions closed at or after the oldest run a row's versions were recorded at, by number, with
 * the run that closed them; and the complete runs. Loaded once per run from the index of closing runs:
 * an unchanged resync finds none, a resync after a 1 % change about one per changed item.
 */
class ClosedVersions {
  private constructor(
    private readonly closedAt: ReadonlyMap<number, number>,
    private readonly complete: ReadonlySet<number>,
  ) {}

  static load(db: Database.Database): ClosedVersions {
    const s = statements(db);
    const rows = s.closedSince.all() as [number, number][];
    return new ClosedVersions(new Map(rows), new Set(s.complete.all() as number[]));
  }

  /** The row's versions, if it holds one per element and they are all still current. */
  current(row: BodyRow, count: number): Recorded | undefined {
    const recordedAt = row.versions_run;
    if (row.versions === null || recordedAt === null || !this.complete.has(recordedAt)) return undefined;
    const recorded = versionsIn(row.versions, count);
    if (recorded === undefined) return undefined;
    if (this.closedAt.size > 0) {
      for (const version of recorded.versions) {
        const closedAt = this.closedAt.get(version);
        if (closedAt !== undefined && closedAt >= recordedAt) return undefined;
      }
    }
    return recorded;
  }
}

const statements = perConnection((db) => ({
  none: db.prepare('SELECT NOT EXISTS (SELECT 1 FROM listing_bodies)').pluck(),
  elements: db.prepare('SELECT elements, versions, versions_run FROM listing_bodies WHERE digest = ?'),
  learn: db.prepare(
    `INSERT INTO listing_bodies (digest, elements, run) VALUES (?, ?, ?)
       ON CONFLICT (digest) DO UPDATE SET elements = excluded.elements, run = excluded.run`,
  ),
  use: db.prepare('UPDATE listing_bodies SET run = ? WHERE digest = ?'),
  /**
   * Each element's open version read from its very text (null when there is none: the row then keeps
   * no versions), in the elements' order.
   */
  record: db
    .prepare(
      `UPDATE listing_bodies SET versions_run = @run, versions = (
       SELECT CASE WHEN count(e.version) = count(*)
                   THEN json_array(json_group_array(e.version), json_group_array(e.hash)) END
         FROM (SELECT v.version, v.hash
                 FROM json_each(listing_bodies.elements, '$[0]') j
                 LEFT JOIN item_versions v INDEXED BY item_versions_id
                   ON v.id = j.value AND v.valid_to_run IS NULL
                  AND v.sent = (listing_bodies.elements ->> ('$[1][' || j.key || ']'))
                ORDER BY j.key) e)
      WHERE digest = @digest
      RETURNING versions IS NOT NULL`,
    )
    .pluck(),
  closedSince: db
    .prepare(
      `SELECT version, valid_to_run FROM item_versions INDEXED BY item_versions_to
        WHERE valid_to_run >= (SELECT min(versions_run) FROM listing_bodies)`,
    )
    .raw(),
  complete: db.prepare("SELECT run FROM runs WHERE status = 'complete'").pluck(),
}));

/** The elements a row holds (`[ids, sent]`), or undefined when it holds anything else. */
function elementsIn(text: string): KnownBody | undefined {
  const [ids, sent] = twoArrays(text);
  if (ids === undefined || sent === undefined || ids.length === 0 || ids.length !== sent.length)
    return undefined;
  const wellFormed =
    ids.every((id) => typeof id === 'string') && sent.every((hash) => Number.isSafeInteger(hash));
  return wellFormed ? { ids: ids as string[], sent: sent as number[] } : undefined;
}

/** The versions a row holds (`[versions, hashes]`, `count` of each), or undefined. */
function versionsIn(text: string, count: number): Recorded | undefined {
  const [versions, hashes] = twoArrays(text);
  if (versions === undefined || hashes === undefined) return undefined;
  if (versions.length !== count || hashes.length !== count) return undefined;
  const wellFormed =
    versions.every((version) => Number.isSafeInteger(version)) &&
    hashes.every((hash) => Number.isSafeInteger(hash));
  return wellFormed ? { versions: versions as number[], hashes: hashes as number[] } : undefined;
}

/** The two arrays a JSON text `[a, b]` holds; undefined in place of either that is not one. */
function twoArrays(text: string): [unknown[] | undefined, unknown[] | undefined] {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return [undefined, undefined];
    throw error;
  }
  const [a, b] = Array.isArray(row) ? (row as unknown[]) : [];
  return [Array.isArray(a) ? a : undefined, Array.isArray(b) ? b : undefined];
}
