import type { ResponseTooLargeError } from '../../errors.js';
import { Backlog } from './backlog.js';
import { ProvedChain } from './chain.js';
import { type ListingCheckpoint, readingPerPage } from './checkpoint.js';
import { Drift } from './drift.js';
import { drive, type Planner, type Settled, type Step } from './driver.js';
import { EndVotes } from './end-votes.js';
import { pageParts, type Received, receivedOf } from './page.js';
import type { RawPage } from './page-body.js';
import {
  type ItemPage,
  type ListingReadOptions,
  listingFailure,
  type Paginator,
  WindowsMisaligned,
} from './paginator.js';
import { type ListingWindow, windowAfter, windowAt } from './window.js';
import { RecentIds } from './yielded-ids.js';

/** Readings without a new proved item, beyond those already in flight when the first of them was
 * taken, before the reading starts over from page 1 (once). */
const MAX_STUCK = 24;
/** Answers for later pages in a row that repeat page 1 before the server is taken to ignore `page`. */
const PAGE_ONE_REPEATS = 3;
/** Believed ends that more items followed before the listing is taken as one whose pages shift. */
const MAX_MISPLACED_ENDS = 6;
/** Times the reading may back up to page 1, having proved items, before windows are given up. */
const MAX_BACK_TO_START = 2;
/** Whole answers after one that ended short before windows are read ahead again (near its end, a
 * listing growing at its end is confirmed one answer at a time). */
const NEAR_END_ANSWERS = 4;

/**
 * Reads the listing so that every item listed from the first request to the last is yielded, however
 * the listing moves meanwhile. Each answer must hold an item already proved (see `ProvedChain`), which
 * proves the items after it: no item can slip past the reader between two answers unseen.
 */
export const readProved: Paginator = (fetch, options) =>
  drive(
    new ProvedWindows(options),
    (window: ListingWindow, signal, pushedBack) =>
      fetch(window, { signal, first: window.page === 1, pushedBack }),
    options.maxInFlight,
  );

interface Kept {
  readonly window: ListingWindow;
  readonly answer: readonly Received[];
}

/**
 * The planner of overlapping windows. Windows overlap the proved end by more than the listing moved
 * between answers lately (`overlap`): one item on a still listing, so that it costs a percent or two more
 * requests than pages. An answer that holds no proved item is kept, and windows further from the proved
 * end are asked, behind it and ahead of it in turn: once an answer proves the items before a kept one, the
 * kept one proves its own, and an answer that holds proved items short of the last one shows where the
 * proved end went. The end is believed after two answers that end at the same proved item and the pages
 * after them holding nothing new, twice each (see `EndVotes`).
 */
export class ProvedWindows implements Planner<ListingWindow, RawPage, ItemPage> {
  private chain: ProvedChain;
  /** Offset of the last proved item, as of the latest answer that held it or showed where it went (see
   * `aimAt`) (-1: nothing proved yet). */
  private end: number;
  private maxPerPage: number;
  /** How the listing moved between answers lately. */
  private readonly drift = new Drift();
  /** Answers taken, and how many had been when `end` was last proved: the listing moves between answers. */
  private answers = 0;
  private endAnswer = 0;
  /** How far from `end` the next window starts, beyond the overlap, after answers that proved nothing. */
  private back = 0;
  /** Whether that window is after `end` (the search for the proved items looks on both sides in turn). */
  private ahead = false;
  /** Times the plan started again from what was proved: a window planned before the latest says little. */
  private replans = 0;
  private readonly generation = new WeakMap<ListingWindow, number>();
  private stuck = 0;
  private backToStart = 0;
  private restarted = false;
  private requests = 0;
  private largestAnswer = 0;
  private misplacedEnds = 0;
  private pageOneRepeats = 0;
  private rereads = 0;
  /** Where the planned windows will have read to, if every answer comes as planned. */
  private plannedEnd: number;
  /** What the answers said of where the listing ends. */
  private readonly votes = new EndVotes();
  /** Whole answers that prove new items still to come before an answer that ended short is left behind. */
  private nearEnd = 0;
  /** Offset of the last item the shop's last complete run listed (`ListingReadOptions.listedBefore`),
   * until an answer proves an item past it (the listing grew): then undefined. */
  private expectedEnd: number | undefined;
  /** Answers that held no proved item yet, in the order asked (at most one window's worth). */
  private kept: Kept[] = [];
  private readonly yielded: RecentIds;
  private firstPageIds: readonly (string | null)[] | undefined;
  private pages = 0;
  /** Whether the reading gains on the listing's end: the clock a listing that outruns it fails on. */
  private readonly backlog: Backlog;

