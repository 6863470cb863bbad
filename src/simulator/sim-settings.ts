import { mergeFaults, NO_FAULTS } from './faults.js';
import type { Faults, SimCredentials, SimulatorOptions } from './types.js';

export const DEFAULT_CREDENTIALS: Readonly<SimCredentials> = Object.freeze({
  clientId: 'demo-client',
  clientSecret: 'demo-secret',
  username: 'demo-owner',
  password: 'demo-password',
});

export interface Settings {
  items: number;
  seed: number;
  host: string;
  port: number;
  expiresIn: number;
  perPageCap: number;
  defaultPerPage: number;
  credentials: SimCredentials;
  shopId: string;
  faults: Faults;
}

function integerAtLeast(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
  return value;
}

/** Options with their defaults, refusing values the server could not honour. */
export function resolveOptions(options: SimulatorOptions): Settings {
  const expiresIn = options.expiresIn ?? 7200;
  if (!(expiresIn > 0 && Number.isFinite(expiresIn)))
    throw new RangeError(`expiresIn must be > 0, got ${expiresIn}`);
  const perPageCap = integerAtLeast('perPageCap', options.perPageCap ?? 100, 1);
  return {
    items: integerAtLeast('items', options.items ?? 1000, 0),
    seed: integerAtLeast('seed', options.seed ?? 1, 0),
    host: options.host ?? '127.0.0.1',
    port: integerAtLeast('port', options.port ?? 0, 0),
    expiresIn,
    perPageCap,
    defaultPerPage: Math.min(integerAtLeast('defaultPerPage', options.defaultPerPage ?? 20, 1), perPageCap),
    credentials: { ...DEFAULT_CREDENTIALS, ...options.credentials },
    shopId: options.shopId ?? 'demo-shop',
    faults: mergeFaults(NO_FAULTS, options.faults ?? {}),
  };
}
