import type Database from 'better-sqlite3';
import type { KnownBody, StoredVersion, VouchedBody } from '../domain/unchanged-item.js';
import type { Store } from './open.js';
import { statementsPerConnection } from './per-connection.js';

/**
 * The listing bodies the store has read in full, by digest and by the page that received them, with
 * their elements (`KnownBodies` in `src/api/listing/known-bodies.ts`): `listing_bodies`, one row a page. What a run learns and uses is
 * written with its staged pages (`write`, in their transaction), the run that last received each body in
 * a small row of its own (`listing_body_runs`: an unchanged resync then rewrites none of the bodies' rows);
 * once a run completes, the bodies it did not receive are dropped (`discardRunData`), so the table holds
 * about one row per page of the shop.
 *
 * A row also keeps its elements' versions as run `versions_run` wrote or matched them. They are handed
 * out (`KnownBody.versions`) only while they are provably still current: that run is complete, so its
 * versions are not discarded, pruning has not reached it, and none of them was closed at it or after
 * (`ClosedVersions`); a version of a complete run never changes otherwise, and one that the run itself
 * rewrites or drops forgets the rows that name it (`forgetVersion` in `write-items.ts`). Without them a
 * body's items are looked up by their bytes' hashes (`sent-index.ts`), the reference this path is tested
 * against (test/properties/known-bodies-store.test.ts).
 */
export class ReadBodies {
  private learnt = new Map<string, { elements: KnownBody; page: string }>();
  private used = new Set<string>();
  /** Bodies used this run whose row holds no versions it can vouch for: recorded at `write`. */
  private unrecorded = new Set<string>();
  /** Bodies that recorded no versions with the latest batch, with what their reading knew. */
  private retry = new Map<string, KnownBody | undefined>();
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

  /**
   * The latest row received as `page` whose versions are vouched for exactly as `elementsOf` vouches
   * for them: each of its elements received again, as the same bytes, is that version still.
   */
  previousOf(page: string): VouchedBody | undefined {
    if (this.none) return undefined;
    for (const row of statements(this.store.db).page.iterate(page) as IterableIterator<BodyRow>) {
      const elements = elementsIn(row.elements);
      const versions = elements && this.closed?.current(row, elements.ids.length);
      if (elements && versions) return { ...elements, ...versions };
    }
    return undefined;
  }

  learn(digest: string, elements: KnownBody, page: string): void {
    this.learnt.set(digest, { elements, page });
  }

  /**
   * Writes the bodies learnt and notes the ones used as received by `run`, in the caller's transaction,
   * after the batch's items: a body's versions are recorded as they stand then. Pages read ahead may
   * not be staged yet (their new items have no versions): a body that records none is tried once more
   * with the next batch. A bulk load (`bulk-load.ts`) cannot look versions up: it hands over those its
   * batch inserted (`handed`), and records the bodies they do not cover as it ends.
   */
  write(run: number, { handed }: { handed?: HandedVersions } = {}): void {
    const s = statements(this.store.db);
    const retry = new Map<string, KnownBody | undefined>();
    const recorded = (digest: string, elements?: KnownBody) =>
      handed
        ? elements !== undefined && recordHanded(s, run, digest, elements, handed)
        : record(s, run, digest, elements);
    for (const [digest, { elements, page }] of this.learnt) {
      if (!learnWithVersions(s, { run, digest, elements, page, handed })) retry.set(digest, elements);
      s.received.run({ digest, run });
    }
    for (const digest of this.used) s.received.run({ digest, run });
    for (const digest of this.unrecorded) if (!recorded(digest)) retry.set(digest, undefined);
    for (const [digest, elements] of this.retry) if (!retry.has(digest)) recorded(digest, elements);
    this.learnt = new Map();
    this.used = new Set();
    this.unrecorded = new Set();
    this.retry = retry;
  }
}

/**
 * Writes a body learnt, with its versions as run `run` leaves them when they are known before it is
 * written (handed over by a bulk load, or looked up for a body just read) in the same statement: its
 * row written once rather than inserted and then updated, a tenth of what a first sync writes to its
 * store. Whether it recorded a version for every element; `record` and `recordHanded` are the
 * reference (a learnt row then updated by them is this row).
 */
