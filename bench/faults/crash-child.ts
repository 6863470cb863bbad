/**
 * A sync that kills itself with SIGKILL at the nth occurrence of one sync point (`CRASH_AT=point:n`), as a
 * power cut or the OOM killer would: no handler runs, nothing is flushed. Configured like the CLI, from the
 * environment. Prints the summary when the point was never reached, so the harness can tell.
 */
import { findShop, loadConfig } from '../../src/config/app-config.js';
import { createLogger } from '../../src/log.js';
import { runSync, type SyncPoint } from '../../src/sync/index.js';

const [point, nth] = (process.env.CRASH_AT ?? '').split(':') as [SyncPoint, string | undefined];
const target = Number(nth ?? '1');
let reached = 0;

const config = loadConfig(process.env);
const summary = await runSync(findShop(config, undefined), {
  config,
  log: createLogger(config.logLevel),
  onPoint: (at) => {
    if (at === point && ++reached === target) process.kill(process.pid, 'SIGKILL');
  },
});
process.stdout.write(`${JSON.stringify(summary)}\n`);
