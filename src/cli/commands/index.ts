import type { Command } from 'commander';
import type { CliIO } from '../io.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { exportCommand } from './export.js';
import { pruneCommand } from './prune.js';
import { runsCommand } from './runs.js';
import { simulateCommand } from './simulate.js';
import { statusCommand } from './status.js';
import { syncCommand } from './sync.js';
import { triggerCommand } from './trigger.js';
import { workerCommand } from './worker.js';

/** Every command of the CLI, in the order `--help` lists them. */
export function commandList(io: CliIO): Command[] {
  return [
    syncCommand(io),
    runsCommand(io),
    diffCommand(io),
    pruneCommand(io),
    exportCommand(io),
    workerCommand(io),
    triggerCommand(io),
    statusCommand(io),
    demoCommand(io),
    simulateCommand(io),
  ];
}