function learnWithVersions(s: Statements, { run, digest, elements, page, handed }: LearntBody): boolean {
  const text = elementsText(elements);
  const known = handed
    ? handedVersions(elements, handed)
    : elements.read && versionsRead(s, elements, elements.read);
  // Versions to write now: every one handed over, or those a body just read looked up (null if not all).
  if (handed ? known !== undefined : elements.read !== undefined) {
    s.learnRecorded.run(digest, text, page, known ? JSON.stringify(known) : null, run);
    return known !== undefined;
  }
  s.learn.run(digest, text, page);
  return handed ? false : record(s, run, digest, elements);
}

interface LearntBody {
  readonly run: number;
  readonly digest: string;
  readonly elements: KnownBody;
  readonly page: string;
  readonly handed: HandedVersions | undefined;
}

/**
 * Records the versions of the body `digest` as run `run` leaves them; whether it found one for every
 * element. A body just read (`elements.read`) looks up only the elements it did not know unchanged.
 */
function record(s: Statements, run: number, digest: string, elements?: KnownBody): boolean {
  if (elements?.read === undefined) return s.record.get({ digest, run }) === 1;
  const versions = versionsRead(s, elements, elements.read);
  s.recordRead.run(versions ? JSON.stringify(versions) : null, run, digest);
  return versions !== undefined;
}

/** The version a bulk load's batch inserted for an id from the text whose hash is `sent`, if it did. */
export type HandedVersions = (id: string, sent: number) => StoredVersion | undefined;

/** Records the versions of the body `digest` as `handed` has them; whether it has every one. */
function recordHanded(
  s: Statements,
  run: number,
  digest: string,
  elements: KnownBody,
  handed: HandedVersions,
): boolean {
  const versions = handedVersions(elements, handed);
  if (versions !== undefined) s.recordRead.run(JSON.stringify(versions), run, digest);
  return versions !== undefined;
}

/** A body's versions as `[versions, hashes]` when `handed` has every one, else undefined. */
function handedVersions({ ids, sent }: KnownBody, handed: HandedVersions): [number[], number[]] | undefined {
  const versions: number[] = [];
  const hashes: number[] = [];
  for (const [i, id] of ids.entries()) {
    const known = handed(id, sent[i] as number);
    if (known === undefined) return undefined;
    versions.push(known.version);
    hashes.push(known.hash);
  }
  return [versions, hashes];
}

type Recorded = Required<Pick<KnownBody, 'versions' | 'hashes'>>;

/**
 * A body's versions as `[versions, hashes]`: those its reading knew unchanged (of complete runs, so
 * they change only by being closed, which `ClosedVersions` sees), the others looked up as they stand
 * now; undefined when one has no open version read from its very bytes.
 */
