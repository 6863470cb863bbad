import { once } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { Command } from 'commander';
import { startWorker } from '../../../jobs/start-worker.js';
import { commandContext } from '../context.js';
import type { CliIO } from '../io.js';

/**
 * How far V8 lets the old generation grow past what its last full collection kept, in per cent. A
 * worker's many syncs at once allocate fast, and V8 then lets that generation reach up to four times
 * its live size before collecting it: 30 MiB live became 120 MiB resident. Twice bounds the peak at
 * the same CPU (docs/benchmark.md: 100 shops x 2,000 items, peak RSS 274 MiB before, 224 after, CPU a
 * shop 136 against 135 ms). Read by V8 at each collection, so it applies from start-up on; a worker
 * only, where the syncs of a fleet meet.
 */
const OLD_GENERATION_GROWTH_PERCENT = 100;

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
