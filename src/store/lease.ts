import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { SyncBusyError } from '../errors.js';
import { type Store, storeError } from './open.js';
import { lazily } from './per-connection.js';

/**
 * One sync per shop, whichever processes or machines start them: the holder of the store's single
 * lease row may write runs. The holder renews it while it works; a holder that dies stops renewing
 * and its lease runs out, or, on the same host, is taken over at once because its process is gone.
 */
export interface LeaseOptions {
  /** How long the lease lasts without renewal. */
  ttlMs: number;
  /** How often the holder renews it; well under `ttlMs`. */
  renewEveryMs: number;
  /**
   * Who the work belongs to beyond this process (the worker's job id). A lease recorded for the same
   * owner by another process is taken over at once: the work came back to us, so its old holder lost it
   * (a restarted container has a new hostname, so its dead pid cannot be checked).
   */
  owner?: string;
}

export const DEFAULT_LEASE: LeaseOptions = { ttlMs: 60_000, renewEveryMs: 10_000 };

export interface Lease {
  readonly holder: string;
  /** Throws SyncBusyError when another process has taken the lease over (this one stalled past its TTL). */
  assertHeld(): void;
  release(): void;
}

interface LeaseRow {
  holder: string;
  pid: number;
  host: string;
  since: string;
  expires_at: number;
}

/**
 * Takes the shop's lease or throws SyncBusyError naming the holder. `onRenewError` hears of a renewal
 * that failed in the background (the next `assertHeld` tries again and throws if it still fails).
 */
export function acquireLease(
  store: Store,
  shop: string,
  onRenewError: (error: unknown) => void,
  options: LeaseOptions = DEFAULT_LEASE,
): Lease {
  // The owner is kept in the holder's text (`owner/uuid`): holders stay unique per process.
  const holder = options.owner === undefined ? randomUUID() : `${options.owner}/${randomUUID()}`;
  const host = hostname();
  const { db } = store;
  db.transaction(() => {
    const current = db.prepare('SELECT * FROM lease WHERE slot = 1').get() as LeaseRow | undefined;
    const stale = current && (holderIsGone(current, host) || sameOwner(current, options.owner));
    if (current && current.expires_at > Date.now() && !stale) {
      throw new SyncBusyError(
        `Another sync of shop ${shop} is running (pid ${current.pid} on host ${current.host}, since ${current.since}).`,
      );
    }
    db.prepare(
      `INSERT OR REPLACE INTO lease (slot, holder, pid, host, since, expires_at) VALUES (1, ?, ?, ?, ?, ?)`,
    ).run(holder, process.pid, host, new Date().toISOString(), Date.now() + options.ttlMs);
  }).immediate();

  let lost = false;
  const renewal = lazily(() => db.prepare('UPDATE lease SET expires_at = ? WHERE slot = 1 AND holder = ?'));
  const renew = () => {
    if (!db.open || lost) return;
    lost = renewal().run(Date.now() + options.ttlMs, holder).changes === 0;
  };
  const timer = setInterval(() => {
    try {
      renew();
    } catch (error) {
      onRenewError(error);
    }
  }, options.renewEveryMs);
  timer.unref();

  return {
    holder,
    assertHeld() {
      renew();
      if (lost) {
        throw new SyncBusyError(
          `The sync of shop ${shop} lost its lease to another process after stalling for over ${options.ttlMs / 1000}s.`,
        );
      }
    },
    release() {
      clearInterval(timer);
      try {
        if (db.open) db.prepare('DELETE FROM lease WHERE slot = 1 AND holder = ?').run(holder);
      } catch (error) {
        // The lease lapses by itself after its TTL; what the user needs is which file failed and why.
        throw storeError(
          `Cannot release the lease of shop ${shop} in store ${store.path}`,
          store.path,
          error,
        );
      }
    },
  };
}

function sameOwner(row: LeaseRow, owner: string | undefined): boolean {
  return owner !== undefined && row.holder.startsWith(`${owner}/`);
}

/**
 * A holder on this host whose process no longer exists will never renew: its lease is stale now. A
 * killed process its parent has not reaped yet (a zombie) still answers signals, so /proc decides first.
 */
function holderIsGone(row: LeaseRow, host: string): boolean {
  if (row.host !== host || row.pid === process.pid) return false;
  const state = processState(row.pid);
  if (state !== undefined) return state === 'Z' || state === 'X';
  try {
    process.kill(row.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The state letter of /proc/<pid>/stat (`R`, `S`, `Z`...), `X` when there is no such process, or undefined without /proc. */
function processState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    return existsSync('/proc/self/stat') ? 'X' : undefined;
  }
  // The command name in parentheses may contain spaces and parentheses: the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}
