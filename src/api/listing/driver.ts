import { setMaxListeners } from 'node:events';
import { ProtocolError } from '../../errors.js';

/** A request's outcome, kept until the planner takes it in request order. */
export type Settled<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly error: unknown };

/** What a planner makes of one answer. */
export interface Step<P> {
  /** What the answer proved, in order. */
  readonly pages: readonly P[];
  readonly done: boolean;
  /** The requests in flight were planned on what this answer proved wrong: they are aborted and dropped. */
  readonly dropInFlight?: boolean;
}

/**
 * The decisions of a reading without its I/O: which requests to send, what each answer proves. It is
 * handed every answer in the order its requests were planned, so it is tested with plain data.
 */
export interface Planner<Q, A, P> {
  /** Up to `room` requests to send now (at least one when `inFlight` is 0); `inFlight`: sent and not yet taken. */
  plan(room: number, inFlight: number): readonly Q[];
  take(request: Q, answer: Settled<A>): Step<P>;
}

/** How the driver sends one request: `signal` aborts it, `pushedBack` is called when the server pushes back. */
export type Send<Q, A> = (request: Q, signal: AbortSignal, pushedBack: () => void) => Promise<A>;

/** A request sent: its outcome (never a rejection) and whether it came yet. */
interface Tracked<A> {
  readonly result: Promise<Settled<A>>;
  settled: boolean;
}

/** `promise`'s outcome, never a rejection. */
export function settledOf<A>(promise: Promise<A>): Promise<Settled<A>> {
  return promise.then(
    (value): Settled<A> => ({ ok: true, value }),
    (error: unknown): Settled<A> => ({ ok: false, error }),
  );
}

/** `sent` tracked, with `about` it (which request, which page). */
function tracked<A, T extends object>(sent: Promise<A>, about: T): Tracked<A> & T {
  const entry: Tracked<A> & T = {
    ...about,
    settled: false,
    result: settledOf(sent),
  };
  void entry.result.then(() => {
    entry.settled = true;
  });
  return entry;
}

interface InFlight<Q, A> extends Tracked<A> {
  readonly request: Q;
}

/**
 * Runs a planner against the network: requests sent as soon as they are planned, at most `maxInFlight`
 * at once (a dropped request keeps its slot until it settles: the reader never has more outstanding, though
 * a server may still count an aborted one until it reads the close of its connection), answers
 * taken in the order they were planned (a first-in, first-out queue of promises, as BullMQ's worker keeps
 * its jobs), the window adapting between 1 and `maxInFlight` (`AdaptiveWindow`). When the reading ends
 * or fails, what is still in flight is aborted and drained: nothing outlives it.
 */
export async function* drive<Q, A, P>(
  planner: Planner<Q, A, P>,
  send: Send<Q, A>,
  maxInFlight: number,
): AsyncGenerator<P> {
  const window = new AdaptiveWindow(maxInFlight);
  const slots = new Slots(maxInFlight);
  const queue: InFlight<Q, A>[] = [];
  const dropped: InFlight<Q, A>[] = [];
  let batch = batchController(maxInFlight);
  const start = (request: Q): InFlight<Q, A> => {
    const signal = batch.signal;
    return tracked(
      slots.run(() => send(request, signal, () => window.shrink())),
      { request },
    );
  };
  try {
    for (;;) {
      for (const request of planner.plan(window.size - queue.length, queue.length))
        queue.push(start(request));
      const head = queue.shift();
      if (!head) throw new ProtocolError('The listing reader planned no request (a defect).');
      if (!head.settled) window.grow();
      const step = planner.take(head.request, await head.result);
      yield* step.pages;
      if (step.done) return;
      if (step.dropInFlight) {
        batch.abort();
        dropped.push(...queue.splice(0));
        batch = batchController(maxInFlight);
      }
    }
  } finally {
    batch.abort();
    await Promise.all([...queue, ...dropped].map((entry) => entry.result));
  }
}

function batchController(maxInFlight: number): AbortController {
  const controller = new AbortController();
  // Each request in flight listens for the abort twice (its request and its retry wait).
  setMaxListeners(Math.max(10, maxInFlight * 2 + 2), controller.signal);
  return controller;
}

/**
 * How many requests to keep in flight: grows by one each time the reader has to wait for the network
 * (one more in flight would have hidden that wait), halves when the server pushes back (429, 5xx), never
 * above `max`.
 */
export class AdaptiveWindow {
  private current: number;

  constructor(readonly max: number) {
    this.current = Math.min(2, max);
  }

  get size(): number {
    return this.current;
  }

  grow(): void {
    this.current = Math.min(this.max, this.current + 1);
  }

  shrink(): void {
    this.current = Math.max(1, Math.floor(this.current / 2));
  }
}

/** At most `limit` tasks at once, in the order they asked. */
export class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `active` stays as it is.
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

interface Fetching<A> extends Tracked<A> {
  readonly page: number;
}

/**
 * Pages from `first` to `last` in order, for the page-by-page reader (which asks pages again beside
 * them as it goes; a planner's requests go through `drive`): up to the window's size of them in flight
 * while the reader waits, one fewer while it works on the page it took.
 */
export class ReadAhead<A> {
  private readonly queue: Fetching<A>[] = [];
  private next: number;

  constructor(
    private readonly fetch: (page: number) => Promise<A>,
    first: number,
    private readonly last: number,
    private readonly window: AdaptiveWindow,
  ) {
    this.next = first;
  }

  /** The last page requested so far. */
  get requested(): number {
    return this.next - 1;
  }

  /** The next page, or undefined once `last` was taken. A failed page throws its error. */
  async take(): Promise<{ page: number; raw: A } | undefined> {
    this.fill(0);
    const head = this.queue.shift();
    if (!head) return undefined;
    if (!head.settled) {
      this.window.grow();
      this.fill(1);
    }
    const settled = await head.result;
    if (!settled.ok) throw settled.error;
    return { page: head.page, raw: settled.value };
  }

  /** Waits for the pages still in flight (after an abort, so that nothing outlives the reading). */
  async drain(): Promise<void> {
    await Promise.all(this.queue.map((fetching) => fetching.result));
  }

  /** Requests pages until the window is full; `taken`: pages already out of the queue yet in flight. */
  private fill(taken: number): void {
    while (this.queue.length + taken < this.window.size && this.next <= this.last) {
      this.queue.push(tracked(this.fetch(this.next), { page: this.next }));
      this.next += 1;
    }
  }
}
