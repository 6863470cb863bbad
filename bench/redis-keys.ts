import type { Redis } from 'ioredis';

/**
 * Deletes every key under `prefix` (queues, schedulers, tokens and their locks): what a fleet run or a test
 * file leaves in a Redis it shares. Obliterating the queues alone would leave the tokens.
 */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
