import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthCheck } from '../../jobs/ops/health.js';
import { OpsMetrics } from '../../jobs/ops/metrics.js';
import { type OpsServer, startOpsServer } from '../../jobs/ops/ops-server.js';
import { syncQueueName } from '../../jobs/queue.js';
import { loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { freePort } from '../jobs/ops/ops-fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { tempDir } from '../store/fixtures.js';

const run = promisify(execFile);

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
const instructions = readFileSync('Dockerfile', 'utf8')
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'));
const runtimeStage = instructions.slice(instructions.findLastIndex((line) => line.startsWith('FROM ')));

/** The HEALTHCHECK's command (exec form), which Docker runs inside the container. */
function healthcheckCommand(): string[] {
  const line = runtimeStage.find((l) => l.startsWith('HEALTHCHECK '));
  const exec = line?.slice(line.indexOf(' CMD ') + ' CMD '.length);
  return JSON.parse(exec ?? '[]') as string[];
}

/** Runs the probe as Docker would, with the container's OPS_PORT; its exit status. */
async function probe(port: number): Promise<number> {
  const [program, ...args] = healthcheckCommand();
  expect(program).toBe('node');
  try {
    await run(process.execPath, args, { env: { PATH: process.env.PATH ?? '', OPS_PORT: String(port) } });
    return 0;
  } catch (error) {
    return (error as { code: number }).code;
  }
}

describe('the Dockerfile', () => {
  let redis: Redis;
  let queue: Queue;
  let worker: Worker;
  let server: OpsServer;
  const prefix = uniquePrefix('healthcheck');

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queue = new Queue(syncQueueName('north'), { connection: redis, prefix });
    worker = new Worker(syncQueueName('north'), async () => 'done', { connection: redis, prefix });
    await worker.waitUntilReady();
    const config = loadConfig({ SHOP_NAME: 'north' });
    const health = new HealthCheck(config, redis, [worker]);
    server = await startOpsServer(0, {
      host: '127.0.0.1',
      health,
      metrics: new OpsMetrics(config),
      queues: [queue],
      log: silentLogger(),
    });
  });
  afterAll(async () => {
    await server.close();
    await worker.close();
    await queue.close();
    await redis.quit();
    await deletePrefix(prefix);
  });

  it('probes /healthz with node: healthy while it answers 200, unhealthy on 503 or no answer', async () => {
    expect(await probe(server.port)).toBe(0);
    await worker.pause();
    expect(await probe(server.port)).toBe(1);
    worker.resume();
    expect(await probe(await freePort())).toBe(1);
  });

  it('runs node under tini, as the unprivileged user, from dist/ with production dependencies only', () => {
    expect(runtimeStage).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/shop-sync.js"]');
    expect(runtimeStage).toContain('USER node');
    const copies = runtimeStage.filter((line) => line.startsWith('COPY '));
    expect(copies).toContain('COPY --from=production-deps /app/node_modules ./node_modules');
    expect(copies.some((line) => / (src|jobs|test)\b/.test(line))).toBe(false);
    expect(instructions).toContain('RUN npm ci --omit=dev --no-audit --no-fund');
  });
});

describe("npm's prepare (bin/prepare.js)", () => {
  let temp: ReturnType<typeof tempDir>;
  beforeAll(() => {
    temp = tempDir('shop-sync-prepare-');
    mkdirSync(path.join(temp.dir, 'bin'));
    cpSync('bin/prepare.js', path.join(temp.dir, 'bin/prepare.js'));
    writeFileSync(path.join(temp.dir, 'package.json'), '{"type": "module"}');
  });
  afterAll(() => temp.cleanup());

  const prepare = (env: Record<string, string>) =>
    run(process.execPath, ['bin/prepare.js'], {
      cwd: temp.dir,
      env: { PATH: process.env.PATH ?? '', ...env },
    });

  it('fails in one sentence when dev dependencies are omitted and dist/ is not built', async () => {
    const failure = prepare({ npm_config_omit: 'dev' });
    await expect(failure).rejects.toMatchObject({
      code: 1,
      stderr:
        'shop-sync: cannot prepare a production install: dist/ is not built and dev dependencies (the TypeScript compiler and esbuild) are omitted; run `npm ci` with them to build it, or install where dist/ was built.\n',
    });
  });

  it('uses the built dist/ of a production install without compiling', async () => {
    mkdirSync(path.join(temp.dir, 'dist/bundle'), { recursive: true });
    writeFileSync(path.join(temp.dir, 'dist/bundle/main.js'), '');
    const productionInstalls: Record<string, string>[] = [
      { npm_config_omit: 'dev' },
      { NODE_ENV: 'production' },
    ];
    for (const env of productionInstalls) {
      await expect(prepare(env)).resolves.toMatchObject({ stdout: '', stderr: '' });
    }
  });
});
