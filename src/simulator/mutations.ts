import type { TrackedField } from '../domain/item.js';
import type { Catalogue } from './catalogue.js';
import { checkMutation } from './mutation-check.js';
import type { Prng } from './prng.js';
import { PRICE_REPRS, type PriceRepr, randomUnits, renderPrice, type SimRecord } from './record.js';
import { canonicalPrice } from './render.js';
import { mutationTitle } from './texts.js';
import type { FieldChange, Mutation, MutationTruth, Poison } from './types.js';

type Changes = Partial<Record<TrackedField, FieldChange>>;
type Edit = (record: SimRecord, rng: Prng) => Changes;

const COUNTED_KINDS = [
  'prices',
  'quantities',
  'publish',
  'titles',
  'representation',
  'remove',
  'add',
] as const;

function count(m: Mutation, kind: (typeof COUNTED_KINDS)[number]): number {
  return m[kind] ?? 0;
}

/** `n` distinct records, drawn without replacement. */
function pickDistinct(records: readonly SimRecord[], n: number, rng: Prng): SimRecord[] {
  const indices = Array.from({ length: records.length }, (_, i) => i);
  for (let i = 0; i < n; i += 1) {
    const j = i + rng.int(indices.length - i);
    [indices[i], indices[j]] = [indices[j] as number, indices[i] as number];
  }
  return indices.slice(0, n).map((i) => records[i] as SimRecord);
}

const editPrice: Edit = (record, rng) => {
  const before = canonicalPrice(record.priceUnits, record.scale);
  let units = randomUnits(rng, record.scale);
  while (units === record.priceUnits) units = randomUnits(rng, record.scale);
  record.priceUnits = units;
  return { price: { before, after: canonicalPrice(units, record.scale) } };
};

const editQuantity: Edit = (record, rng) => {
  const before = record.quantity;
  record.quantity = (before + 1 + rng.int(50)) % 60;
  return { quantity: { before, after: record.quantity } };
};

const editPublished: Edit = (record) => {
  record.published = !record.published;
  return { published: { before: !record.published, after: record.published } };
};

const editTitle: Edit = (record, rng) => {
  const before = record.title;
  while (record.title === before) record.title = mutationTitle(rng, record.serial + rng.int(1_000_000));
  return { title: { before, after: record.title } };
};

/** The next representation that writes different JSON text for the same value. */
function nextRepr(units: number, scale: number, repr: PriceRepr): PriceRepr {
  const text = renderPrice(units, scale, repr);
  let next = repr;
  do next = ((next + 1) % PRICE_REPRS) as PriceRepr;
  while (renderPrice(units, scale, next) === text);
  return next;
}

const editRepresentation: Edit = (record) => {
  record.priceRepr = nextRepr(record.priceUnits, record.scale, record.priceRepr);
  if (record.originalUnits !== null) {
    record.originalRepr = nextRepr(record.originalUnits, record.scale, record.originalRepr);
  }
  return {};
};

const EDITS: ReadonlyArray<readonly [kind: (typeof COUNTED_KINDS)[number], edit: Edit]> = [
  ['prices', editPrice],
  ['quantities', editQuantity],
  ['publish', editPublished],
  ['titles', editTitle],
  ['representation', editRepresentation],
];

/**
 * Applies `m` and returns what changed, or refuses it whole, before changing anything: a malformed
 * mutation, or one naming ids it cannot act on. Every edited or removed item is drawn from one draw
 * without replacement, so no item is touched twice in one mutation and each `updated` entry has one
 * field; an item the mutation poisons or cures is never drawn.
 */
export function applyMutation(catalogue: Catalogue, m: Mutation, rng: Prng): MutationTruth {
  checkMutation(m);
  const restore = m.restore ?? [];
  const named = checkNamedIds(catalogue, m, restore);
  const drawable = named.size === 0 ? catalogue.records : catalogue.records.filter((r) => !named.has(r.id));
  const wanted = COUNTED_KINDS.filter((kind) => kind !== 'add').reduce(
    (sum, kind) => sum + count(m, kind),
    0,
  );
  if (wanted > drawable.length) {
    const besides = named.size === 0 ? '' : ` besides the ${named.size} it poisons or cures`;
    throw new RangeError(
      `mutation touches ${wanted} items but the catalogue lists ${drawable.length}${besides}`,
    );
  }
  const picked = pickDistinct(drawable, wanted, rng);
  const truth: MutationTruth = { added: [], removed: [], updated: [] };
  let next = 0;
  for (const [kind, edit] of EDITS) {
    for (const record of picked.slice(next, next + count(m, kind))) {
      const fields = edit(record, rng);
      catalogue.changed(record);
      if (Object.keys(fields).length > 0) truth.updated.push({ id: record.id, fields });
    }
    next += count(m, kind);
  }
  for (const record of picked.slice(next)) {
    catalogue.remove(record);
    truth.removed.push(record.id);
  }
  for (let i = 0; i < count(m, 'add'); i += 1) truth.added.push(catalogue.addNew(rng).id);
  for (const id of restore) {
    catalogue.restore(id);
    truth.added.push(id);
  }
  for (const poison of m.poison ?? []) poisonRecord(catalogue, poison);
  for (const id of m.cure ?? []) {
    const record = catalogue.get(id) as SimRecord;
    delete record.poison;
    catalogue.changed(record);
  }
  return truth;
}

/**
 * The ids `m` poisons or cures, each listed now or restored by `m`; every id it restores was removed.
 * Checked before anything changes, so that a refused mutation leaves the shop as it was.
 */
function checkNamedIds(catalogue: Catalogue, m: Mutation, restore: readonly string[]): Set<string> {
  if (new Set(restore).size !== restore.length) throw new RangeError('mutation.restore lists an id twice');
  for (const id of restore) {
    if (!catalogue.wasRemoved(id)) throw new RangeError(`cannot restore ${id}: it was not removed`);
  }
  const named = new Set<string>();
  const acts: Array<[what: string, ids: readonly string[]]> = [
    ['poison', (m.poison ?? []).map((poison) => poison.id)],
    ['cure', m.cure ?? []],
  ];
  for (const [what, ids] of acts) {
    for (const id of ids) {
      if (catalogue.get(id) === undefined && !restore.includes(id))
        throw new RangeError(`cannot ${what} ${id}: it is not listed`);
      named.add(id);
    }
  }
  return named;
}

/**
 * Makes a listed item send `poison.field` as the poison's bytes from now on. Its values do not change:
 * a correct client reports it invalid (the truth is unchanged, so no change is reported).
 */
function poisonRecord(catalogue: Catalogue, poison: Poison): void {
  const record = catalogue.get(poison.id) as SimRecord;
  const bytes =
    poison.json !== undefined ? Buffer.from(poison.json) : Buffer.from(poison.hex as string, 'hex');
  const pad = poison.padZeros ?? 0;
  const members = new Map(record.poison);
  members.set(poison.field, pad === 0 ? bytes : padded(bytes, pad));
  record.poison = members;
  catalogue.changed(record);
}

/** `bytes` with `pad` zeros after its first digit (or at its end when it has none). */
function padded(bytes: Buffer, pad: number): Buffer {
  const at = bytes.findIndex((byte) => byte >= 0x30 && byte <= 0x39);
  const split = at === -1 ? bytes.length : at + 1;
  return Buffer.concat([bytes.subarray(0, split), Buffer.alloc(pad, 0x30), bytes.subarray(split)]);
}
