import type Database from 'better-sqlite3';
import type { Item } from '../domain/item.js';
import type { UnchangedItem } from '../domain/unchanged-item.js';
import { ITEM_COLUMNS, itemHash, itemValues } from './item-row.js';
import { perConnection, statementsPerConnection } from './per-connection.js';

/** A version of an id as a run sees it while it writes. */
interface Version {
  readonly version: number;
  readonly hash: number;
  /** Closed by this run (it read the item changed, or confirmed it gone). */
  readonly closed: boolean;
  /** Noted in `run_matched`: this run read the item with exactly its values. */
  readonly matched: boolean;
}

/** What the store holds of one id for a run: the version of the latest complete run, and the run's own. */
interface Known {
  current?: Version;
  mine?: Version;
}

/** What the run read of the items of one page: each item with the hash of its text as sent (when
 * taken), and the items known unchanged from that text alone. */
export interface ReadItems {
  readonly items: readonly Item[];
  /** `sent[i]` is the hash of `items[i]`'s text as sent (`sent-text.ts`). */
  readonly sent?: readonly (number | undefined)[];
  readonly unchanged?: readonly UnchangedItem[];
}

/**
 * Writes what the run read, in one transaction the caller holds; returns how many ids were new to the
 * run (an id read twice counts once, with the values read last). The store is asked about all the
 * items at once:
 * - an item known unchanged from its text whose id the run has not written otherwise is noted in
 *   `run_matched` by its version's number straight away: its version was current at a complete run
 *   when the run (or its latest attempt) began, and only this run could have changed that since;
 * - an item whose values hash as its open version's (of a complete run) is noted likewise, and
 *   nothing else is written: a resync appends to one small index (the version learns the text it was
 *   read from, if it did not know it yet);
 * - the others (new, changed, or read again) are written one by one by `writeChanged`.
 * A first sync is bulk-loaded instead (`bulk-load.ts`); this is the reference it is tested against.
 */
export function writeItems(db: Database.Database, run: number, pages: readonly ReadItems[]): number {
  const s = statements(db);
  const { ids: written } = runWrites(db, run);
  const latest = new Map<string, Hashed>();
  // A page holds an id once; across pages, in the order read, the last reading wins.
  for (const read of pages) {
    for (const [index, item] of read.items.entries())
      latest.set(item.id, { id: item.id, item, hash: itemHash(item), sent: read.sent?.[index] });
    for (const { id, hash, version } of read.unchanged ?? []) latest.set(id, { id, hash, version });
  }
  const known: number[] = [];
  const hashed: Hashed[] = [];
  for (const entry of latest.values()) {
    if (entry.version !== undefined && !written.has(entry.id)) known.push(entry.version);
    else hashed.push(entry);
  }
  let fresh = known.length > 0 ? s.match.run(run, JSON.stringify(known)).changes : 0;
  if (hashed.length > 0) fresh += writeHashed(s, run, hashed, written);
  return fresh;
}

/** `writeItems` for the entries that the store is asked about; notes the ids written in `written`. */
function writeHashed(s: Statements, run: number, hashed: readonly Hashed[], written: Set<string>): number {
  // A hash has at most 16 decimal digits: padded, it tells where the id starts, whatever the id holds.
  const keys = hashed.map(({ id, hash }) => String(hash).padStart(16, '0') + id);
  const versions = s.unchanged.all({ run, keys: JSON.stringify(keys) }) as (number | null)[];
  const matched = versions.filter((version) => version !== null);
  let fresh = matched.length > 0 ? s.match.run(run, JSON.stringify(matched)).changes : 0;
  const learnt = hashed.flatMap(({ item, sent }, index) =>
    item !== undefined && sent !== undefined && versions[index] != null ? [[versions[index], sent]] : [],
  );
  if (learnt.length > 0) s.learnSent.run(JSON.stringify(learnt));
  const rest = hashed.filter((_, index) => versions[index] === null);
  for (const { id } of rest) written.add(id);
  if (rest.length > 0) fresh += writeChanged(s, run, rest);
  return fresh;
}

/** What this connection has written in one run. */
interface RunWrites {
  readonly run: number;
  /**
   * The ids it has written versions (or reopened them) for, other than by a plain match: an item of
   * them known unchanged from its text is checked against the store like any other.
   */
  readonly ids: Set<string>;
}

const runWrites = (() => {
  const byConnection = perConnection((): { state?: RunWrites } => ({}));
  return (db: Database.Database, run: number): RunWrites => {
    const held = byConnection(db);
    if (held.state?.run !== run) held.state = { run, ids: new Set() };
    return held.state;
  };
})();

/**
 * Writes items that are not simply unchanged; returns how many ids were new to the run. A new or
 * changed item writes its version, opened by this run, and closes the version it supersedes at this
 * run: readers of complete runs see neither change until the run is complete (`VALID_AT`). Read again
 * within the run, the values read last win: the run's version is replaced, or dropped and the previous
 * one reopened (and matched) when the item is back to it; a matched version that the item no longer
 * matches is closed and unmatched. So `run_matched` holds exactly the open versions of complete runs
 * that the run read unchanged, which `candidateCount` counts on. An item known unchanged from its text
 * has its current version's hash, so it always takes one of the first two ways.
 */
