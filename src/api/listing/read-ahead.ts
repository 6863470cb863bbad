import type { RawPage } from './page-body.js';

/**
 * How many pages to keep in flight: grows by one each time the reader has to wait for the network
 * (one more page in flight would have hidden that wait), halves when the server pushes back (429, 5xx),
 * never above `max`.
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

/** At most `limit` tasks at once, in the order they asked: read-ahead and re-reads share the limit, so the
 * server never sees more requests of one reading at a time. */
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

type Settled = { ok: true; raw: RawPage } | { ok: false; error: unknown };

interface Fetching {
  readonly page: number;
  readonly result: Promise<Settled>;
  settled: boolean;
}

/** Pages from `first` to `last` in order, up to the window's size of them in flight while the reader
 * waits, one fewer while it works on the page it took. */
export class ReadAhead {
  private readonly queue: Fetching[] = [];
  private next: number;

  constructor(
    private readonly fetch: (page: number) => Promise<RawPage>,
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
  async take(): Promise<{ page: number; raw: RawPage } | undefined> {
    this.fill(0);
    const head = this.queue.shift();
    if (!head) return undefined;
    if (!head.settled) {
      this.window.grow();
      this.fill(1);
    }
    const settled = await head.result;
    if (!settled.ok) throw settled.error;
    return { page: head.page, raw: settled.raw };
  }

  /** Waits for the pages still in flight (after an abort, so that nothing outlives the reading). */
  async drain(): Promise<void> {
    await Promise.all(this.queue.map((fetching) => fetching.result));
  }

  /** Requests pages until the window is full; `taken`: pages already out of the queue yet in flight. */
  private fill(taken: number): void {
    while (this.queue.length + taken < this.window.size && this.next <= this.last) {
      const fetching: Fetching = {
        page: this.next,
        settled: false,
        result: this.fetch(this.next).then(
          (raw): Settled => ({ ok: true, raw }),
          (error: unknown): Settled => ({ ok: false, error }),
        ),
      };
      void fetching.result.then(() => {
        fetching.settled = true;
      });
      this.queue.push(fetching);
      this.next += 1;
    }
  }
}
