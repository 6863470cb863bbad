import { Prng } from './prng.js';
import type { ChurnFault, Faults, FaultsUpdate } from './types.js';

export const NO_FAULTS: Readonly<Faults> = Object.freeze({
  rate429: 0,
  retryAfter: 0,
  rate5xx: 0,
  dropRate: 0,
  latencyMs: 0,
  malformedRate: 0,
  shortPageRate: 0,
  lossyShortPageRate: 0,
  lossyShortPages: [],
  falseEndRate: 0,
  falseEndPages: [],
  dripMs: 0,
  refreshDeadEnd: false,
  ignorePage: false,
  moving: null,
  tokenValues: null,
  churn: null,
});

/** Churn's defaults: one event after every response from the first, nothing deleted or inserted. */
export const NO_CHURN: Readonly<ChurnFault> = Object.freeze({
  from: 1,
  every: 1,
  times: 0,
  deleteBehind: 0,
  deleteAhead: 0,
  insertBehind: 0,
  insertAhead: 0,
  deleteAt: [],
  insertAt: [],
});

function resolveChurn(update: Partial<ChurnFault>): ChurnFault {
  const churn: ChurnFault = { ...NO_CHURN, ...update };
  checkCount('churn.from', churn.from, false);
  checkCount('churn.every', churn.every, false);
  for (const name of ['times', 'deleteBehind', 'deleteAhead', 'insertBehind', 'insertAhead'] as const)
    checkCount(`churn.${name}`, churn[name], true);
  for (const name of ['deleteAt', 'insertAt'] as const) {
    if (!Array.isArray(churn[name])) throw new RangeError(`faults.churn.${name} must be a list of positions`);
    for (const position of churn[name]) checkCount(`churn.${name}[]`, position, true);
    churn[name] = [...churn[name]];
  }
  return churn;
}

function checkRate(name: string, value: number): void {
  if (!(value >= 0 && value <= 1))
    throw new RangeError(`faults.${name} must be a probability in 0..1, got ${value}`);
}

function checkCount(name: string, value: number, allowZero: boolean): void {
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new RangeError(`faults.${name} must be an integer >= ${allowZero ? 0 : 1}, got ${value}`);
  }
}

/** `current` with `update` merged in, refusing values that make no sense. */
export function mergeFaults(current: Readonly<Faults>, update: FaultsUpdate): Faults {
  const { churn, ...rest } = update;
  const next: Faults = { ...current, ...rest };
  if (churn !== undefined) next.churn = churn === null ? null : resolveChurn(churn);
  checkRate('rate429', next.rate429);
  checkRate('rate5xx', next.rate5xx);
  checkRate('dropRate', next.dropRate);
  checkRate('malformedRate', next.malformedRate);
  checkRate('shortPageRate', next.shortPageRate);
  checkRate('lossyShortPageRate', next.lossyShortPageRate);
  checkRate('falseEndRate', next.falseEndRate);
  for (const name of ['falseEndPages', 'lossyShortPages'] as const) {
    for (const page of next[name]) checkCount(`${name}[]`, page, false);
    next[name] = [...next[name]];
  }
  if (next.retryAfter !== 'date') checkCount('retryAfter', next.retryAfter, true);
  for (const name of ['latencyMs', 'dripMs'] as const) {
    if (!(next[name] >= 0 && Number.isFinite(next[name])))
      throw new RangeError(`faults.${name} must be >= 0, got ${next[name]}`);
  }
  if (next.tokenValues) next.tokenValues = { ...next.tokenValues };
  if (next.moving) {
    checkCount('moving.insertBeforeEvery', next.moving.insertBeforeEvery, true);
    checkCount('moving.removeBehindEvery', next.moving.removeBehindEvery, true);
  }
  return next;
}

export type ListingFault = 'status429' | 'status5xx' | 'drop' | 'malformed' | null;

/**
 * One draw per listing request decides its fault, from a seeded stream: the same seed and the same
 * sequence of requests give the same faults.
 */
export class FaultDice {
  private readonly rng: Prng;

  constructor(seed: number) {
    this.rng = new Prng(seed ^ 0xfa017);
  }

  roll(faults: Readonly<Faults>): ListingFault {
    let draw = this.rng.next();
    for (const [fault, rate] of [
      ['status429', faults.rate429],
      ['status5xx', faults.rate5xx],
      ['drop', faults.dropRate],
      ['malformed', faults.malformedRate],
    ] as const) {
      if (draw < rate) return fault;
      draw -= rate;
    }
    return null;
  }
}