  constructor(
    private readonly options: ListingReadOptions,
    now: () => number = Date.now,
  ) {
    this.backlog = new Backlog(options.budgetMs, options.maxInFlight, now);
    const { resume } = options;
    this.maxPerPage = readingPerPage(options.perPage, resume);
    this.chain = new ProvedChain(chainCapacity(options.perPage), resume?.tail ?? []);
    this.end = resume && this.chain.size > 0 ? resume.end : -1;
    this.plannedEnd = this.end;
    this.expectedEnd = options.listedBefore === undefined ? undefined : options.listedBefore - 1;
    this.passExpectedEnd();
    this.yielded = new RecentIds(chainCapacity(options.perPage));
  }

  plan(room: number, inFlight: number): ListingWindow[] {
    // A probe in flight holds the reading back in nothing: its answer neither shows the end nor moves
    // it. Counted, it kept the windows that confirm an end from being asked for as long as a search took,
    // the listing moving after each of its answers, and a busy end took longer than the budget (issue 30).
    const reading = inFlight - (this.backlog.probing ? 1 : 0);
    const probe = this.backlog.probe(this.end, this.maxPerPage);
    const probes = probe ? [probe] : [];
    const windows = [
      ...probes,
      ...(this.votes.any ? this.planEnd(reading) : this.planAhead(room - probes.length, reading)),
    ];
    this.requests += windows.length;
    if (this.requests > this.options.maxRequests) {
      throw listingFailure.endless(this.options.maxRequests);
    }
    return windows;
  }

  take(window: ListingWindow, settled: Settled<RawPage>): Step<ItemPage> {
    this.answers += 1;
    if (this.backlog.isProbe(window)) return this.takeProbe(settled);
    if (!settled.ok) {
      if (!listingFailure.tooLarge(settled.error)) throw settled.error;
      this.tooLarge(window, settled.error);
      return { pages: [], done: false, dropInFlight: true };
    }
    const pages: ItemPage[] = [];
    const { plannedEnd, replans } = this;
    const shown = this.votes.shown;
    const answer = receivedOf(settled.value);
    const done = this.takeAnswer(window, answer, pages);
    if (pages.length === 0) this.rereads += 1;
    if (done && this.rereads > 0) pages.push(this.page([]));
    // This answer showed an end, or (a whole page) missed what was proved and started the plan again
    // from it, while windows were planned past that: a loaded server answers them first, each one more
    // move of a busy listing, until what was proved has drifted out of reach of any window (issue 30).
    const endShown = this.votes.shown !== shown && this.votes.any;
    const missed = pages.length === 0 && this.replans !== replans && answer.length === window.perPage;
    const dropInFlight = !done && (endShown || missed) && plannedEnd > this.end;
    // A probe in flight is dropped with the rest: never answered, it would hold back every probe after it.
    if (dropInFlight) this.backlog.dropped();
    return { pages, done, dropInFlight };
  }

  /** A probe's answer proves nothing: it says where the listing ends (see `Backlog`). */
  private takeProbe(settled: Settled<RawPage>): Step<ItemPage> {
    if (!settled.ok) {
      if (!listingFailure.tooLarge(settled.error)) throw settled.error;
      this.backlog.abandon();
    } else this.backlog.take(settled.value.elements.length, this.end);
    return { pages: [], done: false };
  }

