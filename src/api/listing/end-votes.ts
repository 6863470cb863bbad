import { WindowsMisaligned } from './paginator.js';
import { type ListingWindow, windowAt } from './window.js';

/** Ends shown by an answer and gone at the next (not grown), before the reading gives up on a moving end. */
const MAX_ENDS_MOVED = 64;
/** Answers in a row, each ending just after the one before, that end a listing growing at its end. */
const GROWTH_TO_END = 4;
/** Empty answers the page after a window that ended there gives before it counts: a false end (an empty
 * page in the middle of a listing) is drawn per request, and on two such pages at once it made a listing
 * of 133 items look like one of 3 (the soak; test/api/listing/end-confirm.test.ts). */
const EMPTY_ASKS = 2;

/** Answers in a row, each ending short just after the end the one before showed. */
interface Growth {
  /** The end the latest of them showed. */
  at: string | undefined;
  steps: number;
  /** Whether one of them asked no more than the server ever served. */
  trusted: boolean;
  /** The window the latest of them answered. */
  window: ListingWindow | undefined;
  /** Whether the latest answered the window asked again (`recheck`) and ended after the end that window
   * showed just before: the end moved between two asks of the same window in a row, which a page cut
   * short does not do. An earlier answer of the same window in the row says less: it may have left out
   * items that the later one holds (a property run, then the soak, lost items so). */
  timed: boolean;
  /** Whether the latest window was asked again (`recheck`). */
  rechecked: boolean;
}

/**
 * What the answers said of where the listing ends, for the windows' planner: the answers that ended
 * short at the same proved item (`at`; undefined for an empty listing), in which window shapes, and what
 * the page after each of those windows, at its page size, held. The end is believed once answers to two
 * different windows ended at the same proved item, one of them asking no more than the server ever
 * served (its own page size cannot pass for the end), and the pages after two of them held nothing more,
 * each twice (`EMPTY_ASKS`; after the one, four times, where pages are too small to hold the end in two
 * ways); or, on a listing that grows at its end after every answer, once `GROWTH_TO_END` answers in a
 * row each ended just after the one before, and the latest window, asked again at once (`recheck`),
 * ended later still.
 *
 * Each rule answers a way a server's answer ends short before the listing does. A server that leaves out
 * the last items of an answer would have to do so at the same item in two windows. A server whose pages
 * end short without losing anything (the next page starts where the short one ended) lists the items
 * that follow on the page after, at that page size: a window from the offset just after the end, at
 * another page size, may end at the end again. And a false end (an empty page in the middle of a
 * listing) would have to come twice on the same page. Property runs found an item lost to each of the
 * three at once while one empty answer from just after the end was enough, and the soak a listing read
 * short while the pages after two windows counted once each (test/api/listing/end-confirm.test.ts).
 * Pages cut short without loss, one after another near the end, each ending a little after the one
 * before, look like a listing growing at its end; but such a page, asked again, ends where it did, while
 * a growing listing shows the same window a later end (property runs found items lost so, 1 to 3 of
 * 1,000 random hostile listings: the same file). Only when asked again at once: a window's earlier answer
 * in the row may have left out items its later one holds (the soak lost half a listing so).
 */
export class EndVotes {
  private at: string | undefined;
  private count = 0;
  /** The windows that ended there, by shape. */
  private readonly shapes = new Map<string, ListingWindow>();
  /** By shape of a window that ended there: answers for the page after it that held nothing more. */
  private readonly emptyAfter = new Map<string, number>();
  private trusted = false;
  /** Pages too small to hold the end in two ways: the same window counts again. */
  private noOtherShape = false;
  private growth = growthFrom(undefined, false);
  private endsMoved = 0;
  /** New ends shown so far: a planner compares it before and after an answer. */
  shown = 0;

  /** Whether an answer showed an end that no later answer contradicted yet. */
  get any(): boolean {
    return this.count > 0;
  }

  /** Whether the end shown is at a proved item (not an empty listing). */
  get atAnItem(): boolean {
    return this.at !== undefined;
  }

  /** The end the latest answer that ended short showed, kept across new ends to see the listing grow. */
  get lastEnd(): string | undefined {
    return this.growth.at;
  }

  /** Whether a window of another shape should confirm the end. */
  get wantsAnotherShape(): boolean {
    return this.shapes.size < 2 && !(this.noOtherShape && this.count >= 2);
  }

  /** Whether an answer asking no more than the server ever served ended there. */
  get isTrusted(): boolean {
    return this.trusted;
  }

  /** Whether the pages after the windows that ended there held nothing more, as often as it takes. */
  get backed(): boolean {
    const empties = [...this.emptyAfter.values()];
    const twice = empties.filter((count) => count >= EMPTY_ASKS).length;
    return twice >= 2 || (this.noOtherShape && empties.some((count) => count >= 2 * EMPTY_ASKS));
  }

  /** Whether the page after a window of `shape` has yet to answer empty as often as it takes. */
  private wantsEmpty(shape: string): boolean {
    const wanted = this.noOtherShape ? 2 * EMPTY_ASKS : EMPTY_ASKS;
    return (this.emptyAfter.get(shape) ?? 0) < wanted;
  }