function versionsRead(
  s: Statements,
  { ids, sent }: KnownBody,
  read: readonly (StoredVersion | undefined)[],
): [number[], number[]] | undefined {
  // Plain arrays filled in place: a 1 % resync records ~700 bodies of 100 elements this way.
  const versions: number[] = [];
  const hashes: number[] = [];
  const missing: [number, string, number][] = [];
  for (const [i, id] of ids.entries()) {
    const known = read[i];
    if (known === undefined) missing.push([i, id, sent[i] as number]);
    else {
      versions[i] = known.version;
      hashes[i] = known.hash;
    }
  }
  if (missing.length > 0) {
    const rows = s.openVersions.all(JSON.stringify(missing)) as [number, number, number][];
    for (const [i, version, hash] of rows) {
      versions[i] = version;
      hashes[i] = hash;
    }
  }
  return ids.some((_, i) => versions[i] === undefined) ? undefined : [versions, hashes];
}

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
    /** Rows recorded at this run or before may name versions pruned since (0: none were). */
    private readonly prunedThrough: number,
  ) {}

  static load(db: Database.Database): ClosedVersions {
    const s = statements(db);
    const rows = s.closedSince.all() as [number, number][];
    const complete = s.complete.all() as number[];
    return new ClosedVersions(new Map(rows), new Set(complete), prunedThrough(s, complete));
  }

  /** The row's versions, if it holds one per element and they are all still current. */
  current(row: BodyRow, count: number): Recorded | undefined {
    const recordedAt = row.versions_run;
    if (row.versions === null || recordedAt === null || !this.complete.has(recordedAt)) return undefined;
    if (recordedAt <= this.prunedThrough) return undefined;
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

type Statements = ReturnType<typeof statements>;

/**
 * The run up to which versions may have been pruned: pruning keeps the complete runs from one of them
 * on, deleting the runs before it and the versions closed at it or before, so once it has pruned, the
 * oldest complete run is that one and some run numbers below it are gone (runs are numbered from 1 and
 * never again). A version closed at or after a row's run and pruned since is then no longer there to
 * be seen closed.
 */
function prunedThrough(s: Statements, complete: readonly number[]): number {
  const oldest = Math.min(...complete);
  if (!Number.isFinite(oldest)) return 0;
  return (s.runsBefore.get(oldest) as number) < oldest - 1 ? oldest : 0;
}

/**
 * Records the versions of the listing bodies `run` received, as they stand, `limit` of them (all when
 * negative) after row `after`: returns the last row recorded, or undefined when none was left. With
 * `unrecordedOr`, only the bodies whose versions `run` has not recorded and those naming one of those ids.
 */
export function recordBodiesOf(
  db: Database.Database,
  run: number,
  after = 0,
  limit = -1,
  { unrecordedOr }: { unrecordedOr?: readonly string[] } = {},
): number | undefined {
  const which =
    unrecordedOr === undefined
      ? ''
      : unrecordedOr.length === 0
        ? 'AND versions_run IS NOT @run'
        : `AND (versions_run IS NOT @run OR EXISTS (SELECT 1 FROM json_each(elements, '$[0]')
                 WHERE value IN (SELECT value FROM json_each(@ids))))`;
  const rows = db
    .prepare(
      `UPDATE listing_bodies SET versions_run = @run, versions = ${VERSIONS_OF_ELEMENTS}
        WHERE rowid IN (SELECT rowid FROM listing_bodies
                         WHERE rowid > @after ${which}
                           AND body IN (SELECT body FROM listing_body_runs WHERE run = @run)
                         ORDER BY rowid LIMIT @limit)
        RETURNING rowid`,
    )
    .pluck()
    .all({
      run,
      after,
      limit,
      ...(unrecordedOr?.length && { ids: JSON.stringify(unrecordedOr) }),
    }) as number[];
  return rows.length === 0 ? undefined : Math.max(...rows);
}

/**
 * A row's elements' open versions read from their very bytes, as `[versions, hashes]`; null when one
 * has none (the row then keeps no versions).
 */
const VERSIONS_OF_ELEMENTS = `(
       SELECT CASE WHEN count(e.version) = count(*)
                   THEN json_array(json_group_array(e.version), json_group_array(e.hash)) END
         FROM (SELECT v.version, v.hash
                 FROM json_each(listing_bodies.elements, '$[0]') j
                 LEFT JOIN item_versions v INDEXED BY item_versions_id
                   ON v.id = j.value AND v.valid_to_run IS NULL
                  AND v.sent = (listing_bodies.elements ->> ('$[1][' || j.key || ']'))
                ORDER BY j.key) e)`;

const statements = statementsPerConnection({
  none: (db) => db.prepare('SELECT NOT EXISTS (SELECT 1 FROM listing_bodies)').pluck(),
  elements: (db) =>
    db.prepare('SELECT elements, versions, versions_run FROM listing_bodies WHERE digest = ?'),
  /** The rows received as a page, latest first (a row vouches for its versions or not: asked in turn). */
  page: (db) =>
    db.prepare(
      `SELECT elements, versions, versions_run FROM listing_bodies INDEXED BY listing_bodies_page
      WHERE page = ? AND versions IS NOT NULL ORDER BY versions_run DESC, rowid DESC`,
    ),
  learn: (db) =>
    db.prepare(
      `INSERT INTO listing_bodies (digest, elements, page) VALUES (?, ?, ?)
       ON CONFLICT (digest) DO UPDATE SET elements = excluded.elements, page = excluded.page`,
    ),
  /** `learn` and `recordRead` in one statement. */
  learnRecorded: (db) =>
    db.prepare(
      `INSERT INTO listing_bodies (digest, elements, page, versions, versions_run) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (digest) DO UPDATE SET elements = excluded.elements, page = excluded.page,
         versions = excluded.versions, versions_run = excluded.versions_run`,
    ),
  /** Notes that run `run` received the body `digest`, learnt or used: in a small row of its own. */
  received: (db) =>
    db.prepare(
      `INSERT INTO listing_body_runs (body, run) SELECT body, @run FROM listing_bodies WHERE digest = @digest
       ON CONFLICT (body) DO UPDATE SET run = excluded.run`,
    ),
  record: (db) =>
    db
      .prepare(
        `UPDATE listing_bodies SET versions_run = @run, versions = ${VERSIONS_OF_ELEMENTS}
        WHERE digest = @digest RETURNING versions IS NOT NULL`,
      )
      .pluck(),
  recordRead: (db) => db.prepare('UPDATE listing_bodies SET versions = ?, versions_run = ? WHERE digest = ?'),
  /** Per `[i, id, sent]`: `[i, version, hash]` of the id's open version read from those very bytes. */
  openVersions: (db) =>
    db
      .prepare(
        `SELECT j.value ->> 0, v.version, v.hash
         FROM json_each(?) j
        CROSS JOIN item_versions v INDEXED BY item_versions_id
        WHERE v.id = j.value ->> 1 AND v.valid_to_run IS NULL AND v.sent = j.value ->> 2`,
      )
      .raw(),
  closedSince: (db) =>
    db
      .prepare(
        `SELECT version, valid_to_run FROM item_versions INDEXED BY item_versions_to
        WHERE valid_to_run >= (SELECT min(versions_run) FROM listing_bodies)`,
      )
      .raw(),
  complete: (db) => db.prepare("SELECT run FROM runs WHERE status = 'complete'").pluck(),
  runsBefore: (db) => db.prepare('SELECT count(*) FROM runs WHERE run < ?').pluck(),
});

/**
 * A row's `elements`: `[ids, sent]`, and the lengths of the elements' bytes third where the reading
 * gave them (rows learnt before the lengths were recorded hold none: their pages are scanned whole).
 */
function elementsText({ ids, sent, lengths }: KnownBody): string {
  return JSON.stringify(lengths ? [ids, sent, lengths] : [ids, sent]);
}

/** The elements a row holds (`[ids, sent]`, maybe `lengths`), or undefined when it holds anything else. */
function elementsIn(text: string): KnownBody | undefined {
  const [ids, sent, lengths] = arraysIn(text);
  if (ids === undefined || sent === undefined || ids.length === 0 || ids.length !== sent.length)
    return undefined;
  const wellFormed =
    ids.every((id) => typeof id === 'string') && sent.every((hash) => Number.isSafeInteger(hash));
  if (!wellFormed) return undefined;
  const body = { ids: ids as string[], sent: sent as number[] };
  const measured =
    lengths !== undefined &&
    lengths.length === ids.length &&
    lengths.every((length) => Number.isSafeInteger(length) && (length as number) > 0);
  return measured ? { ...body, lengths: lengths as number[] } : body;
}

/** The versions a row holds (`[versions, hashes]`, `count` of each), or undefined. */
function versionsIn(text: string, count: number): Recorded | undefined {
  const [versions, hashes] = arraysIn(text);
  if (versions === undefined || hashes === undefined) return undefined;
  if (versions.length !== count || hashes.length !== count) return undefined;
  const wellFormed =
    versions.every((version) => Number.isSafeInteger(version)) &&
    hashes.every((hash) => Number.isSafeInteger(hash));
  return wellFormed ? { versions: versions as number[], hashes: hashes as number[] } : undefined;
}

/** The arrays a JSON text `[a, b, …]` holds, in order; undefined in place of any that is not one. */
function arraysIn(text: string): (unknown[] | undefined)[] {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return [];
    throw error;
  }
  return Array.isArray(row) ? (row as unknown[]).map((a) => (Array.isArray(a) ? a : undefined)) : [];
}
