import { setMaxListeners } from 'node:events';
import { ProtocolError, ResponseTooLargeError } from '../../errors.js';
import { ProvedChain } from './chain.js';
import type { ListingCheckpoint } from './checkpoint.js';
import type { RawPage } from './page-body.js';
import type { ItemPage, PageRequest } from './page-by-page.js';
import { PageItems } from './page-items.js';
import { type Received, receivedOf } from './page-readings.js';
import { type FetchWindow, type ListingReadOptions, type Paginator, WindowsMisaligned } from './paginator.js';
import { AdaptiveWindow, Slots } from './read-ahead.js';
import { RecentIds } from './recent-ids.js';
import { type ListingWindow, windowAfter, windowJustAfter } from './window.js';

/** Readings without a new proved item before the reading starts over from page 1 (once). */
const MAX_STUCK = 24;
/** Answers for later pages in a row that repeat page 1 before the server is taken to ignore `page`. */
const PAGE_ONE_REPEATS = 3;
/** Ends shown by an answer and gone at the next, before the reading gives up on a moving end. */
const MAX_ENDS_MOVED = 16;
/** Believed ends that more items followed before the listing is taken as one whose pages shift. */
const MAX_MISPLACED_ENDS = 6;
/** Times the reading may back up to page 1, having proved items, before windows are given up. */
const MAX_BACK_TO_START = 2;
/** Answers in a row, each ending just after the one before, that end a listing growing at its end. */
const GROWTH_TO_END = 4;
/** Items the first windows share with what was proved: one deletion behind the reader is absorbed. */
const MIN_OVERLAP = 2;

interface Planned {
  readonly window: ListingWindow;
  readonly result: Promise<Settled>;
  settled: boolean;
  /** The proved end when it was planned: once that moved on, a miss or an earlier anchor means nothing. */
  readonly basis: number;
}

type Settled = { ok: true; raw: RawPage } | { ok: false; error: unknown };

/**
 * Reads the listing so that every item listed from the first request to the last is yielded, however
 * the listing moves meanwhile. Each answer must hold an item already proved (see `ProvedChain`), which
 * proves the items after it: no item can slip past the reader between two answers unseen. Windows are
 * planned to overlap the proved end by a few items (`windowAfter`), so a still listing costs a few
 * percent more items per request; an answer that holds no proved item is not trusted and the reading
 * backs up until one does. The end is believed after two answers that end at the same proved item and
 * one for the window after it that holds nothing new.
 */
export const readProved: Paginator = async function* readProved(
  fetch: FetchWindow,
  options: ListingReadOptions,
): AsyncGenerator<ItemPage> {
  const reading = new ProvedReading(options);
  const window = new AdaptiveWindow(options.maxInFlight);
  const slots = new Slots(options.maxInFlight);
  const queue: Planned[] = [];
  // Windows planned for a page size found too large are dropped and their requests aborted.
  const dropped: Planned[] = [];
  let batch = batchController(options.maxInFlight);
  const send = (planned: ListingWindow, basis: number): Planned => {
    const request: PageRequest = {
      signal: batch.signal,
      first: planned.page === 1,
      pushedBack: () => window.shrink(),
    };
    const entry: Planned = {
      window: planned,
      basis,
      settled: false,
      result: slots
        .run(() => fetch(planned, request))
        .then(
          (raw): Settled => ({ ok: true, raw }),
          (error: unknown): Settled => ({ ok: false, error }),
        ),
    };
    void entry.result.then(() => {
      entry.settled = true;
    });
    return entry;
  };
  try {
    for (;;) {
      const basis = reading.provedEnd;
      for (const planned of reading.plan(window.size - queue.length, queue.length))
        queue.push(send(planned, basis));
      const head = queue.shift();
      if (!head) throw new ProtocolError('The listing reader planned no request (a defect).');
      if (!head.settled) window.grow();
      const settled = await head.result;
      if (!settled.ok && settled.error instanceof ResponseTooLargeError) {
        reading.tooLarge(head.window, settled.error);
        batch.abort();
        dropped.push(...queue.splice(0));
        batch = batchController(options.maxInFlight);
        continue;
      }
      if (!settled.ok) throw settled.error;
      const outcome = reading.take(head.window, receivedOf(settled.raw), head.basis);
      if (outcome.page) yield outcome.page;
      if (outcome.done) {
        const last = reading.pendingRereads();
        if (last) yield last;
        return;
      }
    }
  } finally {
    batch.abort();
    await Promise.all([...queue, ...dropped].map((planned) => planned.result));
  }
};

