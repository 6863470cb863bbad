import { Hash53 } from '../../domain/hash53.js';

/** Slots a `YieldedIds` starts with (a power of two): a small listing costs 8 KiB. */
const INITIAL_SLOTS = 1024;

/**
 * Every id a reading yielded, kept as a 64-bit hash of it (`Hash53`'s two lanes) in one flat table
 * rather than as the ids themselves: a set of the ids held about 50 MB at 1,000,000 items, this holds
 * 16 MiB, and takes no part in garbage collection. Two ids of one listing share a hash with a chance
 * of n²/2^65: 3 in 100 million for a listing of 1,000,000 items (test/api/listing/yielded-ids.test.ts
 * holds it to a set of the ids).
 */
export class YieldedIds {
  /** Pairs of lanes by slot, (0, 0) for an empty slot; linear probing. */
  private slots = new Int32Array(2 * INITIAL_SLOTS);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(id: string): boolean {
    const hash = new Hash53().text(id);
    const at = this.slotOf(hash.high(), nonZero(hash.low()));
    return this.slots[2 * at + 1] !== 0;
  }

  /** Notes `id`: false when it was noted before. */
  add(id: string): boolean {
    const hash = new Hash53().text(id);
    if (!this.put(hash.high(), nonZero(hash.low()))) return false;
    this.count += 1;
    // At most three quarters full, so that a probe always meets an empty slot soon.
    if (this.count * 4 > this.slotCount * 3) this.grow();
    return true;
  }

  private get slotCount(): number {
    return this.slots.length / 2;
  }

  /** False when the pair is there already. */
  private put(high: number, low: number): boolean {
    const at = this.slotOf(high, low);
    if (this.slots[2 * at + 1] !== 0) return false;
    this.slots[2 * at] = high;
    this.slots[2 * at + 1] = low;
    return true;
  }

  /** The slot holding the pair, or the empty slot where it belongs (the table is never full). */
  private slotOf(high: number, low: number): number {
    const mask = this.slotCount - 1;
    for (let at = low & mask; ; at = (at + 1) & mask) {
      const held = this.slots[2 * at + 1];
      if (held === 0 || (held === low && this.slots[2 * at] === high)) return at;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(2 * old.length);
    for (let at = 0; at < old.length; at += 2) {
      const low = old[at + 1] as number;
      if (low !== 0) this.put(old[at] as number, low);
    }
  }
}

/** The second lane marks a slot as used: a hash whose lane is 0 (one in 2^32) is taken as 1. */
function nonZero(lane: number): number {
  return lane === 0 ? 1 : lane;
}

/** The last `capacity` ids added, in a set: what a reading that backs up has just yielded. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Notes `id` as the latest; true (for use in conditions). */
  add(id: string): true {
    this.ids.delete(id);
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value as string;
      this.ids.delete(oldest);
    }
    return true;
  }
}
