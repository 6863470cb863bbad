import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { StoredToken, TokenStore } from '../src/api/auth/token-store.js';
import type { Logger } from '../src/log.js';
import { TokenCipher } from './token-cipher.js';

export interface RedisTokenStoreOptions {
  /** Namespaces the keys, like the queue's prefix: deployments sharing a Redis stay apart. */
  readonly prefix: string;
  readonly shop: string;
  /** The shop's client secret: the token's key at rest is derived from it (see TokenCipher). */
  readonly clientSecret: string;
  /**
   * How long the renewal lock is held at most. A holder that dies frees it after this long; a renewal
   * (a token request with its retries) that takes longer has the lock extended while it runs.
   */
  readonly lockTtlMs?: number;
  readonly logger: Logger;
}

const DEFAULT_LOCK_TTL_MS = 30_000;
/**
 * How long a token outlives its renewal time in Redis: its refresh token stays useful a while after the
 * access token is due, and a shop no worker syncs any more must not keep a key for ever.
 */
export const TOKEN_KEY_GRACE_MS = 24 * 3600_000;
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 500;

/** Deletes the lock only if it still holds our token: never release a lock another process took over. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

/** JSON has no Infinity: a token without a lifetime is stored with `renewAt: null`. */
const StoredJson = z.object({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1).nullable(),
  renewAt: z.number().nullable(),
  grant: z.enum(['password', 'refresh_token']),
});

/**
 * A shop's token in Redis, shared by every worker process syncing that shop, so that only one of them
 * renews it and none spends a refresh token another has already rotated. Renewals run under a Redis
 * lock (SET NX PX with a random value, released by compare-and-delete); waiters poll with backoff.
 */
export class RedisTokenStore implements TokenStore {
  private readonly tokenKey: string;
  private readonly lockKey: string;
  private readonly lockTtlMs: number;
  private readonly logger: Logger;
  private readonly cipher: TokenCipher;

  constructor(
    private readonly redis: Redis,
    options: RedisTokenStoreOptions,
  ) {
    this.tokenKey = `${options.prefix}:token:${options.shop}`;
    this.lockKey = `${options.prefix}:token-lock:${options.shop}`;
    this.lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS;
    this.logger = options.logger;
    this.cipher = new TokenCipher(options.clientSecret, options.shop, this.tokenKey);
  }

  async get(): Promise<StoredToken | undefined> {
    const raw = await this.redis.get(this.tokenKey);
    if (raw === null) return undefined;
    // Something unreadable under our key is treated as no token: the next request logs in again.
    const opened = this.cipher.open(raw);
    if (opened === undefined) {
      this.logger.info(
        'the stored token cannot be decrypted (the client secret changed, or it was stored in clear): logging in again',
      );
      return undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(opened);
    } catch {
      return undefined;
    }
    const parsed = StoredJson.safeParse(json);
    if (!parsed.success) return undefined;
    const { renewAt, ...token } = parsed.data;
    return { ...token, renewAt: renewAt ?? Number.POSITIVE_INFINITY };
  }

  async set(token: StoredToken): Promise<void> {
    const renewAt = Number.isFinite(token.renewAt) ? token.renewAt : null;
    const ttlMs = Math.max(renewAt ?? Date.now(), Date.now()) - Date.now() + TOKEN_KEY_GRACE_MS;
    const sealed = this.cipher.seal(JSON.stringify({ ...token, renewAt }));
    await this.redis.set(this.tokenKey, sealed, 'PX', ttlMs);
  }

  /** Waiting for the lock ends with `signal`'s reason when it is aborted (the worker stops, the budget runs out). */
  async withLock<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const owner = randomBytes(16).toString('hex');
    await this.acquire(owner, signal);
    const extender = setInterval(() => {
      this.redis.eval(EXTEND, 1, this.lockKey, owner, this.lockTtlMs).catch((error: unknown) => {
        // Losing the lock only risks one refresh token spent twice, which ends in a fresh login.
        this.logger.warn({ err: error }, 'could not extend the token renewal lock');
      });
    }, this.lockTtlMs / 3);
    try {
      return await fn();
    } finally {
      clearInterval(extender);
      await this.redis.eval(RELEASE, 1, this.lockKey, owner);
    }
  }

  private async acquire(owner: string, signal: AbortSignal | undefined): Promise<void> {
    let wait = FIRST_POLL_MS;
    while ((await this.redis.set(this.lockKey, owner, 'PX', this.lockTtlMs, 'NX')) !== 'OK') {
      signal?.throwIfAborted();
      await sleep(wait * (0.5 + Math.random()), undefined, { signal }).catch(() => {
        throw signal?.reason;
      });
      wait = Math.min(wait * 2, MAX_POLL_MS);
    }
  }
}
