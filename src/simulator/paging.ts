import { unitMix } from './prng.js';

export interface PageWindow {
  /** Index of the page's first item in the listing. */
  start: number;
  /** Items the page may hold; fewer when the listing ends first. */
  size: number;
  /** Made short by the short-page fault. */
  short: boolean;
}

/**
 * Where each page starts and how long it is. With the short-page fault, some pages hold fewer than
 * `per_page` items, but page k still starts where page k-1 ended: nothing is lost, only a client
 * that takes a short page for the end misses the rest. Deterministic per (seed, page, per_page).
 */
export class PageLayout {
  private rate = 0;
  /** starts.get(perPage)[p - 1] is where page p starts, while short pages are on. */
  private readonly starts = new Map<number, number[]>();

  constructor(private readonly seed: number) {}

  setShortPageRate(rate: number): void {
    if (rate !== this.rate) this.starts.clear();
    this.rate = rate;
  }

  window(page: number, perPage: number, total: number): PageWindow {
    if (this.rate === 0) return { start: (page - 1) * perPage, size: perPage, short: false };
    const starts = this.startsFor(perPage);
    while (starts.length < page && (starts.at(-1) as number) < total) {
      const previous = starts.length;
      starts.push((starts.at(-1) as number) + this.sizeOf(previous, perPage));
    }
    if (starts.length < page) return { start: total, size: perPage, short: false };
    const size = this.sizeOf(page, perPage);
    return { start: starts[page - 1] as number, size, short: size < perPage };
  }

  private startsFor(perPage: number): number[] {
    let starts = this.starts.get(perPage);
    if (!starts) {
      starts = [0];
      this.starts.set(perPage, starts);
    }
    return starts;
  }

  /** A short page still holds at least one item: an empty page means the end. */
  private sizeOf(page: number, perPage: number): number {
    if (perPage < 2 || unitMix(this.seed, page, perPage, 0x5407) >= this.rate) return perPage;
    return 1 + Math.floor(unitMix(this.seed, page, perPage, 0xa11) * (perPage - 1));
  }
}
