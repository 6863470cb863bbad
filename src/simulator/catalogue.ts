import { Prng } from './prng.js';
import { generateRecord, priceMillis, type SimRecord } from './record.js';
import { type ListingFilters, matchesFilters, type OrderName } from './request-query.js';

const EPOCH_MS = Date.UTC(2023, 0, 1);
const FILTER_CACHE_SIZE = 16;

function compareIds(a: SimRecord, b: SimRecord): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Newest first; items created in the same second are ordered by id. */
export function compareNewest(a: SimRecord, b: SimRecord): number {
  return b.createdMs - a.createdMs || compareIds(a, b);
}

const COMPARATORS: Record<Exclude<OrderName, 'newest'>, (a: SimRecord, b: SimRecord) => number> = {
  // Code-unit order: deterministic and locale-free.
  title: (a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : compareIds(a, b)),
  price_desc: (a, b) => priceMillis(b) - priceMillis(a) || compareIds(a, b),
};

/** Index of the first element of the newest-first `list` that sorts at or after `record`. */
function lowerBound(list: readonly SimRecord[], record: SimRecord): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareNewest(list[mid] as SimRecord, record) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Whole-second creation times that may sort between `newer` and `older` (newest first). */
function creationTimes(newer: SimRecord | undefined, older: SimRecord | undefined, rng: Prng): number[] {
  if (!newer && !older) return [EPOCH_MS];
  if (!newer) return [(older as SimRecord).createdMs + 1000 * (1 + rng.int(60))];
  if (!older) return [newer.createdMs - 1000 * (1 + rng.int(60))];
  const gap = (newer.createdMs - older.createdMs) / 1000;
  if (gap >= 2) return [older.createdMs + 1000 * (1 + rng.int(gap - 1))];
  return gap === 1 ? [older.createdMs, newer.createdMs] : [older.createdMs];
}

interface CachedListing {
  readonly version: number;
  readonly records: readonly SimRecord[];
}

/**
 * The shop's items: the newest-first listing kept sorted at all times, other orders and filtered
 * listings derived on demand and cached until the next change.
 */
export class Catalogue {
  private readonly listed: SimRecord[] = [];
  private readonly byId = new Map<string, SimRecord>();
  private readonly removedById = new Map<string, SimRecord>();
  private readonly derived = new Map<string, CachedListing>();
  private version = 0;
  private nextSerial = 0;
  private newestMs = EPOCH_MS;

  constructor(
    private readonly seed: number,
    size: number,
  ) {
    const clock = new Prng(seed ^ 0x5eed);
    for (let serial = 0; serial < size; serial += 1) {
      // One item in ten shares its second with the previous one, so ties are ordered by id.
      if (serial > 0 && !clock.chance(0.1)) this.newestMs += 1000 * (1 + clock.int(3600));
      this.listed.push(generateRecord(seed, serial, this.newestMs));
    }
    this.nextSerial = size;
    this.listed.reverse().sort(compareNewest);
    for (const record of this.listed) this.byId.set(record.id, record);
  }

  get size(): number {
    return this.listed.length;
  }

  /** Newest first. */
  get records(): readonly SimRecord[] {
    return this.listed;
  }

  get(id: string): SimRecord | undefined {
    return this.byId.get(id);
  }

  wasRemoved(id: string): boolean {
    return this.removedById.has(id);
  }

  /** The listing in `order`, narrowed by `filters` (identified by `filterKey`). */
  listing(order: OrderName, filters: ListingFilters, filterKey: string): readonly SimRecord[] {
    if (order === 'newest' && filterKey === '') return this.listed;
    const key = `${order}|${filterKey}`;
    const cached = this.derived.get(key);
    if (cached && cached.version === this.version) return cached.records;
    const records =
      filterKey === ''
        ? [...this.listed].sort(COMPARATORS[order as Exclude<OrderName, 'newest'>])
        : this.listing(order, {}, '').filter((record) => matchesFilters(record, filters));
    if (this.derived.size >= FILTER_CACHE_SIZE) this.derived.clear();
    this.derived.set(key, { version: this.version, records });
    return records;
  }

  /** Call after changing a record in place: its JSON is re-rendered and derived listings rebuilt. */
  changed(record: SimRecord): void {
    record.json = undefined;
    this.version += 1;
  }

  /** A new item, newer than every other, at the front of the listing. */
  addNew(rng: Prng): SimRecord {
    this.newestMs += 1000 * (1 + rng.int(60));
    const record = generateRecord(this.seed, this.nextSerial, this.newestMs);
    this.nextSerial += 1;
    this.insert(record);
    return record;
  }

  /**
   * A new item that sorts after `newer` and before `older` in the newest-first listing (either may be
   * absent: the front, the end) and that `accept`s. Its creation time lies strictly between theirs when
   * whole seconds allow; otherwise it shares a second with one of them and a few serials are tried for an
   * id that sorts right. Undefined when no serial fits within the attempts.
   */
  addBetween(
    newer: SimRecord | undefined,
    older: SimRecord | undefined,
    accept: (record: SimRecord) => boolean,
    rng: Prng,
    attempts = 512,
  ): SimRecord | undefined {
    const times = creationTimes(newer, older, rng);
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      const createdMs = times[attempt % times.length] as number;
      const record = generateRecord(this.seed, this.nextSerial, createdMs);
      this.nextSerial += 1;
      const fits =
        (!newer || compareNewest(newer, record) < 0) && (!older || compareNewest(record, older) < 0);
      if (fits && accept(record)) {
        this.newestMs = Math.max(this.newestMs, createdMs);
        this.insert(record);
        return record;
      }
    }
    return undefined;
  }

  remove(record: SimRecord): void {
    const index = lowerBound(this.listed, record);
    if (this.listed[index] !== record) throw new RangeError(`item ${record.id} is not listed`);
    this.listed.splice(index, 1);
    this.byId.delete(record.id);
    this.removedById.set(record.id, record);
    this.version += 1;
  }

  /** Lists a removed item again with its last values; undefined when `id` was never removed. */
  restore(id: string): SimRecord | undefined {
    const record = this.removedById.get(id);
    if (!record) return undefined;
    this.removedById.delete(id);
    this.insert(record);
    return record;
  }

  private insert(record: SimRecord): void {
    this.listed.splice(lowerBound(this.listed, record), 0, record);
    this.byId.set(record.id, record);
    this.version += 1;
  }
}
