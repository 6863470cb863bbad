import type { Mutation, Poison } from './types.js';

/** The most a poisoned value may be padded to: far past any response cap, well within a Buffer. */
const MAX_PAD = 512 * 1024 * 1024;

type Check = (value: unknown, name: string) => void;

const shown = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

const count: Check = (value, name) => {
  if (!Number.isInteger(value) || (value as number) < 0)
    throw new RangeError(`${name} must be a non-negative integer, got ${shown(value)}`);
};

const text: Check = (value, name) => {
  if (typeof value !== 'string' || value === '')
    throw new RangeError(`${name} must be a non-empty string, got ${shown(value)}`);
};

const ids: Check = (value, name) => {
  if (!Array.isArray(value)) throw new RangeError(`${name} must be a list of item ids, got ${shown(value)}`);
  value.forEach((id, index) => {
    text(id, `${name}[${index}]`);
  });
};

const POISON_CHECKS: { readonly [K in keyof Poison]-?: Check } = {
  id: text,
  field: text,
  json: (value, name) => {
    if (typeof value !== 'string') throw new RangeError(`${name} must be JSON text, got ${shown(value)}`);
  },
  hex: (value, name) => {
    if (typeof value !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(value))
      throw new RangeError(`${name} must be bytes as pairs of hex digits, got ${shown(value)}`);
  },
  padZeros: (value, name) => {
    if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_PAD)
      throw new RangeError(`${name} must be an integer from 0 to ${MAX_PAD}, got ${shown(value)}`);
  },
};

const poisons: Check = (value, name) => {
  if (!Array.isArray(value)) throw new RangeError(`${name} must be a list of poisons, got ${shown(value)}`);
  value.forEach((poison, index) => {
    const at = `${name}[${index}]`;
    checkMembers(poison, at, POISON_CHECKS, ['id', 'field']);
    if (((poison as Poison).json === undefined) === ((poison as Poison).hex === undefined))
      throw new RangeError(`${at} needs exactly one of json and hex`);
  });
};

/** Every member a mutation may have and what it must hold: the compiler asks for a new member here. */
const MUTATION_CHECKS: { readonly [K in keyof Mutation]-?: Check } = {
  prices: count,
  quantities: count,
  publish: count,
  titles: count,
  representation: count,
  add: count,
  remove: count,
  restore: ids,
  poison: poisons,
  cure: ids,
};

function checkMembers(
  value: unknown,
  name: string,
  checks: Readonly<Record<string, Check>>,
  required: readonly string[],
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RangeError(`${name} must be a JSON object, got ${shown(value)}`);
  const known = Object.keys(checks);
  for (const [member, memberValue] of Object.entries(value)) {
    const check = checks[member];
    if (check === undefined)
      throw new RangeError(`${name} has no member "${member}" (it has ${known.join(', ')})`);
    check(memberValue, `${name}.${member}`);
  }
  for (const member of required) {
    if (!(member in value)) throw new RangeError(`${name} needs ${member}`);
  }
}

/**
 * Refuses a malformed mutation, whoever sent it (the admin port's JSON, a test's object), with a
 * RangeError naming the member at fault. What depends on the catalogue (ids listed or removed, enough
 * items) is checked where the mutation is applied.
 */
export function checkMutation(m: unknown): asserts m is Mutation {
  checkMembers(m, 'mutation', MUTATION_CHECKS, []);
}
