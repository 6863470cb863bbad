import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeFamilies } from '../../../jobs/ops/ops-server.js';
import { groupOf, syncQueueName } from '../../../jobs/queue.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../redis-fixtures.js';

const prefix = uniquePrefix('merge-families');
let redis: Redis;
let queues: Queue[];
const NORTH = syncQueueName(groupOf(['north']));
const SOUTH = syncQueueName(groupOf(['south']));

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  queues = [NORTH, SOUTH].map((name) => new Queue(name, { connection: redis, prefix }));
  const [north, south] = queues as [Queue, Queue];
  // Different counts in each queue, so that each queue's samples are told apart.
  await north.add('sync', { shop: 'north' });
  await north.add('sync', { shop: 'north' });
  const worker = new Worker(SOUTH, async () => 'done', { connection: redis, prefix });
  const completed = new Promise((resolve) => worker.once('completed', resolve));
  await south.add('sync', { shop: 'south' });
  await completed;
  await worker.close();
});
afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close()));
  await redis.quit();
  await deletePrefix(prefix);
});

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

describe('mergeFamilies', () => {
  it("gives each metric family of several queues' exposition once, with every queue's samples under it", async () => {
    const texts = await Promise.all(queues.map((queue) => queue.exportPrometheusMetrics()));
    const merged = mergeFamilies(texts);
    const mergedLines = lines(merged);

    const types = mergedLines.filter((line) => line.startsWith('# TYPE '));
    const inputTypes = new Set(texts.flatMap(lines).filter((line) => line.startsWith('# TYPE ')));
    expect(types.length).toBeGreaterThan(0);
    expect(types).toHaveLength(inputTypes.size);
    expect(new Set(types)).toEqual(inputTypes);
    const helps = mergedLines.filter((line) => line.startsWith('# HELP '));
    expect(new Set(helps).size).toBe(helps.length);

    const samples = texts.flatMap(lines).filter((line) => !line.startsWith('#'));
    expect(mergedLines.filter((line) => !line.startsWith('#')).sort()).toEqual([...samples].sort());
    expect(merged).toContain(`\nbullmq_job_count{queue="${NORTH}", state="waiting"} 2\n`);
    expect(merged).toContain(`\nbullmq_job_count{queue="${SOUTH}", state="completed"} 1\n`);

    // Each sample sits in its own family: after its family's TYPE line, before the next family's.
    let family = '';
    for (const line of mergedLines) {
      const type = /^# TYPE (\S+)/.exec(line);
      if (type) family = type[1] as string;
      else if (!line.startsWith('#'))
        expect(line.startsWith(`${family}{`) || line.startsWith(`${family} `)).toBe(true);
    }
  });
});
