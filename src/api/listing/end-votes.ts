import { WindowsMisaligned } from './paginator.js';
import type { ListingWindow } from './window.js';

/** Ends shown by an answer and gone at the next (not grown), before the reading gives up on a moving end. */
const MAX_ENDS_MOVED = 64;
/** Answers in a row, each ending just after the one before, that end a listing growing at its end. */
const GROWTH_TO_END = 4;

/**
 * What the answers said of where the listing ends, for the windows' planner: the answers that ended
 * short at the same proved item (`at`; undefined for an empty listing), in how many window shapes,
 * and the answers from just after it that held nothing more. The end is believed once answers to two
 * different windows ended at the same proved item, one of them asking no more than the server ever
 * served (its own page size cannot pass for the end), and the window just after it held nothing more;
 * or, on a listing that grows at its end after every answer, once `GROWTH_TO_END` answers in a row each
 * ended just after the one before. A server that leaves out the last items of an answer would have to
 * do so at the same item twice, or that many times in a row.
 */
export class EndVotes {
  private at: string | undefined;
  private count = 0;
  private readonly shapes = new Set<string>();
  private trusted = false;
  private nothingAfter = 0;
  /** The proved item that items were seen after (`itemsFollowed`): an end there needs more to be believed. */
  private followed: string | undefined;
  /** Pages too small to hold the end in two ways: the same window counts again. */
  private noOtherShape = false;
  /** Answers in a row, each ending short just after the end the one before showed. */
  private growth = { at: undefined as string | undefined, steps: 0, trusted: false };
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

  /** Whether windows from just after the end were answered with nothing more, as often as it takes. */
  get backed(): boolean {
    return this.nothingAfter >= this.emptiesNeeded;
  }

  /** Empty answers from just after the end that back it: two in a row after items were seen there. */
  private get emptiesNeeded(): number {
    return this.followed !== undefined && this.followed === this.at ? 2 : 1;
  }

  /**
   * `window`'s answer ended short at the proved item `end`. It confirms the answers before it when it
   * ends at the same item; it extends them when it holds their end (`holdsLastEnd`: the listing grew at
   * its end meanwhile). `trusted`: the window asked no more than the server ever served. True when the
   * listing grew.
   */
  vote(end: string | undefined, window: ListingWindow, trusted: boolean, holdsLastEnd: boolean): boolean {
    if (this.count > 0 && this.at === end) {
      this.shapes.add(shapeOf(window));
      this.count += 1;
      this.trusted ||= trusted;
      return false;
    }
    const grown = holdsLastEnd && this.growth.at !== end;
    this.growth = grown
      ? { at: end, steps: this.growth.steps + 1, trusted: this.growth.trusted || trusted }
      : { at: end, steps: 0, trusted };
    if (this.count > 0 && !grown && ++this.endsMoved > MAX_ENDS_MOVED) {
      throw new WindowsMisaligned(`${MAX_ENDS_MOVED} ends an answer showed were gone at the next`);
    }
    this.reset();
    this.shown += 1;
    this.at = end;
    this.count = 1;
    this.trusted = trusted;
    this.shapes.add(shapeOf(window));
    return grown;
  }

  /**
   * Items were seen just after the proved item `end`, which answers had shown as the end. Should the
   * answers end there again, one empty answer from just after it is not enough: it contradicts one that
   * held items, and a server's false end (an empty page in the middle of a listing) is as likely as a sale.
   * Only two in a row are: a false end does not come twice in a row, an item sold stays sold. Without it,
   * windows that the server cuts at `end` whatever their shape (short pages that lose nothing) could not
   * prove the items seen after it, and the next false end was believed: they were lost.
   */
  itemsFollowed(end: string | undefined): void {
    this.followed = end;
  }

  /** A window from just after the end held nothing more (`trust`: nothing can explain it but the end). */
  nothingMore(trust = false): void {
    this.nothingAfter += 1;
    this.trusted ||= trust;
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
    this.trusted = false;
    this.nothingAfter = 0;
    this.noOtherShape = false;
  }

  ended(): boolean {
    const confirmed =
      (this.shapes.size >= 2 || (this.noOtherShape && this.count >= 2)) &&
      this.trusted &&
      this.backed;
    return confirmed || (this.growth.steps >= GROWTH_TO_END && this.growth.trusted);
  }
}

function shapeOf(window: ListingWindow): string {
  return `${window.page}/${window.perPage}`;
}
