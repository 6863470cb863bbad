import { Command, InvalidArgumentError } from 'commander';
import type { ChurnFault, FaultsUpdate, Simulator, SimulatorOptions } from '../../simulator/index.js';
import { type CliIO, writeLine } from '../io.js';
import { positiveSeconds, wholeNumber } from './option-parsers.js';

interface SimulateFlags {
  port: number;
  host: string;
  items: number;
  seed: number;
  expiresIn?: number;
  perPageCap?: number;
  defaultPerPage?: number;
  latency?: number;
  rate429?: number;
  retryAfter?: number | 'date';
  rate5xx?: number;
  dropRate?: number;
  malformedRate?: number;
  shortPageRate?: number;
  lossyShortPageRate?: number;
  lossyShortPages?: number[];
  falseEndRate?: number;
  falseEndPages?: number[];
  dripMs?: number;
  refreshDeadEnd?: boolean;
  ignorePage?: boolean;
  moveInsertEvery?: number;
  moveRemoveEvery?: number;
  churnFrom?: number;
  churnEvery?: number;
  churnTimes?: number;
  churnDeleteBehind?: number;
  churnDeleteAhead?: number;
  churnInsertBehind?: number;
  churnInsertAhead?: number;
  churnDeleteAt?: number[];
  churnInsertAt?: number[];
  clientId?: string;
  clientSecret?: string;
  username?: string;
  password?: string;
  shops?: number;
  adminPort?: number;
}

function pageList(min: number): (value: string) => number[] {
  return (value) => {
    if (!/^\d+(,\d+)*$/.test(value) || value.split(',').some((page) => Number(page) < min))
      throw new InvalidArgumentError(`expected page numbers >= ${min}, separated by commas.`);
    return value.split(',').map(Number);
  };
}

/** 0-based positions in a listing, separated by commas. */
function positionList(value: string): number[] {
  if (!/^\d+(,\d+)*$/.test(value))
    throw new InvalidArgumentError('expected 0-based positions (whole numbers), separated by commas.');
  return value.split(',').map(Number);
}

function probability(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1))
    throw new InvalidArgumentError('expected a probability from 0 to 1.');
  return n;
}

function retryAfter(value: string): number | 'date' {
  if (value === 'date') return value;
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected whole seconds or "date".');
  return Number(value);
}

function faultsFrom(flags: SimulateFlags): FaultsUpdate {
  const faults: FaultsUpdate = {
    rate429: flags.rate429,
    retryAfter: flags.retryAfter,
    rate5xx: flags.rate5xx,
    dropRate: flags.dropRate,
    latencyMs: flags.latency,
    malformedRate: flags.malformedRate,
    shortPageRate: flags.shortPageRate,
    lossyShortPageRate: flags.lossyShortPageRate,
    lossyShortPages: flags.lossyShortPages,
    falseEndRate: flags.falseEndRate,
    falseEndPages: flags.falseEndPages,
    dripMs: flags.dripMs,
    refreshDeadEnd: flags.refreshDeadEnd,
    ignorePage: flags.ignorePage,
  };
  if (flags.moveInsertEvery !== undefined || flags.moveRemoveEvery !== undefined) {
    faults.moving = {
      insertBeforeEvery: flags.moveInsertEvery ?? 0,
      removeBehindEvery: flags.moveRemoveEvery ?? 0,
    };
  }
  const churn = churnFrom(flags);
  if (churn) faults.churn = churn;
  return Object.fromEntries(Object.entries(faults).filter(([, value]) => value !== undefined));
}

/** The churn fault when any --churn-* flag is given (the others take their defaults). */
function churnFrom(flags: SimulateFlags): Partial<ChurnFault> | undefined {
  const churn: Partial<ChurnFault> = {
    from: flags.churnFrom,
    every: flags.churnEvery,
    times: flags.churnTimes,
    deleteBehind: flags.churnDeleteBehind,
    deleteAhead: flags.churnDeleteAhead,
    insertBehind: flags.churnInsertBehind,
    insertAhead: flags.churnInsertAhead,
    deleteAt: flags.churnDeleteAt,
    insertAt: flags.churnInsertAt,
  };
  const given = Object.entries(churn).filter(([, value]) => value !== undefined);
  return given.length === 0 ? undefined : Object.fromEntries(given);
}

function simulatorOptions(flags: SimulateFlags): SimulatorOptions {
  const credentials = Object.fromEntries(
    Object.entries({
      clientId: flags.clientId,
      clientSecret: flags.clientSecret,
      username: flags.username,
      password: flags.password,
    }).filter(([, value]) => value !== undefined),
  );
  return {
    port: flags.port,
    host: flags.host,
    items: flags.items,
    seed: flags.seed,
    expiresIn: flags.expiresIn,
    perPageCap: flags.perPageCap,
    defaultPerPage: flags.defaultPerPage,
    credentials,
    faults: faultsFrom(flags),
  };
}

/** The one line a user needs to point shop-sync at the simulator. */
function banner(sim: Simulator, flags: SimulateFlags): string {
  const { clientId, clientSecret, username, password } = sim.credentials;
  return (
    `simulator listening on ${sim.baseUrl} (shop ${sim.shopId}, ${flags.items} items, seed ${flags.seed}); ` +
    `demo settings: MARKETPLACE_BASE_URL=${sim.baseUrl} MARKETPLACE_CLIENT_ID=${clientId} ` +
    `MARKETPLACE_CLIENT_SECRET=${clientSecret} MARKETPLACE_USERNAME=${username} MARKETPLACE_PASSWORD=${password}`
  );
}

