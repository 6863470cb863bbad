import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveWindow, type Settled } from '../../../src/api/listing/driver.js';
import type { RawPage } from '../../../src/api/listing/page-body.js';
import { WindowsMisaligned } from '../../../src/api/listing/paginator.js';
import { ProvedWindows } from '../../../src/api/listing/proved-reader.js';
import type { ListingWindow } from '../../../src/api/listing/window.js';
import { ListingMovedError } from '../../../src/errors.js';

/**
 * The window planner under churn, with plain data: a listing in memory changes after every answer
 * (deletions and insertions behind and ahead of the window just answered), and the server answers the
 * windows in flight in any order, as a real one behind several connections does, or strictly in order, one
 * at a time while the reader waits, as a loaded one does (issue 30). Whatever the order and
 * the churn (up to a quarter of a page per answer), the reading completes and yields every survivor (an
 * item listed from the first answer to the last), and nothing that was never listed.
 */
interface Churn {
  readonly deleteBehind: number;
  readonly deleteAhead: number;
  readonly insertBehind: number;
  readonly insertAhead: number;
}

const NO_CHURN: Churn = { deleteBehind: 0, deleteAhead: 0, insertBehind: 0, insertAhead: 0 };

interface Case {
  readonly items: number;
  readonly perPage: number;
  readonly maxInFlight: number;
  readonly churn: Churn;
  readonly seed: number;
  /** `in order`: the server answers only the oldest window in flight, when the reader waits for it (a
   * loaded server): every window then lands after all those planned before it, each one more move.
   * `late`: each window in flight is answered with chance 1/10 before the oldest is taken. */
  readonly order?: 'any' | 'in order' | 'late';
  /** What becomes of the windows in flight that the planner drops: `answered`, the server answers them
   * all the same (it had them; each answer one more move), as the simulator and a loaded server do;
   * by default, none of them had reached it. */
  readonly dropped?: 'answered';
  /** How many items the last complete run listed (`ListingReadOptions.listedBefore`). */
  readonly listedBefore?: number;
}

class ChurningListing {
  ids: string[];
  readonly everListed: Set<string>;
  readonly deleted = new Set<string>();
  private next = 0;
  private readonly floor: number;

  constructor(
    items: number,
    private readonly churn: Churn,
    private readonly random: () => number,
  ) {
    this.ids = Array.from({ length: items }, () => this.newId());
    this.everListed = new Set(this.ids);
    this.floor = Math.max(Math.floor(items / 2), 40);
  }

  /** The answer to `window` as the listing is now; then the listing changes around it. */
  answer(window: ListingWindow): RawPage {
    const slice = this.ids.slice(window.start, window.start + window.perPage);
    this.change(Math.min(window.start + slice.length, this.ids.length));
    return { elements: slice.map((id) => ({ json: { id }, raw: '', unchanged: { hash: 1, version: 1 } })) };
  }

  /** Deletions and insertions before and after offset `read` (the end of the window just answered). */
  private change(read: number): void {
    const { deleteBehind, deleteAhead, insertBehind, insertAhead } = this.churn;
    const at = (low: number, high: number) => low + Math.floor(this.random() * Math.max(0, high - low));
    let behind = read;
    for (let n = deleteBehind; n > 0 && behind > 0; n -= 1, behind -= 1) this.deleteAt(at(0, behind));
    for (let n = deleteAhead; n > 0 && this.ids.length > behind; n -= 1)
      this.deleteAt(at(behind, this.ids.length));
    for (let n = insertBehind; n > 0; n -= 1, behind += 1) this.insertAt(at(0, behind + 1));
    for (let n = insertAhead; n > 0; n -= 1) this.insertAt(at(behind, this.ids.length + 1));
  }

  private deleteAt(index: number): void {
    // A busy shop sells and lists; it is not emptied while it is read (nothing would be left to prove).
    if (this.ids.length <= this.floor) return;
    const [gone] = this.ids.splice(index, 1);
    if (gone !== undefined) this.deleted.add(gone);
  }