  /** Windows ahead of what was read: from the planned end, or from further off after a miss. */
  private planAhead(room: number, inFlight: number): ListingWindow[] {
    const windows: ListingWindow[] = [];
    // Fewer in flight while the listing moves by nearly half a window between answers, and near an end
    // an answer showed: windows past it would be asked for nothing.
    const cap =
      this.nearEnd > 0
        ? Math.max(0, 1 - inFlight)
        : 4 * this.drift.spread >= this.maxPerPage
          ? Math.max(0, 2 - inFlight)
          : room;
    const count = inFlight === 0 ? Math.max(1, cap) : cap;
    for (let n = 0; n < count; n += 1) {
      // Up to the window that reaches where the last complete run's listing ended, then one at a time, as
      // near an end an answer showed: unchanged, the listing ends in that window, and windows planned
      // past it would be asked for nothing. Only planning waits on it: what is proved is the answers'.
      if (inFlight + n > 0 && this.expectedEnd !== undefined && this.plannedEnd >= this.expectedEnd) break;
      // Answered one answer after the window before it: where the listing will have moved its items.
      const next = this.windowAfter(this.plannedEnd + this.drift.lead);
      this.generation.set(next, this.replans);
      windows.push(next);
      this.plannedEnd = next.start + next.perPage - 1;
    }
    return windows;
  }

  /** Windows that confirm the end the answers showed, once the windows in flight have landed. */
  private planEnd(inFlight: number): ListingWindow[] {
    const windows: ListingWindow[] = [];
    if (inFlight > 0) return windows;
    // Alone: its answer, a later end or the same, decides what the windows below would be asked for.
    const recheck = this.votes.recheck();
    if (recheck) return [recheck];
    // Asking no more than the server ever served: a short answer then cannot be its own page size.
    const tight = this.votes.isTrusted ? null : this.tightWindowAtEnd();
    if (this.votes.wantsAnotherShape) {
      const again = this.anotherWindowAtEnd(tight);
      if (again) windows.push(again);
    }
    if (tight) windows.push(tight);
    windows.push(...this.votes.continuations(windows));
    return windows;
  }

  /** Takes one answer (and then the kept answers it lets prove themselves); true once the end is believed. */
  private takeAnswer(window: ListingWindow, answer: readonly Received[], pages: ItemPage[]): boolean {
    const ids = answer.map((received) => received.id);
    this.checkPageIgnored(window, ids);
    this.largestAnswer = Math.max(this.largestAnswer, answer.length);
    if (answer.length > window.perPage) throw new WindowsMisaligned('the server ignores per_page');
    if (window.start === 0 && answer.length === 0) return this.emptyListing(window);
    const anchor = this.chain.anchorIn(ids);
    // From after the believed end, the end again and nothing past it: items inserted before the end
    // pushed it into this window, and the listing still ends there (see `endsAgain`).
    const endAgain = anchor >= 0 && ids.at(-1) === this.chain.last && this.endsAgain(window, answer);
    if (window.start > this.end && this.votes.any && (anchor < 0 || endAgain))
      return this.afterEnd(window, answer);
    if (anchor >= 0 || (window.start === 0 && answer.length > 0)) {
      this.prove(window, answer, anchor, pages, true);
      this.proveKept(pages);
      return this.votes.ended();
    }
    this.missed(window, answer);
    return false;
  }

