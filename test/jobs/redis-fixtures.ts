import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { deleteKeysUnder } from '../../bench/redis-keys.js';

/**
 * The Redis the tests use, found once for the run by test/global-setup.ts: TEST_REDIS_URL or the machine's,
 * on a database of the tests' own, or a redis-server started for the run. When there is none, every file
 * that needs Redis fails at once with the sentence saying what to install, instead of crawling through
 * its timeouts; the others run.
 */
function testRedisUrl(): string {
  const address = inject('testRedis');
  if ('missing' in address) throw new Error(address.missing);
  return address.url;
}

export const TEST_REDIS_URL = testRedisUrl();

/** A key prefix no other test file uses, so that files run in parallel against one Redis. */
export function uniquePrefix(name: string): string {
  return `shop-sync-test-${name}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix` (queue, schedulers, tokens) once a test file is done. */
export async function deletePrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    await deleteKeysUnder(redis, prefix);
  } finally {
    await redis.quit();
  }
}
