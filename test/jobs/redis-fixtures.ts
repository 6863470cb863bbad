import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * The Redis the tests use: TEST_REDIS_URL, or a local one on a database of the tests' own (never 0,
 * where a developer's own data may live).
 */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/9';

const ANSWER_WITHIN_MS = 2_000;

/**
 * Throws one sentence at once when the tests' Redis does not answer, instead of letting every test
 * crawl through its timeouts. Call it in `beforeAll` of each file that needs Redis.
 */
export async function requireRedis(): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    connectTimeout: ANSWER_WITHIN_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let refused: Error | undefined;
  redis.on('error', (error: Error) => {
    refused = error;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `These tests need Redis at ${TEST_REDIS_URL} (${(refused ?? (error as Error)).message}): start one with \`redis-server\` or \`docker run -p 6379:6379 redis:7\`, or set TEST_REDIS_URL.`,
    );
  } finally {
    redis.disconnect();
  }
}

/** A key prefix no other test file uses, so that files run in parallel against one Redis. */
export function uniquePrefix(name: string): string {
  return `shop-sync-test-${name}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix` (queue, schedulers, tokens) once a test file is done. */
export async function deletePrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
