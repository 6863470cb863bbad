import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

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
