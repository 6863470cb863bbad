import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueSync, ShopQueues } from '../../jobs/queue.js';
import { type Triggered, waitForSyncs } from '../../jobs/trigger-syncs.js';
import { silentLogger } from '../../src/log.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

/** The states `trigger --wait` reads in its one pipeline, each set by hand in a queue no worker reads. */
const GROUP = 'group';
let redis: Redis;
let queues: ShopQueues;
let prefix: string;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
});
beforeEach(() => {
  prefix = uniquePrefix('wait');
  queues = new ShopQueues(redis, prefix, silentLogger());
});
afterEach(async () => {
  await queues.close();
  await deletePrefix(prefix);
});

async function queued(shop: string): Promise<Triggered> {
  const { job } = await enqueueSync(queues.syncOf(GROUP), shop);
  return { shop, job: String(job.id), deduplicated: false, group: GROUP };
}

/** Takes the job as a worker would and ends it: completed with `summary`, or failed with `reason`. */
async function finish(one: Triggered, end: { summary: object } | { reason: string }): Promise<void> {
  const queue = queues.syncOf(GROUP);
  const token = 'test-token';
  const taker = new Worker(queue.name, null, { connection: redis.duplicate(), prefix });
  try {
    const job = await taker.getNextJob(token);
    if (!job || job.id !== one.job) throw new Error(`expected job ${one.job}, got ${job?.id}`);
    if ('summary' in end) await job.moveToCompleted(end.summary, token, false);
    else {
      job.opts.attempts = 1;
      await job.moveToFailed(new Error(end.reason), token, false);
    }
  } finally {
    await taker.close();
  }
}

describe('waitForSyncs', () => {
  it('reports a completed sync, a failed one and one gone from the queue, each once, in the order given', async () => {
    const done = await queued('a');
    await finish(done, { summary: { shop: 'a', status: 'complete' } });
    const failed = await queued('b');
    await finish(failed, { reason: 'the marketplace refused the credentials' });
    const gone = await queued('c');
    await queues.syncOf(GROUP).remove(gone.job);
    const heard: string[] = [];
    const results = await waitForSyncs(queues, [done, failed, gone], {
      signal: new AbortController().signal,
      onResult: (result) => heard.push(result.shop),
    });
    expect(heard).toEqual(['a', 'b', 'c']);
    expect(results[0]).toMatchObject({ shop: 'a', summary: { shop: 'a', status: 'complete' } });
    expect((results[1] as { error: Error }).error.message).toBe(
      `The sync of shop b (job ${failed.job}) failed: the marketplace refused the credentials`,
    );
    expect((results[2] as { error: Error }).error.message).toBe(
      `The sync of shop c (job ${gone.job}) disappeared from the queue.`,
    );
  });

  it('waits for a sync that has not finished, and says it goes on when the wait times out', async () => {
    const waiting = await queued('a');
    await expect(
      waitForSyncs(queues, [waiting], { signal: new AbortController().signal, timeoutMs: 300 }),
    ).rejects.toThrow(`the sync of shop a (job ${waiting.job}) goes on in the worker`);
  });
});
