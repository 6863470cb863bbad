import { Pool } from 'undici';
import { InterruptedError } from '../../errors.js';

/** What undici fixes when it opens a pool: two clients that differ in any of these cannot share one. */
export interface PoolSettings {
  readonly connectMs: number;
  readonly headersMs: number;
  readonly bodyMs: number;
  readonly maxResponseBytes: number;
  /** Sockets one client may use at once: one per request it keeps in flight. */
  readonly connections: number;
}

/** How long an idle socket waits for the next request (less when the server's keep-alive hint says so). */
const KEEP_ALIVE_MS = 30_000;

/** A keep-alive pool to `origin` of at most `connections` sockets, by default one client's. */
export function openPool(origin: string, settings: PoolSettings, connections = settings.connections): Pool {
  return new Pool(origin, {
    connections,
    connectTimeout: settings.connectMs,
    headersTimeout: settings.headersMs,
    bodyTimeout: settings.bodyMs,
    maxResponseSize: settings.maxResponseBytes,
    keepAliveTimeout: KEEP_ALIVE_MS,
  });
}

/**
 * The keep-alive pools of a process that runs many syncs (the worker, `sync --all`), one per marketplace
 * origin and `PoolSettings`, shared by every sync: a sync finds the sockets the one before it left open
 * instead of connecting its own (against a real marketplace, a TLS handshake each) and destroying them
 * at its end. A client borrows a pool and never closes it; it aborts its own requests when it is closed,
 * so nothing of a sync that ended stays in a pool. The owner closes them all once, when no sync runs.
 */
export class SharedPools {
  private readonly pools = new Map<string, Pool>();
  private closing: Promise<void> | undefined;

  /** `syncs`: the most syncs the process runs at once; each may use its client's `connections` at once. */
  constructor(private readonly syncs: number) {}

  /** The pool to `origin` with `settings`, opened on first use, with room for `syncs` such clients at once. */
  borrow(origin: string, settings: PoolSettings): Pool {
    if (this.closing) {
      throw new InterruptedError(`No sync starts any more: the connections to ${origin} are closed.`);
    }
    const { connectMs, headersMs, bodyMs, maxResponseBytes, connections } = settings;
    const key = JSON.stringify([origin, connectMs, headersMs, bodyMs, maxResponseBytes, connections]);
    let pool = this.pools.get(key);
    if (pool === undefined) {
      pool = openPool(origin, settings, connections * this.syncs);
      this.pools.set(key, pool);
    }
    return pool;
  }

  /**
   * Closes every pool and its sockets, once; later calls wait for the same close. Called when no sync
   * runs any more: a request still in flight then belongs to a sync the worker abandoned when its
   * shutdown grace ran out, and is failed rather than waited for.
   */
  close(): Promise<void> {
    this.closing ??= Promise.all([...this.pools.values()].map((pool) => pool.destroy())).then(
      () => undefined,
    );
    return this.closing;
  }
}
