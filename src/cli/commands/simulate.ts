import { Command, InvalidArgumentError } from 'commander';
import { type Faults, type Simulator, type SimulatorOptions, startSimulator } from '../../simulator/index.js';
import { type CliIO, writeLine } from '../io.js';
import { wholeNumber } from './options.js';

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
  refreshDeadEnd?: boolean;
  ignorePage?: boolean;
  moveInsertEvery?: number;
  moveRemoveEvery?: number;
  clientId?: string;
  clientSecret?: string;
  username?: string;
  password?: string;
}

function probability(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1))
    throw new InvalidArgumentError('expected a probability from 0 to 1.');
  return n;
}

function positiveSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n > 0 && Number.isFinite(n)))
    throw new InvalidArgumentError('expected seconds > 0.');
  return n;
}

function retryAfter(value: string): number | 'date' {
  if (value === 'date') return value;
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected whole seconds or "date".');
  return Number(value);
}

function faultsFrom(flags: SimulateFlags): Partial<Faults> {
  const faults: Partial<Faults> = {
    rate429: flags.rate429,
    retryAfter: flags.retryAfter,
    rate5xx: flags.rate5xx,
    dropRate: flags.dropRate,
    latencyMs: flags.latency,
    malformedRate: flags.malformedRate,
    shortPageRate: flags.shortPageRate,
    refreshDeadEnd: flags.refreshDeadEnd,
    ignorePage: flags.ignorePage,
  };
  if (flags.moveInsertEvery !== undefined || flags.moveRemoveEvery !== undefined) {
    faults.moving = {
      insertBeforeEvery: flags.moveInsertEvery ?? 0,
      removeBehindEvery: flags.moveRemoveEvery ?? 0,
    };
  }
  return Object.fromEntries(Object.entries(faults).filter(([, value]) => value !== undefined));
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

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
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
    .option('--client-id <id>', 'client_id the simulator accepts')
    .option('--client-secret <secret>', 'client_secret the simulator accepts')
    .option('--username <name>', 'shop owner user name the simulator accepts')
    .option('--password <password>', 'shop owner password the simulator accepts')
    .action(async (flags: SimulateFlags) => {
      const sim = await startSimulator(simulatorOptions(flags));
      writeLine(io.stdout, banner(sim, flags));
      const rendering = sim.prerender(io.signal);
      await aborted(io.signal);
      await rendering;
      await sim.close();
    });
}