  /** `answer` holds the proved item at `anchor` (or starts the listing): what follows it is proved. */
  private prove(
    window: ListingWindow,
    answer: readonly Received[],
    anchor: number,
    pages: ItemPage[],
    fresh: boolean,
  ): void {
    const anchorId = anchor >= 0 ? (answer[anchor]?.id as string) : undefined;
    const atEnd = anchorId !== undefined && anchorId === this.chain.last;
    const short = answer.length < window.perPage;
    const lastId = answer.at(-1)?.id;
    // A whole answer from behind the proved end, ending at an item proved already: what it holds
    // besides is new since, and moves nothing.
    if (!atEnd && !short && anchorId !== undefined && lastId != null && this.chain.has(lastId)) {
      const unseen = answer.filter((received) => received.id !== null && !this.chain.has(received.id));
      if (fresh) this.aimAt(window.start + answer.length - 1 + this.chain.provedAfter(lastId));
      if (unseen.length > 0) pages.push(this.page(unseen));
      else this.noteStuck();
      return;
    }
    const endBefore = this.end;
    const expected = endBefore - window.start;
    const after = answer.slice(anchor + 1);
    const afterIds = idsOf(after);
    if (anchorId !== undefined) this.chain.continueFrom(anchorId, afterIds);
    else {
      // Backing up all the way to page 1 again and again: windows cannot find the proved items here.
      if (this.chain.size > 0 && ++this.backToStart > MAX_BACK_TO_START) {
        throw new WindowsMisaligned(`backed up to page 1 ${MAX_BACK_TO_START} times`);
      }
      this.chain = new ProvedChain(chainCapacity(this.options.perPage), afterIds);
    }
    this.end = window.start + answer.length - 1;
    this.plannedEnd = Math.max(this.plannedEnd, this.end);
    this.passExpectedEnd();
    const overlapBefore = this.overlap();
    const leadBefore = this.drift.lead;
    // The end moved by this much since the answer that proved it: per answer in between, what the
    // listing moves between two windows answered one after the other.
    const elapsed = Math.max(1, this.answers - this.endAnswer);
    this.endAnswer = this.answers;
    const measured = atEnd && fresh;
    const shift = measured ? (anchor - expected) / elapsed : leadBefore;
    if (measured) this.drift.note(shift);
    if (afterIds.some((id) => !this.yielded.has(id))) {
      this.stuck = 0;
      this.back = 0;
    } else this.noteStuck();
    const progressed = afterIds.length > 0;
    // While an end is confirmed, a window no larger than the server ever served that ends at it ends
    // there too, whole: the single item of a listing of one (no other window is short there).
    const confirming = this.votes.any && window.perPage <= this.largestAnswer && !progressed;
    const ends = (short || confirming) && lastId === this.chain.last;
    if (short) this.nearEnd = NEAR_END_ANSWERS;
    else if (progressed) this.nearEnd = Math.max(0, this.nearEnd - 1);
    const lastEnd = this.votes.lastEnd;
    if (ends) this.vote(window, lastEnd !== undefined && answer.some((received) => received.id === lastEnd));
    else if (progressed) this.learnPageSize();
    if (ends || short || Math.abs(shift - leadBefore) >= overlapBefore) this.replan();
    if (after.length > 0) pages.push(this.page(after));
  }

  /**
   * A fresh answer holds proved items short of the last one: the listing lists the rest of them after
   * it, so the proved end now lies about `estimate`, wherever the listing moved it since it was proved
   * (after a search, often further than any window planned from where it was proved would look).
   */
  private aimAt(estimate: number): void {
    if (Math.abs(estimate - this.end) < this.overlap()) return;
    this.end = estimate;
    this.endAnswer = this.answers;
    // A search for the proved items starts again from there, with windows close to it.
    this.back = 0;
    this.votes.reset();
    this.replan();
  }

  /** Kept answers that now hold a proved item prove what follows it, in the order they were asked. */
  private proveKept(pages: ItemPage[]): void {
    for (let i = 0; i < this.kept.length; ) {
      const { window, answer } = this.kept[i] as Kept;
      const anchor = this.chain.anchorIn(answer.map((received) => received.id));
      if (anchor < 0) {
        i += 1;
        continue;
      }
      this.kept.splice(i, 1);
      this.prove(window, answer, anchor, pages, false);
      i = 0;
    }
  }

  /** Items proved past where the last complete run's listing ended: it grew, and is read ahead in full. */
  private passExpectedEnd(): void {
    if (this.expectedEnd !== undefined && this.end > this.expectedEnd) this.expectedEnd = undefined;
  }

  /** The window after offset `from`, overlapping it as `overlap` says. */
  private windowAfter(from: number): ListingWindow {
    const next = windowAfter(from, this.overlap(), this.maxPerPage);
    if (!next) throw new WindowsMisaligned(`pages of ${this.maxPerPage} cannot overlap`);
    return next;
  }

  /** Items the next window shares with what was proved: more than the listing moved between answers. */
  private overlap(): number {
    return Math.max(1, Math.min(1 + 2 * this.drift.spread, Math.floor(this.maxPerPage / 2)));
  }

  /**
   * The answer to `window` exceeded the response cap: ask for half as many items at a time. A window
   * of two or fewer holds an item that alone may exceed the cap; no window can step over it, so the
   * listing is read page by page, where such an item is reported invalid in its place.
   */
  private tooLarge(window: ListingWindow, error: ResponseTooLargeError): void {
    if (window.perPage <= 2)
      throw new WindowsMisaligned(`an item alone may exceed the cap: ${error.message}`);
    this.maxPerPage = Math.min(this.maxPerPage, Math.floor(window.perPage / 2));
    this.backlog.abandon();
    this.votes.reset();
    this.replan();
  }

