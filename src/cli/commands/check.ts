import { Command } from 'commander';
import type { CheckFlags } from '../actions/check.js';
import { shopOptions } from '../each-shop.js';
import type { CliIO } from '../io.js';

export function checkCommand(io: CliIO): Command {
  const command = new Command('check').description(
    'Log in and read the first page, to prove the settings and credentials of a shop; writes nothing.',
  );
  for (const option of shopOptions()) command.addOption(option);
  return (
    command
      .option('--json', 'print one JSON object per shop, one a line')
      // What it does is loaded when it runs: `--help` and the other commands do not compile it.
      .action(async (flags: CheckFlags) => (await import('../actions/check.js')).checkAction(io, flags))
  );
}
