import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from './jobs/redis-fixtures.js';
import { testRedis } from './test-redis.js';

/** Nothing listens on port 1 of loopback: a connection there is refused at once. */
const SILENT_REDIS_URL = 'redis://127.0.0.1:1/9';

/** PONG, or why the connection failed. */
async function ping(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let refused: Error | undefined;
  redis.on('error', (error: Error) => {
    refused = error;
  });
  try {
    await redis.connect();
    return await redis.ping();
  } catch (error) {
    return (refused ?? (error as Error)).message;
  } finally {
    redis.disconnect();
  }
}

describe("the tests' Redis (test/global-setup.ts)", () => {
  it('is the given one when it answers, and stopping it leaves that Redis running', async () => {
    const redis = await testRedis(TEST_REDIS_URL);
    expect(redis).toMatchObject({ url: TEST_REDIS_URL });
    await redis.stop();
    expect(await ping(TEST_REDIS_URL)).toBe('PONG');
  });

  it("is a redis-server of the run's own on database 9 when the given one does not answer, gone once stopped", async () => {
    // What it says goes to the caller, not to the stderr of a passing run.
    const said: string[] = [];
    const redis = await testRedis(SILENT_REDIS_URL, 'redis-server', (line) => said.push(line));
    if (!('url' in redis)) throw new Error(redis.missing);
    expect(said).toEqual([
      `tests: no Redis at ${SILENT_REDIS_URL} (connect ECONNREFUSED 127.0.0.1:1); started redis-server at ${redis.url}\n`,
    ]);
    expect(redis.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+\/9$/);
    expect(redis.url).not.toBe(SILENT_REDIS_URL);
    expect(await ping(redis.url)).toBe('PONG');
    await redis.stop();
    expect(await ping(redis.url)).toMatch(/ECONNREFUSED/);
  });

  it('fails naming the started server when it stops before it answers', async () => {
    await expect(testRedis(SILENT_REDIS_URL, 'false', () => undefined)).rejects.toThrow(
      /^The tests' false did not answer at redis:\/\/127\.0\.0\.1:\d+\/9 \(connect ECONNREFUSED /,
    );
  });

  it('is one sentence saying what to install when none answers and no redis-server can be started', async () => {
    const redis = await testRedis('redis://:s3cret@127.0.0.1:1/9', 'no-such-redis-server');
    expect(redis).toEqual({
      missing:
        'The Redis tests need a Redis: none answers at redis://:***@127.0.0.1:1/9 (connect ECONNREFUSED 127.0.0.1:1) and no-such-redis-server is not on PATH to start one; install Redis (Debian: apt-get install redis-server) or set TEST_REDIS_URL to one that answers.',
      stop: expect.any(Function),
    });
  });
});
