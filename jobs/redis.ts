import { Redis } from 'ioredis';
import { QueueUnavailableError } from './queue-errors.js';

/** How long a command waits for Redis to answer at start-up before it gives up with a clear sentence. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const MAX_RECONNECT_DELAY_MS = 5_000;

/**
 * A connected ioredis client for BullMQ and the token store. `maxRetriesPerRequest: null` because
 * BullMQ's blocking commands must wait through reconnections instead of failing after a few tries.
 * The first connection is checked within `timeoutMs`, so a Redis that does not answer ends the command
 * with one sentence naming REDIS_URL instead of an endless reconnect loop.
 */
export async function connectRedis(url: string, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<Redis> {
  let checking = true;
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: null,
    connectTimeout: timeoutMs,
    // No reconnecting during the first check (it would keep a failed command alive); later, for ever.
    retryStrategy: (times) => (checking ? null : Math.min(times * 200, MAX_RECONNECT_DELAY_MS)),
  });
  let lastError: Error | undefined;
  const remember = (error: Error) => {
    lastError = error;
  };
  redis.on('error', remember);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([redis.connect().then(() => redis.ping()), timeout]);
  } catch (error) {
    redis.disconnect();
    const cause = lastError ?? (error instanceof Error ? error : new Error(String(error)));
    throw new QueueUnavailableError(
      `Redis at ${displayRedisUrl(url)} (REDIS_URL) does not answer: ${cause.message}.`,
      { cause },
    );
  } finally {
    clearTimeout(timer);
    redis.off('error', remember);
    checking = false;
  }
  return redis;
}

/** The URL without its password: REDIS_URL may carry one, and messages must not. */
export function displayRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured address';
  }
}
