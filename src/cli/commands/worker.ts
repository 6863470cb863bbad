import { once } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { Command } from 'commander';
import { startWorker } from '../../../jobs/start-worker.js';
import { commandContext } from '../context.js';
import type { CliIO } from '../io.js';

/**
 * How far V8 lets the old generation grow past what its last full collection kept, in per cent. A
 * worker's many syncs at once allocate fast, and V8 then lets that generation reach up to four times
 * its live size before collecting it: 30 MiB live became 120 MiB resident. Half as much again bounds
 * the peak (docs/benchmark.md: 1,000 shops x 20 items, peak RSS 290-304 MiB with V8's own growth,
 * 256-259 at twice, 240-247 at half as much again; 100 shops x 2,000 items, 288 → 207 MiB, CPU a shop
 * within the noise). Read by V8 at each collection, so it applies from start-up on; a worker only,
 * where the syncs of a fleet meet.
 */
const OLD_GENERATION_GROWTH_PERCENT = 50;

export function workerCommand(io: CliIO): Command {
  return new Command('worker')
    .description(
      'Run scheduled and on-demand syncs through BullMQ (Redis: REDIS_URL) until SIGTERM or SIGINT; running syncs get SHUTDOWN_GRACE_SECONDS to stop.',
    )
    .action(async () => {
      setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`);
      const { config, log } = commandContext(io);
      const worker = await startWorker(config, log);
      if (!io.signal.aborted) await once(io.signal, 'abort');
      await worker.close();
    });
}