function batchController(maxInFlight: number): AbortController {
  const controller = new AbortController();
  setMaxListeners(Math.max(10, maxInFlight * 2 + 2), controller.signal);
  return controller;
}

interface Outcome {
  readonly page?: ItemPage;
  readonly done: boolean;
}

/** What the reading knows between answers: what is proved, where it ends, and how the end is confirmed. */
class ProvedReading {
  private chain: ProvedChain;
  /** Offset of the last proved item, as of the latest answer that held it (-1: nothing proved yet). */
  private end: number;
  private maxPerPage: number;
  private overlap = MIN_OVERLAP;
  /** How far before `end` the next window starts, beyond `overlap`, after answers that proved nothing. */
  private back = 0;
  private stuck = 0;
  private backToStart = 0;
  private restarted = false;
  private requests = 0;
  private largestAnswer = 0;
  private misplacedEnds = 0;
  private pageOneRepeats = 0;
  private endsMoved = 0;
  private rereads = 0;
  /** Where the planned windows will have read to, if every answer comes as planned. */
  private plannedEnd: number;
  private endingPlanned = false;
  /** Answers that showed the listing ending at the proved item `at`: their windows, and empty ones after it. */
  private votes = newVotes();
  private readonly yielded: RecentIds;
  private firstPageIds: readonly (string | null)[] | undefined;
  private pages = 0;

  constructor(private readonly options: ListingReadOptions) {
    const { resume } = options;
    this.maxPerPage = Math.min(options.perPage, resume?.maxPerPage ?? options.perPage);
    this.chain = new ProvedChain(chainCapacity(options.perPage), resume?.tail ?? []);
    this.end = resume && this.chain.size > 0 ? resume.end : -1;
    this.plannedEnd = this.end;
    this.yielded = new RecentIds(chainCapacity(options.perPage));
  }

  /** Up to `room` windows to ask for next; `queued`: windows asked for and not yet taken. */
  plan(room: number, queued: number): ListingWindow[] {
    const windows: ListingWindow[] = [];
    if (this.votes.shapes.size > 0) {
      if (this.endingPlanned && queued > 0) return windows;
      this.endingPlanned = true;
      const again = this.anotherWindowAtEnd();
      if (again) windows.push(again);
      // Asking no more than the server ever served: a short answer then cannot be its own page size.
      const tight = windowAfter(this.end, 1, Math.max(2, Math.min(this.maxPerPage, this.largestAnswer)));
      if (tight && tight.perPage <= this.largestAnswer) windows.push(tight);
      windows.push(windowJustAfter(this.end, this.maxPerPage));
    } else {
      const count = queued === 0 ? Math.max(1, room) : room;
      for (let n = 0; n < count; n += 1) {
        const next = windowAfter(this.plannedEnd - this.back, this.overlapNow(), this.maxPerPage);
        if (!next) throw new WindowsMisaligned(`pages of ${this.maxPerPage} cannot overlap`);
        windows.push(next);
        this.plannedEnd = next.start + next.perPage - 1;
        if (this.back > 0) break;
      }
    }
    this.requests += windows.length;
    if (this.requests > this.options.maxRequests) {
      throw new ProtocolError(
        `The listing had not ended after ${this.options.maxRequests} requests; stopped rather than read forever.`,
      );
    }
    return windows;
  }

  get provedEnd(): number {
    return this.end;
  }

  /** Takes the answer to `window`, planned when the proved end was `basis`. */
  take(window: ListingWindow, answer: readonly Received[], basis: number): Outcome {
    const outcome = this.takeAnswer(window, answer, basis);
    // An answer that yields nothing new is a re-read: counted on the next page that does.
    if (!outcome.page) this.rereads += 1;
    return outcome;
  }

