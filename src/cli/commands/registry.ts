import type { Command } from 'commander';
import type { CliIO } from '../io.js';
import { checkCommand } from './check.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { exportCommand } from './export.js';
import { pruneCommand } from './prune.js';
import { runsCommand } from './runs.js';
import { simulateCommand } from './simulate.js';
import { syncCommand } from './sync.js';

type CommandFactory = (io: CliIO) => Command;

/**
 * Commands that need BullMQ and Redis, loaded only when named: every other command starts without
 * loading them. `summary` and `usage` stand in for the description and options in the command list until
 * then (a test holds `usage` to what the loaded command has).
 */
export const REDIS_COMMANDS: Readonly<
  Record<string, { summary: string; usage: string; load: () => Promise<CommandFactory> }>
> = {
  worker: {
    summary: 'Run scheduled and on-demand syncs through BullMQ until SIGTERM or SIGINT (needs Redis).',
    usage: '',
    load: async () => (await import('./worker.js')).workerCommand,
  },
  trigger: {
    summary: 'Queue a sync for the worker; with --wait, wait for it and report like sync (needs Redis).',
    usage: '[options]',
    load: async () => (await import('./trigger.js')).triggerCommand,
  },
  status: {
    summary: "The queue, each shop's schedule and next run, and its last complete run (needs Redis).",
    usage: '[options]',
    load: async () => (await import('./status.js')).statusCommand,
  },
};

/** Every command that needs no Redis, in the order `--help` lists them (the Redis ones follow `export`). */
export function commandList(io: CliIO): { before: Command[]; after: Command[] } {
  return {
    before: [
      syncCommand(io),
      checkCommand(io),
      runsCommand(io),
      diffCommand(io),
      pruneCommand(io),
      exportCommand(io),
    ],
    after: [demoCommand(io), simulateCommand(io)],
  };
}
