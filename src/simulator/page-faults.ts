import { Prng } from './prng.js';
import type { Faults } from './types.js';

/** What a false end answers in place of a page, in turn: Django REST Framework's 404, a 204, an empty list. */
const FALSE_ENDS = [
  { status: 404, body: '{"detail":"Invalid page."}' },
  { status: 204, body: '' },
  { status: 200, body: '[]' },
] as const;

export type FalseEnd = (typeof FALSE_ENDS)[number];

/**
 * The faults that change what a page holds: false ends and lossy short pages. Each draws from its own
 * seeded stream, so turning one on leaves the other faults' draws as they were.
 */
export class PageFaults {
  private readonly lossRng: Prng;
  private readonly endRng: Prng;
  /** Pages whose last answer was a drawn false end: the next answer for them is the page. */
  private readonly endedLast = new Set<number>();
  /** Pages of `falseEndPages` that have had their false end. */
  private readonly listedServed = new Set<number>();
  /** Pages of `lossyShortPages` that have had their lossy answer. */
  private readonly listedLossy = new Set<number>();
  private falseEnds = 0;

  constructor(seed: number) {
    this.lossRng = new Prng(seed ^ 0x1055);
    this.endRng = new Prng(seed ^ 0xe4d);
  }

  /** A new list of pages in `update`: each of its pages gets its fault again. */
  resetListed(update: Pick<Partial<Faults>, 'falseEndPages' | 'lossyShortPages'>): void {
    if (update.falseEndPages) this.listedServed.clear();
    if (update.lossyShortPages) this.listedLossy.clear();
  }

  /** The false end to answer instead of `page`, if any; `inside`: the page lies before the listing's end. */
  falseEnd(faults: Readonly<Faults>, page: number, inside: boolean): FalseEnd | null {
    if (page === 1 || !inside) return null;
    const listed = faults.falseEndPages.includes(page) && !this.listedServed.has(page);
    const drawn =
      faults.falseEndRate > 0 && this.endRng.next() < faults.falseEndRate && !this.endedLast.has(page);
    if (!listed && !drawn) {
      this.endedLast.delete(page);
      return null;
    }
    if (listed) this.listedServed.add(page);
    else this.endedLast.add(page);
    const answer = FALSE_ENDS[this.falseEnds % FALSE_ENDS.length] as FalseEnd;
    this.falseEnds += 1;
    return answer;
  }

  /** How many of the last of `page`'s `size` items this answer leaves out (never all of them). */
  lost(faults: Readonly<Faults>, page: number, size: number): number {
    if (size < 2) return 0;
    if (faults.lossyShortPages.includes(page) && !this.listedLossy.has(page)) {
      this.listedLossy.add(page);
      return 1;
    }
    if (faults.lossyShortPageRate === 0) return 0;
    if (this.lossRng.next() >= faults.lossyShortPageRate) return 0;
    return 1 + this.lossRng.int(Math.min(3, size - 1));
  }
}
