import path from 'node:path';
import { Command } from 'commander';
import type { Change } from '../../domain/change.js';
import { commandContext } from '../context.js';
import type { DemoResult } from '../demo-shop.js';
import { type CliIO, writeLine } from '../io.js';
import { wholeNumber } from './option-parsers.js';

interface DemoFlags {
  items: number;
  seed: number;
  dataDir?: string;
}

/** Changes listed by the report; the feeds hold all of them. */
const EXAMPLES = 8;

export function demoCommand(io: CliIO): Command {
  return new Command('demo')
    .description(
      'End to end against the bundled simulator: sync, change, sync, diff, feeds. No Redis needed.',
    )
    .option('--items <n>', 'catalogue size (at least 50)', wholeNumber(50), 500)
    .option('--seed <n>', 'catalogue and mutation seed', wholeNumber(0), 1)
    .option('--data-dir <dir>', 'where the demo shop is written (default: DATA_DIR, ./data)')
    .action(async (flags: DemoFlags) => {
      const context = commandContext(io);
      const dataDir =
        flags.dataDir === undefined ? context.config.dataDir : path.resolve(io.cwd, flags.dataDir);
      // Sync logs would drown the report; LOG_LEVEL brings them back.
      const log = io.env.LOG_LEVEL ? context.log : context.log.child({}, { level: 'warn' });
      // Loaded only by this command: the demo brings the simulator, which no other command needs.
      const { runDemo } = await import('../demo-shop.js');
      const result = await runDemo({
        items: flags.items,
        seed: flags.seed,
        config: { ...context.config, dataDir },
        log,
        signal: io.signal,
      });
      for (const line of report(result, flags)) writeLine(io.stdout, line);
    });
}

function report(result: DemoResult, flags: DemoFlags): string[] {
  const { first, second, changes, paths } = result;
  const count = (kind: Change['change']) => changes.filter((c) => c.change === kind).length;
  return [
    `Simulator at ${result.baseUrl}: ${flags.items} items, seed ${flags.seed}.`,
    syncLine(first),
    `Changed the catalogue: ${result.mutation.updated.length} items updated, ${result.mutation.added.length} added, ${result.mutation.removed.length} removed.`,
    syncLine(second),
    '',
    `Changes from run ${first.run} to run ${second.run}: ${count('added')} added, ${count('updated')} updated, ${count('removed')} removed.`,
    ...changes.slice(0, EXAMPLES).map(changeLine),
    ...(changes.length > EXAMPLES ? [`  ... and ${changes.length - EXAMPLES} more in changes.csv`] : []),
    '',
    'Files:',
    `  store      ${paths.store}`,
    `  inventory  ${paths.inventoryCsv}`,
    `  changes    ${paths.changesCsv}`,
    `  snapshot   ${paths.snapshotSqlite}`,
  ];
}

function syncLine(sync: DemoResult['first']): string {
  return `Sync: run ${sync.run}, ${sync.items} items in ${sync.pages} pages (${sync.added} added, ${sync.updated} updated, ${sync.removed} removed) in ${sync.duration_ms} ms.`;
}

function changeLine(change: Change): string {
  const title = JSON.stringify(change.title);
  if (change.change !== 'updated') return `  ${change.change.padEnd(8)} ${change.id}  ${title}`;
  const fields = change.fields.map((field) => {
    const before = change.before?.[field];
    const after = change.after?.[field];
    return `${field} ${JSON.stringify(before)} -> ${JSON.stringify(after)}`;
  });
  return `  ${'updated'.padEnd(8)} ${change.id}  ${title}: ${fields.join(', ')}`;
}
