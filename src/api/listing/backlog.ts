import { listingFailure } from './paginator.js';
import { type ListingWindow, windowAt } from './window.js';

/** Probes of the listing's end per time budget: the run fails at most a quarter budget after it ran out. */
const PROBES_PER_BUDGET = 4;
/** Pages past the reading that a probe looks for the end within: beyond, the end is not found. */
const FARTHEST_PAGE = 2 ** 30;

/**
 * Whether the reading gains on the listing, on a clock. The listing gives no count of its items, and a
 * listing that grows ahead of the reading looks, answer by answer, like a long still one: every answer
 * proves new items. So every quarter budget a probe asks where the listing ends now (`EndSearch`, one
 * window at a time beside the reading); the items between the proved end and that end are the backlog.
 * The reading progresses while its backlog shrinks from one probe to the next from more than the windows
 * in flight reach (once they reach the end, only confirming the end is progress: a listing that moves its
 * end after every answer can keep the backlog there without end). When it made no progress
 * for `budgetMs` (SYNC_RETRY_BUDGET_SECONDS), the listing moves faster than it can be read: the run fails
 * with `LISTING_MOVED` rather than read on without bound.
 */
export class Backlog {
  private search: EndSearch | undefined;
  private pending: ListingWindow | undefined;
  private probedAt: number;
  private progressAt: number;
  private last: number | undefined;

  constructor(
    private readonly budgetMs: number,
    private readonly maxInFlight: number,
    private readonly now: () => number,
  ) {
    this.probedAt = now();
    this.progressAt = this.probedAt;
  }

  /** The probe window to send now, if a probe is due and none is in flight; `end`: the proved end. */
  probe(end: number, perPage: number): ListingWindow | undefined {
    if (this.pending) return undefined;
    if (!this.search) {
      if (this.now() - this.probedAt < this.budgetMs / PROBES_PER_BUDGET) return undefined;
      this.search = new EndSearch(end, perPage);
    }
    this.pending = this.search.window();
    return this.pending;
  }

  /** Whether a probe window was sent and not yet answered (nor dropped). */
  get probing(): boolean {
    return this.pending !== undefined;
  }

  isProbe(window: ListingWindow): boolean {
    return window === this.pending;
  }

  /** The probe's answer held `length` items; throws `ListingMovedError` once the budget ran out. */
  take(length: number, end: number): void {
    const search = this.search as EndSearch;
    this.pending = undefined;
    const listed = search.take(length);
    if (listed === undefined) return;
    this.search = undefined;
    const now = this.now();
    this.probedAt = now;
    const backlog = Math.max(0, listed - (end + 1));
    const reach = search.perPage * this.maxInFlight;
    if (this.last !== undefined && backlog < this.last && this.last > reach) this.progressAt = now;
    this.last = backlog;
    if (now - this.progressAt < this.budgetMs) return;
    throw listingFailure.outgrown(Math.round(this.budgetMs / 1000), backlog);
  }

  /** The page size changed: the next probe starts over. */
  abandon(): void {
    this.pending = undefined;
    this.search = undefined;
  }

  /**
   * The probe in flight was dropped with the windows in flight (`Step.dropInFlight`): the same window
   * is asked again, first of the next plan, and the search goes on. Started over instead, a search on a
   * listing whose end moves after every answer would never finish, and the clock never strike.
   */
  dropped(): void {
    this.pending = undefined;
  }
}

/**
 * Where the listing ends, from the page after `end`: pages at doubling distances until one is not full,
 * then halving the gap between the last full page and the first empty one. The listing moves meanwhile:
 * the count is as of the last answers, which is all the clock needs.
 */
export class EndSearch {
  /** The last page known full (the one holding `end`, to begin with), and the first known empty. */
  private full: number;
  private empty: number | undefined;
  private distance = 1;
  private asked = 0;

  constructor(
    end: number,
    readonly perPage: number,
  ) {
    this.full = Math.floor((end + 1) / perPage);
  }

  window(): ListingWindow {
    this.asked =
      this.empty === undefined
        ? this.full + this.distance
        : this.full + Math.floor((this.empty - this.full) / 2);
    return windowAt(this.asked, this.perPage);
  }

  /** The answer to the last window held `length` items: the listing's length once known. */
  take(length: number): number | undefined {
    if (length > 0 && length < this.perPage) return (this.asked - 1) * this.perPage + length;
    if (length === 0) this.empty = this.asked;
    else {
      this.full = this.asked;
      this.distance *= 2;
    }
    if (this.empty !== undefined && this.empty - this.full <= 1) return this.full * this.perPage;
    if (this.full >= FARTHEST_PAGE) return Number.POSITIVE_INFINITY;
    return undefined;
  }
}
