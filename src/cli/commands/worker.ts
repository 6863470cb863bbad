import { once } from 'node:events';
import { Command } from 'commander';
import { startWorker } from '../../../jobs/start-worker.js';
import { commandContext } from '../context.js';
import type { CliIO } from '../io.js';

export function workerCommand(io: CliIO): Command {
  return new Command('worker')
    .description(
      'Run scheduled and on-demand syncs through BullMQ (Redis: REDIS_URL) until SIGTERM or SIGINT; running syncs get SHUTDOWN_GRACE_SECONDS to stop.',
    )
    .action(async () => {
      const { config, log } = commandContext(io);
      const worker = await startWorker(config, log);
      if (!io.signal.aborted) await once(io.signal, 'abort');
      await worker.close();
    });
}