function writeChanged(s: Statements, run: number, entries: readonly Hashed[]): number {
  const known = lookUp(
    s,
    run,
    entries.map(({ id }) => id),
  );
  let fresh = 0;
  for (const { id, item, hash, sent } of entries) {
    const { current, mine } = known.get(id) ?? {};
    if (!current?.matched && mine === undefined) fresh += 1;
    if (mine?.hash === hash) continue;
    if (current?.hash === hash) {
      if (current.closed) s.reopen.run(current.version);
      if (mine !== undefined) dropMine(s, run, mine.version);
      if (!current.matched) s.match.run(run, `[${current.version}]`);
      continue;
    }
    if (item === undefined) throw new Error(`item ${id} was read as unchanged but its version is gone`);
    if (current !== undefined && !current.closed) s.close.run(run, current.version);
    if (current?.matched) s.unmatch.run(run, current.version);
    if (mine !== undefined) {
      s.replace.run(...itemValues(item, hash).slice(1), sent ?? null, mine.version);
      s.forgetVersion.run({ run, version: mine.version });
    } else s.insert.run(run, ...itemValues(item, hash), sent ?? null);
  }
  return fresh;
}

/** Drops a version the run wrote; its number may be written again, so no listing body may name it. */
function dropMine(s: Statements, run: number, version: number): void {
  s.drop.run(version);
  s.forgetVersion.run({ run, version });
}

/** One id as the batch read it last: its values (none when known unchanged from its text), their
 * hash, and the hash of its text as sent. */
interface Hashed {
  readonly id: string;
  readonly item?: Item;
  readonly hash: number;
  readonly sent?: number;
  /** The version it was read as, when known from its text. */
  readonly version?: number;
}

/** The versions the run has to know of for each id, from one statement. */
function lookUp(s: Statements, run: number, ids: readonly string[]): Map<string, Known> {
  const known = new Map<string, Known>();
  const rows = s.versions.all({ run, ids: JSON.stringify(ids) }) as VersionRow[];
  for (const [id, version, hash, mine, closed, matched] of rows) {
    const entry = known.get(id) ?? {};
    const found = { version, hash, closed: closed === 1, matched: matched === 1 };
    if (mine === 1) entry.mine = found;
    else entry.current = found;
    known.set(id, entry);
  }
  return known;
}

type VersionRow = [id: string, version: number, hash: number, mine: 0 | 1, closed: 0 | 1, matched: 0 | 1];

interface Statements {
  /**
   * Per key (hash and id), in order: the number of the id's open version of a complete run when it has
   * that hash, or null.
   */
  readonly unchanged: Database.Statement;
  /**
   * Per id: the version current at the latest complete run (open, or closed by this run) and the
   * version this run opened, if any. Versions of runs after the latest complete one are this run's:
   * unfinished runs' are discarded before a run writes.
   */
  readonly versions: Database.Statement;
  readonly insert: Database.Statement;
  readonly replace: Database.Statement;
  readonly drop: Database.Statement;
  readonly close: Database.Statement;
  readonly reopen: Database.Statement;
  readonly match: Database.Statement;
  readonly unmatch: Database.Statement;
  /** Per [version, sent] pair: the text the version was read from, where it did not know it. */
  readonly learnSent: Database.Statement;
  /**
   * The listing bodies the run recorded with a version it has since rewritten or dropped no longer know
   * their versions (`store/read-bodies.ts`): they are looked up element by element next time.
   */
  readonly forgetVersion: Database.Statement;
}

const VALUE_COLUMNS = ITEM_COLUMNS.filter((c) => c !== 'id');

/** Prepared once per connection, when first used: a batch is written with the same few statements. */
const statements = statementsPerConnection<Statements>({
  unchanged: (db) =>
    db
      .prepare(
        `SELECT (SELECT v.version FROM item_versions v INDEXED BY item_versions_id
                WHERE v.id = substr(j.value, 17) AND v.valid_to_run IS NULL AND v.valid_from_run < @run
                  AND v.hash = CAST(substr(j.value, 1, 16) AS INTEGER))
         FROM json_each(@keys) j ORDER BY j.key`,
      )
      .pluck(),
  versions: (db) =>
    db
      .prepare(
        `SELECT v.id, v.version, v.hash, v.valid_from_run = @run, v.valid_to_run IS NOT NULL,
              EXISTS (SELECT 1 FROM run_matched m WHERE m.run = @run AND m.version = v.version)
         FROM json_each(@ids) j
         JOIN item_versions v INDEXED BY item_versions_id ON v.id = j.value
        WHERE v.valid_from_run <= @run AND (v.valid_to_run IS NULL OR v.valid_to_run = @run)`,
      )
      .raw(),
  insert: (db) =>
    db.prepare(
      `INSERT INTO item_versions (valid_from_run, ${ITEM_COLUMNS.join(', ')}, sent)
       VALUES (?, ${ITEM_COLUMNS.map(() => '?').join(', ')}, ?)`,
    ),
  replace: (db) =>
    db.prepare(
      `UPDATE item_versions SET ${VALUE_COLUMNS.map((c) => `${c} = ?`).join(', ')}, sent = ? WHERE version = ?`,
    ),
  drop: (db) => db.prepare('DELETE FROM item_versions WHERE version = ?'),
  close: (db) => db.prepare('UPDATE item_versions SET valid_to_run = ? WHERE version = ?'),
  reopen: (db) => db.prepare('UPDATE item_versions SET valid_to_run = NULL WHERE version = ?'),
  match: (db) =>
    db.prepare('INSERT OR IGNORE INTO run_matched (run, version) SELECT ?, value FROM json_each(?)'),
  unmatch: (db) => db.prepare('DELETE FROM run_matched WHERE run = ? AND version = ?'),
  learnSent: (db) =>
    db.prepare(
      `UPDATE item_versions SET sent = j.value ->> 1 FROM json_each(?) j
      WHERE item_versions.version = j.value ->> 0 AND item_versions.sent IS NULL`,
    ),
  forgetVersion: (db) =>
    db.prepare(
      `UPDATE listing_bodies SET versions = NULL
      WHERE versions_run = @run AND EXISTS (SELECT 1 FROM json_each(versions, '$[0]') WHERE value = @version)`,
    ),
});