  private takeAnswer(window: ListingWindow, answer: readonly Received[], basis: number): Outcome {
    const current = basis === this.end;
    const ids = answer.map((received) => received.id);
    this.checkPageIgnored(window, ids);
    this.largestAnswer = Math.max(this.largestAnswer, answer.length);
    if (answer.length > window.perPage) throw new WindowsMisaligned('the server ignores per_page');
    if (window.start === 0 && answer.length === 0 && this.end === -1) return this.emptyListing(window);
    const anchor = this.chain.anchorIn(ids);
    // A window planned before the proved end moved on may hold only earlier proved items: it would take
    // the proved end back for nothing, so only one planned from the current end may do that.
    if (!current && anchor >= 0 && ids[anchor] !== this.chain.last) return this.outdated();
    if (anchor >= 0 || (window.start === 0 && answer.length > 0)) return this.prove(window, answer, anchor);
    // Past the end the answers before it showed: planned before the end moved back (items deleted
    // before it) it still says whether anything lies beyond.
    if (window.start > basis && this.votes.count > 0) return this.afterEnd(answer, current);
    if (!current) return this.outdated();
    return this.missed();
  }

  /** `answer` holds the proved item at `anchor` (or starts the listing): what follows it is proved. */
  private prove(window: ListingWindow, answer: readonly Received[], anchor: number): Outcome {
    const endBefore = this.end;
    const expected = anchor >= 0 ? endBefore - window.start : -1;
    const lastBefore = this.chain.last;
    const after = answer.slice(anchor + 1);
    const afterIds = after.flatMap((received) => (received.id === null ? [] : [received.id]));
    if (anchor >= 0) this.chain.continueFrom(answer[anchor]?.id as string, afterIds);
    else {
      // Backing up all the way to page 1 again and again: windows cannot find the proved items here.
      if (this.chain.size > 0 && ++this.backToStart > MAX_BACK_TO_START) {
        throw new WindowsMisaligned(`backed up to page 1 ${MAX_BACK_TO_START} times`);
      }
      this.chain = new ProvedChain(chainCapacity(this.options.perPage), afterIds);
    }
    this.end = window.start + answer.length - 1;
    const shift = Math.abs(anchor - expected);
    if (shift > 0) this.overlap = Math.max(this.overlap, 2 * shift + 2);
    if (afterIds.some((id) => !this.yielded.has(id))) {
      this.stuck = 0;
      this.back = 0;
    } else this.noteStuck();
    const progressed = afterIds.length > 0;
    const ends = answer.length < window.perPage && answer.at(-1)?.id === this.chain.last;
    if (ends) this.vote(window, answer[anchor]?.id ?? undefined, anchor >= 0 ? window.start + anchor : -1);
    else if (progressed) this.learnPageSize();
    const confirms = this.votes.at === lastBefore && this.votes.at !== undefined && !progressed;
    const surprised = !confirms && (ends || shift > 0 || this.end !== window.start + window.perPage - 1);
    if (surprised) this.replan();
    return { page: after.length > 0 ? this.page(after) : undefined, done: this.ended() };
  }

  /**
   * The answer to `window` exceeded the response cap: ask for half as many items at a time. A window
   * of two or fewer holds an item that alone may exceed the cap; no window can step over it, so the
   * listing is read page by page, where such an item is reported invalid in its place.
   */
  tooLarge(window: ListingWindow, error: ResponseTooLargeError): void {
    if (window.perPage <= 2)
      throw new WindowsMisaligned(`an item alone may exceed the cap: ${error.message}`);
    this.maxPerPage = Math.min(this.maxPerPage, Math.floor(window.perPage / 2));
    this.resetVotes();
    this.replan();
  }

  /** An answer to a window planned from an end since proved further: plan again from where it is. */
  private outdated(): Outcome {
    this.replan();
    return { done: false };
  }

  /** Page 1 is empty: the end, once confirmed like any other (no page size explains an empty page 1). */
  private emptyListing(window: ListingWindow): Outcome {
    this.vote(window, undefined, -1);
    this.votes.trusted = true;
    this.votes.nothingAfter += 1;
    this.replan();
    return { done: this.ended() };
  }

