import { fromSqlite } from '../../store/open.js';
import { type FeedsLag, feedsLag } from '../../store/published.js';
import { listRuns, type RunSummary } from '../../store/run-records.js';
import { commandContext } from '../context.js';
import { type CliIO, writeLine } from '../io.js';
import { writeLines } from '../write-lines.js';
import { noStoreNote, openExistingStore, readableShop } from './shop-store.js';

export interface RunsFlags {
  shop?: string;
  json?: boolean;
}

/** `runs`: the shop's runs as a table or JSON. */
export async function runsAction(io: CliIO, flags: RunsFlags): Promise<void> {
  const { config } = commandContext(io);
  const shop = readableShop(config, flags.shop);
  const store = openExistingStore(config, shop);
  let runs: RunSummary[];
  let lag: FeedsLag | undefined;
  try {
    runs = store ? listRuns(store) : [];
    lag = store ? feedsLag(store) : undefined;
  } catch (error) {
    throw store ? fromSqlite(`Cannot read store ${store.path}`, store.path, error) : error;
  } finally {
    store?.close();
  }
  if (flags.json) writeLine(io.stdout, JSON.stringify(runs.map(runJson)));
  else if (runs.length === 0)
    writeLine(io.stdout, `Shop ${shop} has no runs yet${store ? '' : ` (${noStoreNote(config)})`}.`);
  else await writeLines(io.stdout, [...(await runsTable(runs)), ...earlierErrors(runs), ...lagNote(lag)]);
}

/** The contract's `runs --json` element (`resumed_at`, `attempts` and `earlier_errors` extend it). */
function runJson(r: RunSummary) {
  return {
    run: r.run,
    status: r.status,
    started_at: r.started_at,
    finished_at: r.finished_at,
    items: r.items,
    added: r.added,
    updated: r.updated,
    removed: r.removed,
    error: r.error,
    resumed_at: r.resumed_at,
    attempts: r.attempts,
    earlier_errors: r.earlier_errors,
  };
}

/** Below the table, why each earlier attempt of a resumed run stopped: a run that resumed and completed still says so. */
function earlierErrors(runs: readonly RunSummary[]): string[] {
  return runs.flatMap((r) =>
    r.earlier_errors.map(
      (e, index) => `Run ${r.run}, attempt ${index + 1} of ${r.attempts}, stopped at ${e.at}: ${e.message}`,
    ),
  );
}

/** Said only when the feeds lag: a consumer reading them now gets an older run than the store's latest. */
function lagNote(lag: FeedsLag | undefined): string[] {
  if (!lag?.lagging || lag.latestComplete === null) return [];
  const reflect = lag.published === null ? 'no run yet' : `run ${lag.published}`;
  return [
    `The feeds reflect ${reflect}, not the latest complete run ${lag.latestComplete}: their last publication failed. The next sync's feeds cover every change since.`,
  ];
}

async function runsTable(runs: readonly RunSummary[]): Promise<string[]> {
  // Loaded only for a table: measuring terminal widths (string-width) costs other commands' start-up.
  const { formatTable } = await import('../table.js');
  const header = [
    'RUN',
    'STATUS',
    'STARTED',
    'RESUMED',
    'FINISHED',
    'ATTEMPTS',
    'PAGES',
    'ITEMS',
    'ADDED',
    'UPDATED',
    'REMOVED',
    'INVALID',
    'ERROR',
  ];
  const rows = runs.map((r) => [
    String(r.run),
    r.status,
    r.started_at,
    r.resumed_at ?? '-',
    r.finished_at ?? '-',
    String(r.attempts),
    ...[r.pages, r.items, r.added, r.updated, r.removed, r.invalid].map(String),
    r.error ?? '',
  ]);
  // The error, last, is shown whole: it is the sentence that says what to do.
  return formatTable(header, rows, [...header.slice(1).map(() => 40), Number.POSITIVE_INFINITY]);
}