  /**
   * `window`'s answer ended short at the proved item `end`. It confirms the answers before it when it
   * ends at the same item; it extends them when it holds their end (`holdsLastEnd`: the listing grew at
   * its end meanwhile). `trusted`: the window asked no more than the server ever served. True when the
   * listing grew.
   */
  vote(end: string | undefined, window: ListingWindow, trusted: boolean, holdsLastEnd: boolean): boolean {
    if (this.count > 0 && this.at === end) {
      this.shapes.set(shapeOf(window), window);
      this.count += 1;
      this.trusted ||= trusted;
      return false;
    }
    const grown = holdsLastEnd && this.growth.at !== end;
    if (grown) this.grow(end, window, trusted);
    else this.growth = growthFrom(end, trusted, window);
    if (this.count > 0 && !grown && ++this.endsMoved > MAX_ENDS_MOVED) {
      throw new WindowsMisaligned(`${MAX_ENDS_MOVED} ends an answer showed were gone at the next`);
    }
    this.reset();
    this.shown += 1;
    this.at = end;
    this.count = 1;
    this.trusted = trusted;
    this.shapes.set(shapeOf(window), window);
    return grown;
  }

  /** `window`'s answer ended at `end`, just after the end the answer before showed. */
  private grow(end: string | undefined, window: ListingWindow, trusted: boolean): void {
    const growth = this.growth;
    const asked = growth.rechecked ? growth.window : undefined;
    growth.at = end;
    growth.steps += 1;
    growth.trusted ||= trusted;
    growth.timed = asked !== undefined && shapeOf(asked) === shapeOf(window);
    growth.window = window;
    growth.rechecked = false;
  }

  /**
   * The window to ask again, once, before a growth is believed: the latest. A growing listing shows it a
   * later end (believed); a page cut short shows it the same (a second answer at that end, confirmed as
   * any other end). None when the end was shown twice.
   */
  recheck(): ListingWindow | undefined {
    const growth = this.growth;
    const due = growth.steps >= GROWTH_TO_END && growth.trusted && !growth.timed;
    if (!due || growth.rechecked || this.count > 1) return undefined;
    growth.rechecked = true;
    return growth.window;
  }

  /**
   * The page after `ended`, a window that ended there, held nothing more (`trust`: nothing can explain it
   * but the end). An empty listing's page 1 is both: pass it as `ended`.
   */
  nothingMore(ended: ListingWindow, trust = false): void {
    const shape = shapeOf(ended);
    this.emptyAfter.set(shape, (this.emptyAfter.get(shape) ?? 0) + 1);
    this.trusted ||= trust;
  }

  /**
   * The pages to ask beside `planned` (the planner's other windows) to back the end: the page after each
   * window that ended there, at its page size, not yet answered empty as often as it takes; all of them
   * again when nothing else would be asked (an end that is backed but not yet believed). Once a round,
   * the next ask only after an empty answer, for an end that still stands: the same page asked twice at
   * once, every answer moving a busy listing, ran 30 of 1,800 random busy listings (planner-churn's
   * quarter-page draws) out of their time budget and handed 9 over, against 2 and 1 so (2 and 0 before).
   */
  continuations(planned: readonly ListingWindow[]): ListingWindow[] {
    const after = (all: boolean) =>
      [...this.shapes]
        .filter(([shape]) => all || this.wantsEmpty(shape))
        .map(([, window]) => windowAt(window.page + 1, window.perPage));
    const wanted = this.backed ? [] : after(false);
    const chosen = planned.length + wanted.length > 0 ? wanted : after(true);
    const asked = new Set(planned.map(shapeOf));
    return chosen.filter((window) => !asked.has(shapeOf(window)));
  }

  /** The window that ended there whose next page, at its page size, `window` is (undefined if none). */
  continued(window: ListingWindow): ListingWindow | undefined {
    return window.page > 1 ? this.shapes.get(shapeOf(windowAt(window.page - 1, window.perPage))) : undefined;
  }

  /** Whether `window` has the shape of one that already ended there. */
  has(window: ListingWindow): boolean {
    return this.shapes.has(shapeOf(window));
  }

  /** No window of another shape holds the end: the same one counts again. */
  noOther(): void {
    this.noOtherShape = true;
  }

  /** Items followed the end shown: what was said of it is void (the growth seen stays). */
  reset(): void {
    this.at = undefined;
    this.count = 0;
    this.shapes.clear();
    this.emptyAfter.clear();
    this.trusted = false;
    this.noOtherShape = false;
  }

  ended(): boolean {
    const confirmed =
      (this.shapes.size >= 2 || (this.noOtherShape && this.count >= 2)) && this.trusted && this.backed;
    const { steps, trusted, timed } = this.growth;
    return confirmed || (steps >= GROWTH_TO_END && trusted && timed);
  }
}

function growthFrom(at: string | undefined, trusted: boolean, window?: ListingWindow): Growth {
  return { at, steps: 0, trusted, window, timed: false, rechecked: false };
}

function shapeOf(window: ListingWindow): string {
  return `${window.page}/${window.perPage}`;
}
