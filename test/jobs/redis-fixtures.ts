import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
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

/**
 * Calls `seen` with the arguments of every command Redis serves (any database) until the returned
 * `stop`, which first waits for a command of its own: whatever was sent before `stop` has been seen.
 * MONITOR on a plain socket: ioredis's takes a line that arrives with MONITOR's OK for a reply to a
 * command it never sent, and fails ("Command queue state error") on a busy server.
 */
export async function monitorRedis(seen: (args: string[]) => void): Promise<{ stop(): Promise<void> }> {
  const { hostname, port } = new URL(TEST_REDIS_URL);
  const socket = connect(Number(port || 6379), hostname);
  const sentinel = `shop-sync-test-monitor-${randomBytes(4).toString('hex')}`;
  let rest = '';
  let sentinelSeen: () => void = () => undefined;
  const started = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      rest += chunk;
      const lines = rest.split('\r\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '+OK') resolve();
        const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1] as string);
        if (args[1] === sentinel) sentinelSeen();
        else if (args.length > 0) seen(args);
      }
    });
  });
  socket.write('MONITOR\r\n');
  await started;
  return {
    async stop() {
      const reached = new Promise<void>((resolve) => {
        sentinelSeen = resolve;
      });
      const redis = new Redis(TEST_REDIS_URL);
      try {
        await redis.get(sentinel);
        await reached;
      } finally {
        await redis.quit();
        socket.destroy();
      }
    },
  };
}