export function simulateCommand(io: CliIO): Command {
  return new Command('simulate')
    .description('Run the bundled marketplace simulator (fake shop, fake credentials, optional faults).')
    .option('--port <port>', 'port to listen on (0: any free port)', wholeNumber(0), 4010)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--items <n>', 'catalogue size', wholeNumber(0), 1000)
    .option('--seed <n>', 'seed of the catalogue, mutations and faults', wholeNumber(0), 1)
    .option('--expires-in <seconds>', 'access-token lifetime (default 7200)', positiveSeconds)
    .option('--per-page-cap <n>', 'server-side maximum per_page (default 100)', wholeNumber(1))
    .option('--default-per-page <n>', 'per_page when absent (default 20)', wholeNumber(1))
    .option('--latency <ms>', 'added latency per request', wholeNumber(0))
    .option('--rate-429 <p>', 'probability of 429 per listing request', probability)
    .option('--retry-after <s|date>', 'Retry-After of a 429: seconds or "date"', retryAfter)
    .option('--rate-5xx <p>', 'probability of a 500/502/503 per listing request', probability)
    .option('--drop-rate <p>', 'probability of a connection dropped mid-body', probability)
    .option('--malformed-rate <p>', 'probability of a truncated JSON page', probability)
    .option('--short-page-rate <p>', 'probability of a short page that loses nothing', probability)
    .option(
      '--lossy-short-page-rate <p>',
      'probability per listing request of an answer missing its last 1-3 items (the next page starts after them)',
      probability,
    )
    .option(
      '--lossy-short-pages <list>',
      'pages (e.g. 2,5) whose first answer misses its last item (the next page starts after it)',
      pageList(1),
    )
    .option(
      '--false-end-rate <p>',
      'probability per listing request before the end of a 404, 204 or empty [] instead of the page (never twice in a row for a page)',
      probability,
    )
    .option(
      '--false-end-pages <list>',
      'pages (e.g. 2,5) answering a false end the first time they are asked',
      pageList(2),
    )
    .option(
      '--drip-ms <ms>',
      'send every listing response body one byte every <ms> milliseconds',
      wholeNumber(1),
    )
    .option('--refresh-dead-end', 'tokens from the refresh grant are refused on the listing')
    .option('--ignore-page', 'serve page 1 whatever page is asked for')
    .option(
      '--move-insert-every <n>',
      'insert a new item at the front every N listing requests',
      wholeNumber(1),
    )
    .option(
      '--move-remove-every <n>',
      "remove an item behind the reader's position every N listing requests",
      wholeNumber(1),
    )
    .option(
      '--churn-from <n>',
      'churn: the first event follows listing response N (default 1); any --churn-* flag turns churn on',
      wholeNumber(1),
    )
    .option(
      '--churn-every <n>',
      'churn: then an event after every N listing responses (default 1)',
      wholeNumber(1),
    )
    .option('--churn-times <n>', 'churn: at most N events (default 0: no limit)', wholeNumber(0))
    .option(
      '--churn-delete-behind <n>',
      'churn: per event, delete N items in the part already read (before the end of the page just served)',
      wholeNumber(0),
    )
    .option(
      '--churn-delete-ahead <n>',
      'churn: per event, delete N items after the page just served',
      wholeNumber(0),
    )
    .option(
      '--churn-insert-behind <n>',
      'churn: per event, insert N new items in the part already read',
      wholeNumber(0),
    )
    .option(
      '--churn-insert-ahead <n>',
      'churn: per event, insert N new items after the page just served',
      wholeNumber(0),
    )
    .option(
      '--churn-delete-at <list>',
      'churn: per event, delete the items at these 0-based positions of the listing (e.g. 0,1,2)',
      positionList,
    )
    .option(
      '--churn-insert-at <list>',
      'churn: per event, insert a new item at each of these 0-based positions of the listing',
      positionList,
    )
    .option('--client-id <id>', 'client_id the simulator accepts')
    .option('--client-secret <secret>', 'client_secret the simulator accepts')
    .option('--username <name>', 'shop owner user name the simulator accepts')
    .option('--password <password>', 'shop owner password the simulator accepts')
    .option(
      '--shops <n>',
      'serve N shops of --items each, shop i at BASE/shops/i with its own login',
      wholeNumber(1),
    )
    .option(
      '--admin-port <port>',
      "also serve the benchmark's control endpoint on this port",
      wholeNumber(0, 65535),
    )
    .action(async (flags: SimulateFlags) => {
      // Loaded only by this command: every other one starts without compiling the simulator.
      const { singleShopAdmin, startFleet, startSimulator } = await import('../../simulator/index.js');
      const { fleetBanner, serveUntilStopped } = await import('./simulate-serve.js');
      if (flags.shops !== undefined) {
        const fleet = await startFleet(simulatorOptions(flags), flags.shops);
        writeLine(io.stdout, fleetBanner(fleet, flags.items, flags.seed));
        await serveUntilStopped(io, fleet, fleet, flags);
        return;
      }
      const sim = await startSimulator(simulatorOptions(flags));
      writeLine(io.stdout, banner(sim, flags));
      await serveUntilStopped(io, sim, singleShopAdmin(sim), flags);
    });
}