  /** Page 1 is empty: the end, once confirmed like any other (no page size explains an empty page 1). */
  private emptyListing(window: ListingWindow): boolean {
    // Whatever was proved is gone: the listing ends before it.
    if (this.end >= 0) {
      this.chain = new ProvedChain(chainCapacity(this.options.perPage));
      this.end = -1;
    }
    this.vote(window, false);
    this.votes.nothingMore(window, true);
    this.replan();
    return this.votes.ended();
  }

  /** A believed end that more items followed: answers were cut at the server's own page size, or lost
   * their last items, or the listing grew. The largest answer is the server's page size if below ours. */
  private learnPageSize(): void {
    if (this.votes.any && this.largestAnswer > 1 && this.largestAnswer < this.maxPerPage) {
      this.maxPerPage = this.largestAnswer;
    }
    this.votes.reset();
  }

  /**
   * An answer for a window after the believed end: empty, or a repeat of the end (a server that clamps
   * `page`), for the page after a window that ended there, it backs the end; items there mean that the answers that ended
   * short were cut, or that the listing grew: kept, and the end asked for again.
   */
  private afterEnd(window: ListingWindow, answer: readonly Received[]): boolean {
    if (answer.length === 0 || answer.at(-1)?.id === this.chain.last) {
      // Only the page after a window that ended there backs it; others were read ahead.
      const before = this.votes.continued(window);
      if (before === undefined) return false;
      this.votes.nothingMore(before);
      const ended = this.votes.ended();
      if (!ended) this.noteStuck();
      return ended;
    }
    // An empty listing that items then joined says nothing of the server's page size.
    if (this.votes.atAnItem) this.misplacedEnd();
    this.keep(window, answer);
    this.noteStuck();
    this.votes.reset();
    this.replan();
    return false;
  }

  /**
   * Whether `answer`, from after the believed end and ending at it, shows nothing past it. Short of its
   * window, it had room to. Whole, it had none: on a listing seen to move (`Drift.moved`), the end
   * carried into the page after by the items inserted before it lands anywhere in it, its last place
   * too, and the listing still ends there (without it, busy listings churned at a quarter page an answer
   * were read past their time budget: planner-churn's property); on a listing seen still, it shows only
   * a move the reader never measured. So one insertion in front of a growing listing put its end item in
   * the one-item page after the end, the items that follow it unseen, and 2 of its 3 items were lost
   * (the soak of fcdca04's tree; test/api/listing/end-confirm.test.ts).
   */
  private endsAgain(window: ListingWindow, answer: readonly Received[]): boolean {
    return answer.length < window.perPage || this.drift.moved;
  }

  /** Items followed a believed end: the largest answer is the server's page size if below ours. */
  private misplacedEnd(): void {
    if (this.largestAnswer > 1 && this.largestAnswer < this.maxPerPage) this.maxPerPage = this.largestAnswer;
    else if (++this.misplacedEnds >= MAX_MISPLACED_ENDS) {
      throw new WindowsMisaligned('answers shorter than asked were followed by more items');
    }
  }

  /**
   * An answer that holds no proved item: the listing moved more than the overlap; kept, and a window
   * further off asked, behind the proved end and then as far ahead of it, twice as far each round. Every
   * answer moves a busy listing, those of windows dropped in flight too (the server had them), so after a
   * burst of them the proved items may lie hundreds of items away: back when items before them were
   * sold, forward when items were listed before them. The search is not bounded by the proved ids kept:
   * it ends at page 1 at worst, which proves itself.
   */
  private missed(window: ListingWindow, answer: readonly Received[]): void {
    this.keep(window, answer);
    // Asked before the plan started again from what was proved, its miss was foreseen.
    if ((this.generation.get(window) ?? this.replans) !== this.replans) return;
    this.noteStuck();
    // An empty answer (a false end) says nothing of how the listing moved.
    if (answer.length > 0) this.drift.missed(this.overlap());
    if (this.back === 0) {
      this.back = this.overlap();
      this.ahead = false;
    } else if (!this.ahead) this.ahead = true;
    else {
      this.ahead = false;
      this.back *= 2;
    }
    this.votes.reset();
    this.replan();
    this.plannedEnd = this.ahead ? this.end + this.back : Math.max(-1, this.end - this.back);
  }