  private insertAt(index: number): void {
    const id = this.newId();
    this.everListed.add(id);
    this.ids.splice(index, 0, id);
  }

  private newId(): string {
    this.next += 1;
    return `i${this.next}`;
  }
}

function randomOf(seed: number): () => number {
  let state = (seed % 2147483646) + 1;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

/** The clock's time per answer. */
const ANSWER_MS = 10;

/**
 * The time budget of the properties whose listings move within the quarter-page rule: 1,000 answers, a
 * twelfth of a real one (120 s, 12,000 answers at 10 ms), so that their probes of the end run beside
 * the windows (at the default, a probe falls due only after 3,000 answers) and a reading the clock fails
 * within the rule shows here. Shorter budgets find the clock's limit (docs/operations.md).
 */
const BUSY_BUDGET_MS = 1_000 * ANSWER_MS;

/**
 * Reads `listing` with the planner as the driver does (answers taken in the order planned, as many in
 * flight as `AdaptiveWindow` allows), the server answering a random choice of the windows in flight, in
 * a random order, before the oldest is taken (or, `in order`, only the oldest).
 */
function readAll(
  listing: ChurningListing,
  c: Case,
  random: () => number,
  budgetMs = 120_000,
  // A planner that does not end fails here in seconds rather than spinning to the request limit with a
  // listing growing under it (issue 30: 13 minutes of a core, beyond vitest's timeout). A reading the
  // listing outruns fails within about a budget and a quarter of answers.
  maxAnswers = (3 * budgetMs) / ANSWER_MS,
): { yielded: Set<string> } {
  // A clock of 10 ms an answer: the time budget counts answers here, as a server at 10 ms would.
  let now = 0;
  let answers = 0;
  const options = {
    perPage: c.perPage,
    maxInFlight: c.maxInFlight,
    maxRequests: 20_000,
    budgetMs,
    listedBefore: c.listedBefore,
  };
  const planner = new ProvedWindows(options, () => now);
  const queue: { window: ListingWindow; answer?: Settled<RawPage> }[] = [];
  const yielded = new Set<string>();
  const inFlight = new AdaptiveWindow(c.maxInFlight);
  const answerOf = (window: ListingWindow): Settled<RawPage> => ({ ok: true, value: listing.answer(window) });
  for (;;) {
    for (const window of planner.plan(Math.max(0, inFlight.size - queue.length), queue.length))
      queue.push({ window });
    const waiting = queue.filter((entry) => !entry.answer);
    const chance = c.order === 'in order' ? 0 : c.order === 'late' ? 0.1 : 0.5;
    const served = waiting.filter(() => random() < chance);
    for (let i = served.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [served[i], served[j]] = [served[j] as (typeof served)[number], served[i] as (typeof served)[number]];
    }
    const head = queue[0];
    // The driver waited for the oldest answer: one more in flight would have hidden that wait.
    if (head && !head.answer && !served.includes(head)) {
      served.push(head);
      inFlight.grow();
    }
    for (const entry of served) entry.answer = answerOf(entry.window);
    queue.shift();
    if (!head?.answer) throw new Error('the planner planned nothing');
    if (++answers > maxAnswers) throw new Error(`the planner had not ended after ${maxAnswers} answers`);
    now += ANSWER_MS;
    const step = planner.take(head.window, head.answer);
    for (const page of step.pages) for (const item of page.unchanged ?? []) yielded.add(item.id);
    if (step.done) return { yielded };
    if (step.dropInFlight) {
      if (c.dropped === 'answered') for (const entry of queue) entry.answer ??= answerOf(entry.window);
      queue.length = 0;
    }
  }
}

/** Listings of 100-1,000 items moved by up to a quarter of a page per answer, read ahead 1 to 8 (read-ahead
 * 64 is drawn in the busy shop's property, at per_page 40). */
function quarterPageCases(): fc.Arbitrary<Case> {
  return fc
    .record({
      items: fc.integer({ min: 100, max: 1_000 }),
      perPage: fc.constantFrom(20, 40, 100),
      maxInFlight: fc.constantFrom(1, 2, 8),
      seed: fc.nat({ max: 2 ** 30 }),
    })
    .chain((c) => quarterPage(c.perPage).map((churn): Case => ({ ...c, churn })));
}

/** Every survivor read whenever the windows complete (`readChurned`), and a hand-over in at most 2 % of 300 runs. */
function expectRarelyHandedOver(drawn: fc.Arbitrary<Case>): void {
  let handedOver = 0;
  const runs = 300;
  fc.assert(
    fc.property(drawn, (c) => {
      if (!readChurned(c, BUSY_BUDGET_MS)) handedOver += 1;
    }),
    { numRuns: runs },
  );
  expect(handedOver).toBeLessThanOrEqual(runs * 0.02);
}

/** Reads a listing churned as `c` says; whether the planner completed (else it handed the reading over). */
function readChurned(c: Case, budgetMs?: number, maxAnswers?: number): boolean {
  const random = randomOf(c.seed);
  const listing = new ChurningListing(c.items, c.churn, random);
  const atStart = [...listing.ids];
  let yielded: Set<string>;
  try {
    yielded = readAll(listing, c, random, budgetMs, maxAnswers).yielded;
  } catch (error) {
    // The page-by-page reader takes over (`readListing`): windows claimed nothing.
    if (error instanceof WindowsMisaligned) return false;
    throw error;
  }
  const survivors = atStart.filter((id) => !listing.deleted.has(id));
  expect(survivors.filter((id) => !yielded.has(id))).toEqual([]);
  expect([...yielded].filter((id) => !listing.everListed.has(id))).toEqual([]);
  return true;
}

/** Churn per answer: `deletions` and `insertions` in all, each split at random between behind and ahead. */
const churnOf = (deletions: fc.Arbitrary<number>, insertions: fc.Arbitrary<number>) =>
  fc
    .record({
      deletions,
      insertions,
      deletedBehind: fc.double({ min: 0, max: 1, noNaN: true }),
      insertedBehind: fc.double({ min: 0, max: 1, noNaN: true }),
    })
    .map(({ deletions, insertions, deletedBehind, insertedBehind }): Churn => {
      const deleteBehind = Math.round(deletions * deletedBehind);
      const insertBehind = Math.round(insertions * insertedBehind);
      return {
        deleteBehind,
        deleteAhead: deletions - deleteBehind,
        insertBehind,
        insertAhead: insertions - insertBehind,
      };
    });

/** Churn per answer of at most a quarter of `perPage` in all. */
const quarterPage = (perPage: number) =>
  fc
    .integer({ min: 0, max: Math.floor(perPage / 4) })
    .chain((total) =>
      fc
        .integer({ min: 0, max: total })
        .chain((deletions) => churnOf(fc.constant(deletions), fc.constant(total - deletions))),
    );

describe('the window planner under churn, answers served in any order (property)', () => {
  it('yields an item deleted behind a later window before its own window was answered: never, and every survivor', () => {
    // Windows 1 and 2 in flight; the server answers window 2 first, then deletes, behind it, an item
    // only window 1 holds. That item was never listed to this reading: not a survivor, not yielded.
    const listing = new ChurningListing(
      60,
      { deleteBehind: 0, deleteAhead: 0, insertBehind: 0, insertAhead: 0 },
      () => 0,
    );
    const planner = new ProvedWindows({ perPage: 20, maxInFlight: 2, maxRequests: 100, budgetMs: 120_000 });
    const [first, second] = planner.plan(2, 0) as [ListingWindow, ListingWindow];
    const secondAnswer = listing.answer(second);
    listing.ids.splice(5, 1);
    const firstAnswer = listing.answer(first);
    const yielded = new Set<string>();
    const take = (window: ListingWindow, answer: RawPage) => {
      const step = planner.take(window, { ok: true, value: answer });
      for (const page of step.pages) for (const item of page.unchanged ?? []) yielded.add(item.id);
      return step.done;
    };
    let done = take(first, firstAnswer) || take(second, secondAnswer);
    const queue: ListingWindow[] = [];
    while (!done) {
      queue.push(...planner.plan(2 - queue.length, queue.length));
      const head = queue.shift() as ListingWindow;
      done = take(head, listing.answer(head));
    }
    expect(yielded.has('i6')).toBe(false);
    expect(listing.ids.filter((id) => !yielded.has(id))).toEqual([]);
  });

  // The busy-shop CLI case that failed under load, by its two routes: every window read ahead past the
  // end was answered, each one more change, before the windows that confirm the end; or a whole window
  // missed what was proved and the plan started again from it while ~45 windows of the old plan, most
  // past the end, landed first. Either way the proved items had moved further back than any window
  // looks, and the reading was handed to page-by-page passes.
  it.each([
    {
      route: 'windows past the end answered one at a time before those that confirm it',
      seed: 6,
      order: 'in order',
    },
    { route: 'a miss that replans while the old plan is still answered first', seed: 82, order: 'late' },
  ] as const)('completes a first sync at read-ahead 64 on a loaded server: $route', ({ seed, order }) => {
    const c: Case = {
      items: 1_500,
      perPage: 40,
      maxInFlight: 64,
      seed,
      churn: { deleteBehind: 4, deleteAhead: 2, insertBehind: 0, insertAhead: 4 },
      order,
    };
    expect(readChurned(c)).toBe(true);
  });

  // The busy-shop CLI cases that failed under load at read-ahead 64 (1 run in 5 in CI), by the route the
  // simulator showed: the windows the planner dropped were answered all the same, each one more change,
  // and after such a burst the proved items lay further back than the windows looked (at most 4 pages and
  // 64 items behind what was proved), or forward of it, where they never looked; or a late answer, kept,
  // set the proved end back where the listing no longer was. The windows read the same two windows until
  // they gave up, twice, and page-by-page passes cannot complete on a listing that never holds still.
  it.each([
    { kind: 'first sync', seed: 2, order: 'in order', dropped: 'answered' },
    { kind: 'first sync', seed: 5, order: 'in order', dropped: 'answered' },
    { kind: 'resync with new items', seed: 20, order: 'in order', dropped: 'answered' },
    { kind: 'resync with new items', seed: 4, order: 'late', dropped: 'answered' },
    { kind: 'resync with new items', seed: 5, order: 'late', dropped: undefined },
  ] as const)(
    'completes the $kind at read-ahead 64 whose proved items moved out of sight (seed $seed, $order, dropped windows $dropped)',
    ({ kind, seed, order, dropped }) => {
      const churn =
        kind === 'first sync'
          ? { deleteBehind: 4, deleteAhead: 2, insertBehind: 0, insertAhead: 4 }
          : { deleteBehind: 1, deleteAhead: 0, insertBehind: 4, insertAhead: 0 };
      const c: Case = { items: 1_500, perPage: 40, maxInFlight: 64, seed, churn, order, dropped };
      expect(readChurned(c)).toBe(true);
    },
  );

  it("completes a busy shop's reading with every survivor: per_page 40, 1-6 deletions and 0-4 insertions per answer, read-ahead 1, 8, 64, answers in any order or one at a time", () => {
    const drawn = fc.record({
      items: fc.integer({ min: 100, max: 1_500 }),
      perPage: fc.constant(40),
      maxInFlight: fc.constantFrom(1, 8, 64),
      seed: fc.nat({ max: 2 ** 30 }),
      churn: churnOf(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 4 })),
      order: fc.constantFrom('any' as const, 'in order' as const),
    });
    fc.assert(
      fc.property(drawn, (c) => {
        expect(readChurned(c, BUSY_BUDGET_MS)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('never completes without every survivor at up to a quarter of a page per answer, read-ahead 1 to 8, and rarely hands over', () => {
    // Pages of fewer than 20 cannot always overlap (see windowAfter), and a listing of a few items
    // growing by a quarter page per answer moves its end faster than windows confirm it: both are read
    // page by page. Here the windows hand over only when insertions before the reader run near a quarter
    // page per answer (about 1 run in 200 of these). Not drawn: read-ahead 64 at per_page 20 with items
    // appended at the end, where the end can outrun the reading until `maxRequests`.
    expectRarelyHandedOver(quarterPageCases());
  });

  it('never completes without every survivor, told how many items the last complete run listed (as many, fewer or more), and rarely hands over', () => {
    // As above, with the count of a last run that read the listing before this churn, or one of a
    // listing that has since grown (the count a tenth of it) or shrunk (twice it): it only limits reading ahead.
    expectRarelyHandedOver(
      quarterPageCases().chain((c) =>
        fc
          .constantFrom(1, 0.1, 2)
          .map((listed): Case => ({ ...c, listedBefore: Math.round(c.items * listed) })),
      ),
    );
  });

  it('fails with LISTING_MOVED, within the time budget without progress, on a listing that grows ahead by more than a page per answer', () => {
    const drawn = fc.record({
      items: fc.integer({ min: 100, max: 1_000 }),
      perPage: fc.constantFrom(20, 40),
      maxInFlight: fc.constantFrom(1, 8, 64),
      seed: fc.nat({ max: 2 ** 30 }),
    });
    fc.assert(
      fc.property(drawn, (c) => {
        const churn = { deleteBehind: 0, deleteAhead: 0, insertBehind: 0, insertAhead: 2 * c.perPage };
        const random = randomOf(c.seed);
        const listing = new ChurningListing(c.items, churn, random);
        expect(() => readAll(listing, { ...c, churn }, random, 5_000)).toThrow(ListingMovedError);
      }),
      { numRuns: 20 },
    );
  });

  it('completes a listing that stops growing within the time budget, with every survivor', () => {
    const c: Case = { items: 300, perPage: 20, maxInFlight: 8, seed: 7, churn: NO_CHURN };
    const churn = { ...NO_CHURN, insertAhead: 40 };
    const random = randomOf(c.seed);
    const listing = new ChurningListing(c.items, churn, random);
    const atStart = [...listing.ids];
    // Growing by two pages an answer for 200 answers (2 s of the 5 s budget), then still.
    const answer = listing.answer.bind(listing);
    let answers = 0;
    listing.answer = (window) => {
      if (++answers === 200) churn.insertAhead = 0;
      return answer(window);
    };
    const { yielded } = readAll(listing, { ...c, churn }, random, 5_000);
    expect(atStart.filter((id) => !yielded.has(id))).toEqual([]);
  });

  it('never runs to the request limit at per_page 20, read-ahead 64, with items inserted ahead after every answer: it completes with every survivor or fails with LISTING_MOVED', () => {
    const drawn = fc.record({
      items: fc.integer({ min: 100, max: 1_000 }),
      perPage: fc.constant(20),
      maxInFlight: fc.constant(64),
      seed: fc.nat({ max: 2 ** 30 }),
      churn: fc.integer({ min: 1, max: 5 }).map((insertAhead): Churn => ({ ...NO_CHURN, insertAhead })),
    });
    fc.assert(
      fc.property(drawn, (c) => {
        try {
          // A reading that gains slowly on its end may take a few budgets (at most 2,381 answers here
          // in 100 runs); one that never ends fails at 6,000 answers, in seconds.
          readChurned(c, 5_000, 6_000);
        } catch (error) {
          if (!(error instanceof ListingMovedError)) throw error;
        }
      }),
      // The first: a reading that ran to the request limit before the clock (its end moved after every answer).
      {
        numRuns: 100,
        examples: [
          [
            {
              items: 221,
              perPage: 20,
              maxInFlight: 64,
              seed: 270226505,
              churn: { ...NO_CHURN, insertAhead: 5 },
            },
          ],
        ],
      },
    );
  });
});
