import type { AdaptiveWindow, Settled } from './driver.js';
import type { RawPage } from './page-body.js';

interface Fetching {
  readonly page: number;
  readonly result: Promise<Settled<RawPage>>;
  settled: boolean;
}

/** Pages from `first` to `last` in order (page-by-page reading; windows go through `drive`), up to the window's size of them in flight while the reader
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
    return { page: head.page, raw: settled.value };
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
          (value): Settled<RawPage> => ({ ok: true, value }),
          (error: unknown): Settled<RawPage> => ({ ok: false, error }),
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
