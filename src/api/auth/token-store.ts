/** A bearer token as shop-sync keeps it between requests (and, with a shared store, between processes). */
export interface StoredToken {
  readonly accessToken: string;
  /** Absent for grants that issue none; rotated by every refresh. */
  readonly refreshToken: string | null;
  /** Epoch milliseconds from which the token is renewed before use (about 90 % of its lifetime). */
  readonly renewAt: number;
  /** How it was obtained: a refreshed token the API refuses shows that refreshing leads nowhere. */
  readonly grant: 'password' | 'refresh_token';
}

/**
 * Where the current token lives. Several processes syncing one shop share a store so that they never
 * race to spend the same rotated refresh token: renewals run inside `withLock` and re-read the store first.
 */
export interface TokenStore {
  get(): Promise<StoredToken | undefined>;
  set(token: StoredToken): Promise<void>;
  /** Runs `fn` while no other renewal of this store runs; `signal` gives up the wait (rejecting with its reason). */
  withLock<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** The token store of a single process (a one-off `sync`). */
export class MemoryTokenStore implements TokenStore {
  private token: StoredToken | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  async get(): Promise<StoredToken | undefined> {
    return this.token;
  }

  async set(token: StoredToken): Promise<void> {
    this.token = token;
  }

  withLock<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let started = false;
    // A caller that gave up waiting does not run when its turn comes; once running, `fn` answers for itself.
    const turn = () => {
      signal?.throwIfAborted();
      started = true;
      return fn();
    };
    const run = this.tail.then(turn, turn);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    if (!signal) return run;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!started) reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}