  /** A believed end that more items followed: answers were cut at the server's own page size, or lost
   * their last items, or the listing grew. The largest answer is the server's page size if below ours. */
  private learnPageSize(): void {
    if (this.votes.count > 0 && this.largestAnswer > 1 && this.largestAnswer < this.maxPerPage) {
      this.maxPerPage = this.largestAnswer;
    }
    this.resetVotes();
  }

  /** An answer for the window just after the believed end: empty, or a repeat of the end (a server
   * that clamps `page`), it backs the end; items there mean the answers that ended short were cut. */
  private afterEnd(answer: readonly Received[], current: boolean): Outcome {
    if (answer.length === 0 || answer.at(-1)?.id === this.chain.last) {
      this.votes.nothingAfter += 1;
      return { done: this.ended() };
    }
    if (!current) return this.outdated();
    if (this.largestAnswer > 1 && this.largestAnswer < this.maxPerPage) this.maxPerPage = this.largestAnswer;
    else if (++this.misplacedEnds >= MAX_MISPLACED_ENDS) {
      throw new WindowsMisaligned('answers shorter than asked were followed by more items');
    }
    this.noteStuck();
    this.resetVotes();
    this.replan();
    return { done: false };
  }

  /** An answer that holds no proved item: the listing moved under the plan; back up until one does. */
  private missed(): Outcome {
    this.noteStuck();
    this.back =
      this.back === 0 ? this.overlapNow() * 2 : Math.min(this.back * 2, chainCapacity(this.maxPerPage));
    this.resetVotes();
    this.replan();
    return { done: false };
  }

  /** The overlap a window of at most `maxPerPage` items can afford and still reach past the end. */
  private overlapNow(): number {
    return Math.max(1, Math.min(this.overlap, Math.floor(this.maxPerPage / 2)));
  }

  private noteStuck(): void {
    this.stuck += 1;
    if (this.stuck <= MAX_STUCK) return;
    if (this.restarted) {
      throw new WindowsMisaligned(`${MAX_STUCK} answers in a row proved no new item, twice`);
    }
    // From page 1 nothing needs proving before the first answer: a sure way to find the ground again.
    this.restarted = true;
    this.stuck = 0;
    this.back = 0;
    this.end = -1;
    this.chain = new ProvedChain(chainCapacity(this.options.perPage));
  }

  /**
   * `window`'s answer ended at the proved end, shorter than asked. It confirms the answers before it
   * when it ends at the same item; it extends them when it holds their end at the same
   * offset (`from`, at `fromOffset`) and more after it (the listing grew at its end meanwhile).
   */
  private vote(window: ListingWindow, from: string | undefined, fromOffset: number): void {
    const votes = this.votes;
    const trusted = window.perPage <= this.largestAnswer;
    // The same end, wherever moves before it put it now.
    if (votes.count > 0 && votes.at === this.chain.last) {
      votes.offset = this.end;
      votes.shapes.add(shapeOf(window));
      votes.count += 1;
      votes.trusted ||= trusted;
      votes.trustedInGrowth ||= trusted;
      return;
    }
    const extends_ = votes.count > 0 && from === votes.at && fromOffset === votes.offset;
    if (votes.count > 0 && !extends_ && ++this.endsMoved > MAX_ENDS_MOVED) {
      throw new WindowsMisaligned(`${MAX_ENDS_MOVED} ends an answer showed were gone at the next`);
    }
    const growth = extends_ ? votes.growth + 1 : 0;
    const trustedInGrowth = extends_ && votes.trustedInGrowth;
    this.resetVotes();
    Object.assign(this.votes, { at: this.chain.last, offset: this.end, count: 1, growth, trusted });
    this.votes.shapes.add(shapeOf(window));
    this.votes.trustedInGrowth = trustedInGrowth || trusted;
  }

  private resetVotes(): void {
    this.votes = newVotes();
    this.endingPlanned = false;
  }