  private keep(window: ListingWindow, answer: readonly Received[]): void {
    if (answer.length === 0) return;
    this.kept.push({ window, answer });
    if (this.kept.length > this.options.maxInFlight + 1) this.kept.shift();
  }

  private noteStuck(): void {
    this.stuck += 1;
    const limit = MAX_STUCK + this.options.maxInFlight;
    if (this.stuck <= limit) return;
    if (this.restarted) {
      throw new WindowsMisaligned(`${limit} answers in a row proved no new item, twice`);
    }
    // From page 1 nothing needs proving before the first answer: a sure way to find the ground again.
    this.restarted = true;
    this.stuck = 0;
    this.back = 0;
    this.end = -1;
    this.plannedEnd = -1;
    this.kept = [];
    this.chain = new ProvedChain(chainCapacity(this.options.perPage));
  }

  /** `window`'s answer ended at the proved end, shorter than asked (see `EndVotes.vote`). */
  private vote(window: ListingWindow, holdsLastEnd: boolean): void {
    const trusted = window.perPage <= this.largestAnswer;
    if (this.votes.vote(this.chain.last, window, trusted, holdsLastEnd)) this.misplacedEnds = 0;
  }

  /** A window over the proved end no larger than the largest answer the server gave, if there is one
   * (`end` is an item's offset here: an end is being confirmed). */
  private tightWindowAtEnd(): ListingWindow | null {
    const largest = Math.min(this.maxPerPage, this.largestAnswer);
    const tight = windowAfter(this.end, 1, Math.max(2, largest));
    if (tight && tight.perPage <= this.largestAnswer) return tight;
    // None reaches past the end (a listing of a few items): the largest that ends at it, whole.
    for (let perPage = largest; perPage >= 1; perPage -= 1) {
      if ((this.end + 1) % perPage === 0) return windowAt((this.end + 1) / perPage, perPage);
    }
    return null;
  }

  /** A window over the proved end unlike those that already ended there (see `planEnd` for `tight`). */
  private anotherWindowAtEnd(tight: ListingWindow | null): ListingWindow | null {
    for (let overlap = this.overlap(); overlap <= this.maxPerPage; overlap += 1) {
      const window = windowAfter(this.end, overlap, this.maxPerPage);
      if (window && !this.votes.has(window)) return window;
    }
    // None of the largest windows over the end is another shape (a listing ending within page 1), but the
    // tight window asked beside it is: its answer is the other shape, and the same window again says nothing.
    if (tight && !this.votes.has(tight)) return null;
    // Pages too small to hold the end in two ways: the same window, asked again.
    this.votes.noOther();
    return windowAfter(this.end, this.overlap(), this.maxPerPage);
  }

  private replan(): void {
    this.replans += 1;
    this.plannedEnd = this.end;
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
      throw listingFailure.pageIgnored(window.page, 'the items of page 1');
    }
  }

  /** The items not yielded lately, as one page with the checkpoint they reach. */
  private page(after: readonly Received[]): ItemPage {
    this.pages += 1;
    const parts = pageParts(this.pages, after, (id) => !this.yielded.has(id) && this.yielded.add(id));
    const checkpoint: ListingCheckpoint = {
      end: this.end,
      maxPerPage: this.maxPerPage,
      tail: this.chain.tail(CHECKPOINT_TAIL),
    };
    const rereads = this.rereads;
    this.rereads = 0;
    return { page: this.pages, ...parts, rereads, checkpoint: JSON.stringify(checkpoint) };
  }
}

/** Proved ids kept: enough to find one again after the listing shifted by several pages. */
function chainCapacity(perPage: number): number {
  return 4 * perPage + 64;
}

/** Proved ids a checkpoint keeps: a resumed reading finds one of them unless more than this many went. */
const CHECKPOINT_TAIL = 64;

/** The ids of `received`, in order, leaving out elements without one (no array per element, as
 * `flatMap` makes: this runs on every item of every answer). */
function idsOf(received: readonly Received[]): string[] {
  const ids: string[] = [];
  for (const { id } of received) if (id !== null) ids.push(id);
  return ids;
}
