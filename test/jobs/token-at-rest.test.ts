import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueSync, groupOf, syncQueueName } from '../../jobs/queue.js';
import { RedisTokenStore } from '../../jobs/redis-token-store.js';
import { startWorker } from '../../jobs/start-worker.js';
import { TokenCipher } from '../../jobs/token-cipher.js';
import { loadConfig } from '../../src/config/app-config.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { startSimulator } from '../../src/simulator/index.js';
import { simEnv, tempDir } from '../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

let redis: Redis;
beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(() => redis.quit());

/** Every string value under `prefix`, hashes' fields and values included (BullMQ keeps jobs in hashes). */
async function everyValue(prefix: string): Promise<string> {
  const values: string[] = [];
  for (const key of await redis.keys(`${prefix}:*`)) {
    const type = await redis.type(key);
    if (type === 'string') values.push((await redis.get(key)) ?? '');
    if (type === 'hash') values.push(...Object.entries(await redis.hgetall(key)).flat());
    if (type === 'list') values.push(...(await redis.lrange(key, 0, -1)));
    if (type === 'zset') values.push(...(await redis.zrange(key, 0, -1)));
  }
  return values.join('\n');
}

describe('tokens at rest in Redis', () => {
  it('are sealed: the same secret opens them, another secret, another shop or a clear value open nothing', () => {
    const cipher = new TokenCipher('secret', 'north', 'p:token:north');
    const sealed = cipher.seal('{"accessToken":"abc"}');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain('abc');
    expect(cipher.seal('{"accessToken":"abc"}')).not.toBe(sealed);
    expect(new TokenCipher('secret', 'north', 'p:token:north').open(sealed)).toBe('{"accessToken":"abc"}');
    expect(new TokenCipher('rotated', 'north', 'p:token:north').open(sealed)).toBeUndefined();
    expect(new TokenCipher('secret', 'south', 'p:token:north').open(sealed)).toBeUndefined();
    expect(new TokenCipher('secret', 'north', 'p:token:south').open(sealed)).toBeUndefined();
    expect(cipher.open('{"accessToken":"abc"}')).toBeUndefined();
    expect(cipher.open(`${sealed.slice(0, -4)}AAA=`)).toBeUndefined();
  });

  it('are unreadable in Redis after a sync, and a worker restarted with a new client secret logs in again', async () => {
    const prefix = uniquePrefix('at-rest');
    const temp = tempDir('shop-sync-at-rest-');
    const before = await startSimulator({ items: 60, seed: 5, credentials: { clientSecret: 'secret-one' } });
    const after = await startSimulator({ items: 60, seed: 5, credentials: { clientSecret: 'secret-two' } });
    const events = new QueueEvents(syncQueueName(groupOf(['shop'])), { connection: redis, prefix });
    try {
      await events.waitUntilReady();
      const env = (sim: typeof before) => ({
        ...simEnv(sim, temp.dir),
        REDIS_URL: TEST_REDIS_URL,
        SYNC_QUEUE_PREFIX: prefix,
        OPS_PORT: '0',
      });
      const first = await startWorker(loadConfig(env(before)), silentLogger());
      const one = await enqueueSync(first.queues.syncOf(groupOf(['shop'])), 'shop');
      await expect(one.job.waitUntilFinished(events)).resolves.toMatchObject({ status: 'complete' });
      await first.close();

      const stored = await redis.get(`${prefix}:token:shop`);
      expect(stored).toMatch(/^v1\./);
      const everything = await everyValue(prefix);
      const issued = before.issuedTokens();
      expect(issued.length).toBeGreaterThan(0);
      for (const token of issued) expect(everything).not.toContain(token);
      expect(everything).not.toMatch(/accessToken|refreshToken|secret-one/);

      // The marketplace's client secret was rotated: the worker comes back with the new one.
      const lines: string[] = [];
      const log = createLogger('info', { write: (line: string) => lines.push(line) });
      const second = await startWorker(loadConfig(env(after)), log);
      const two = await enqueueSync(second.queues.syncOf(groupOf(['shop'])), 'shop');
      await expect(two.job.waitUntilFinished(events)).resolves.toMatchObject({
        status: 'complete',
        items: 60,
      });
      await second.close();
      expect(after.stats().tokenRequests.password).toBe(1);
      expect(after.stats().tokenRefusals).toBe(0);
      expect(lines.some((line) => line.includes('the stored token cannot be decrypted'))).toBe(true);
      expect(lines.join('\n')).not.toMatch(/"level":50/);
    } finally {
      await events.close();
      await Promise.all([before.close(), after.close()]);
      await deletePrefix(prefix);
      temp.cleanup();
    }
  });
});

describe('a clear-text token left by an older version', () => {
  it('is no token: the next request logs in again', async () => {
    const prefix = uniquePrefix('at-rest-old');
    try {
      await redis.set(
        `${prefix}:token:shop`,
        JSON.stringify({ accessToken: 'a', refreshToken: 'r', renewAt: null, grant: 'password' }),
      );
      const store = new RedisTokenStore(redis, {
        prefix,
        shop: 'shop',
        clientSecret: 's',
        logger: silentLogger(),
      });
      expect(await store.get()).toBeUndefined();
    } finally {
      await deletePrefix(prefix);
    }
  });
});