  /**
   * The end is believed once answers to two different windows ended at the same proved item, one of them asking no more than the server ever served (its own page size cannot pass for
   * the end), and the window just after it held nothing more; or, on a listing that grows at its end after every answer, once `GROWTH_TO_END` answers
   * in a row each ended just after the one before. A server that leaves out the last items of an
   * answer would have to do so at the same item twice, or that many times in a row.
   */
  private ended(): boolean {
    const { shapes, count, trusted, noOtherShape, growth, trustedInGrowth, nothingAfter } = this.votes;
    const confirmed = (shapes.size >= 2 || (noOtherShape && count >= 2)) && trusted && nothingAfter >= 1;
    return confirmed || (growth >= GROWTH_TO_END && trustedInGrowth);
  }

  /** A window over the proved end unlike those that already ended there. */
  private anotherWindowAtEnd(): ListingWindow | null {
    for (let overlap = this.overlapNow(); overlap <= this.maxPerPage; overlap += 1) {
      const window = windowAfter(this.end, overlap, this.maxPerPage);
      if (window && !this.votes.shapes.has(shapeOf(window))) return window;
    }
    // Pages too small to hold the end in two ways: the same window, asked again.
    this.votes.noOtherShape = true;
    return windowAfter(this.end, this.overlapNow(), this.maxPerPage);
  }

  private replan(): void {
    this.plannedEnd = this.end;
    this.endingPlanned = false;
  }

  /**
   * A server that ignores `page` answers page 1 again: reading on would never end. Items inserted at
   * the front can push page 1's items into one later answer, not into three in a row.
   */
  private checkPageIgnored(window: ListingWindow, ids: readonly (string | null)[]): void {
    if (window.page === 1) {
      this.firstPageIds ??= ids;
      return;
    }
    const first = this.firstPageIds;
    const repeats =
      first !== undefined &&
      ids.length >= 2 &&
      ids.length <= first.length &&
      ids.every((id, i) => id !== null && id === first[i]);
    this.pageOneRepeats = repeats ? this.pageOneRepeats + 1 : 0;
    if (this.pageOneRepeats >= PAGE_ONE_REPEATS) {
      throw new ProtocolError(
        `The marketplace served page ${window.page} with the items of page 1; it seems to ignore the page parameter, so the listing cannot be read completely.`,
      );
    }
  }

  /** The answers that confirmed the end, as a page of no items: they count as re-reads too. */
  pendingRereads(): ItemPage | undefined {
    return this.rereads > 0 ? this.page([]) : undefined;
  }

  /** The items after the anchor not yielded lately, as one page with the checkpoint they reach. */
  private page(after: readonly Received[]): ItemPage {
    const taken = new PageItems();
    let duplicates = 0;
    this.pages += 1;
    for (const received of after) {
      if (received.id !== null && this.yielded.has(received.id)) {
        duplicates += 1;
        continue;
      }
      if (received.id !== null) this.yielded.add(received.id);
      taken.add(received, this.pages);
    }
    const checkpoint: ListingCheckpoint = {
      end: this.end,
      maxPerPage: this.maxPerPage,
      tail: this.chain.tail(CHECKPOINT_TAIL),
    };
    const rereads = this.rereads;
    this.rereads = 0;
    const { items, invalid, unchanged, sent } = taken;
    return {
      page: this.pages,
      items,
      invalid,
      received: after.length,
      duplicates,
      rereads,
      checkpoint: JSON.stringify(checkpoint),
      unchanged,
      sent,
    };
  }
}

function newVotes() {
  return {
    at: undefined as string | undefined,
    offset: -2,
    shapes: new Set<string>(),
    count: 0,
    trusted: false,
    /** Answers in a row that each ended just after the one before. */
    growth: 0,
    trustedInGrowth: false,
    /** Answers just after the end that held nothing more. */
    nothingAfter: 0,
    noOtherShape: false,
  };
}

function shapeOf(window: ListingWindow): string {
  return `${window.page}/${window.perPage}`;
}

/** Proved ids kept: enough to find one again after the listing shifted by several pages. */
function chainCapacity(perPage: number): number {
  return 4 * perPage + 64;
}

/** Proved ids a checkpoint keeps: a resumed reading finds one of them unless more than this many went. */
const CHECKPOINT_TAIL = 64;
