import { Command } from 'commander';
import type { RunsFlags } from '../actions/runs.js';
import type { CliIO } from '../io.js';

export function runsCommand(io: CliIO): Command {
  return (
    new Command('runs')
      .description('List the runs (snapshots) of a shop, oldest first, with why a run did not complete.')
      .option('--shop <name>', 'the shop (default: the configured one)')
      .option('--json', 'print a JSON array')
      // What it does is loaded when it runs: `--help` and the other commands do not compile it.
      .action(async (flags: RunsFlags) => (await import('../actions/runs.js')).runsAction(io, flags))
  );
}
