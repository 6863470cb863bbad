import path from 'node:path';
import type { Change } from '../../domain/change.js';
import {
  type Item,
  JSON_SIDE_FIELDS,
  SIDE_FIELDS,
  type SideField,
  type TrackedField,
} from '../../domain/item.js';
import { StoreError } from '../../errors.js';
import { writeChangesCsv } from '../../export/formats/changes-csv.js';
import { writeFileAtomic } from '../../export/publish/atomic.js';
import { diffRuns } from '../../store/diff-runs.js';
import { fromSqlite, type Store } from '../../store/open.js';
import { shopPaths } from '../../store/paths.js';
import { completeRunCount, latestCompleteRun, previousCompleteRun } from '../../store/run-records.js';
import { commandContext } from '../context.js';
import type { CliIO } from '../io.js';
import { runMessages } from '../run-messages.js';
import { writeToStdout } from '../stdout.js';
import { writeLines } from '../write-lines.js';
import { noStoreNote, openExistingStore, readableShop } from './shop-store.js';

export interface DiffFlags {
  shop?: string;
  from?: number;
  to?: number;
  format: DiffFormat;
  out?: string;
}

type DiffFormat = 'table' | 'csv' | 'json';

/** `diff`: the changes between two complete runs, as a table, CSV or JSON, to stdout or a file. */
export async function diffAction(io: CliIO, flags: DiffFlags): Promise<void> {
  const { config } = commandContext(io);
  const shop = readableShop(config, flags.shop);
  const store = openExistingStore(config, shop);
  try {
    const [from, to] = chooseRuns(
      store,
      shop,
      flags,
      shopPaths(config.dataDir, shop).store,
      noStoreNote(config),
    );
    const changes = diffRuns(store as Store, from, to, runMessages(shop, 'compared'));
    const write = (out: NodeJS.WritableStream) => writeDiff(out, flags.format, { shop, from, to, changes });
    if (flags.out === undefined) await writeToStdout(() => write(io.stdout));
    else await writeFileAtomic(path.resolve(io.cwd, flags.out), write, { label: 'diff' });
  } catch (error) {
    throw store ? fromSqlite(`Cannot read store ${store.path}`, store.path, error) : error;
  } finally {
    store?.close();
  }
}

/** `--from`/`--to` as given, the missing ones defaulted to the last two complete runs. */
function chooseRuns(
  store: Store | undefined,
  shop: string,
  flags: DiffFlags,
  file: string,
  noStore: string,
): [number, number] {
  const to = flags.to ?? (store && latestCompleteRun(store));
  const from = flags.from ?? (store && to != null ? previousCompleteRun(store, to) : null);
  if (store && from != null && to != null) return [from, to];
  if (flags.to !== undefined && flags.from === undefined && store) {
    throw new StoreError(`Shop ${shop} has no complete run before run ${flags.to} to compare it with.`, file);
  }
  const complete = store ? completeRunCount(store) : 0;
  const where = store ? '' : ` (${noStore})`;
  throw new StoreError(
    `A diff needs two complete runs; shop ${shop} has ${complete === 1 ? '1 complete run' : `${complete} complete runs`}${where}.`,
    file,
  );
}

interface DiffOutput {
  shop: string;
  from: number;
  to: number;
  changes: Iterable<Change>;
}

async function writeDiff(out: NodeJS.WritableStream, format: DiffFormat, diff: DiffOutput): Promise<void> {
  if (format === 'csv') return writeChangesCsv(diff.changes, out);
  if (format === 'json') return writeLines(out, jsonLines(diff));
  // Loaded only for a table: measuring terminal widths (string-width) costs other commands' start-up.
  return writeLines(out, tableLines(diff, await import('../table.js')));
}

/** The contract's `diff --format json` document, one change per line so it streams. */
function* jsonLines(diff: DiffOutput): Generator<string> {
  yield `{"shop":${JSON.stringify(diff.shop)},"from":${diff.from},"to":${diff.to},"changes":[`;
  let previous: string | undefined;
  for (const change of diff.changes) {
    if (previous !== undefined) yield `${previous},`;
    previous = JSON.stringify(changeJson(change));
  }
  if (previous !== undefined) yield previous;
  yield ']}';
}

function changeJson(change: Change) {
  const side = (item: Item | null) => {
    if (!item) return null;
    const shown = new Set<TrackedField>([...JSON_SIDE_FIELDS, ...change.fields]);
    return Object.fromEntries([...shown].map((field) => [field, item[field]]));
  };
  return {
    change: change.change,
    id: change.id,
    title: change.title,
    fields: change.fields,
    before: side(change.before),
    after: side(change.after),
  };
}

function* tableLines(
  diff: DiffOutput,
  { formatTable, shorten }: typeof import('../table.js'),
): Generator<string> {
  const header = ['CHANGE', 'ID', 'TITLE', 'FIELDS', ...SIDE_FIELDS.map((field) => field.toUpperCase())];
  const rows: string[][] = [];
  for (const change of diff.changes) {
    rows.push([
      change.change,
      change.id,
      titleCell(change, shorten),
      change.fields.join(', '),
      ...SIDE_FIELDS.map((field) => beforeAfter(change, field)),
    ]);
  }
  yield `Shop ${diff.shop}: run ${diff.from} -> run ${diff.to}, ${rows.length} changes.`;
  if (rows.length > 0) yield* formatTable(header, rows, [40, 40, TITLE_WIDTH * 2 + 4]);
}

const TITLE_WIDTH = 30;

/** The title, or for a renamed item the old and the new one, each shortened alone so both show. */
function titleCell(change: Change, shorten: (cell: string, maxWidth: number) => string): string {
  if (!change.fields.includes('title') || !change.before || !change.after) return change.title;
  return `${shorten(change.before.title, TITLE_WIDTH)} -> ${shorten(change.after.title, TITLE_WIDTH)}`;
}

function beforeAfter(change: Change, field: SideField): string {
  const before = change.before && String(change.before[field]);
  const after = change.after && String(change.after[field]);
  if (before === null) return `+ ${after}`;
  if (after === null) return `- ${before}`;
  return before === after ? after : `${before} -> ${after}`;
}
