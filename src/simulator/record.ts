import { mix, Prng } from './prng.js';
import { CATEGORY_COUNT, COUNTRIES, CURRENCIES, catalogueTitle, DESCRIPTIONS } from './texts.js';

/**
 * How a price is written in the JSON: as a number or a string, with or without trailing zeros.
 * 12.5 / 12.50 / "12.50" / "12.5" are one value; a correct client treats them alike.
 */
export type PriceRepr = 0 | 1 | 2 | 3;
export const PRICE_REPRS = 4;

/**
 * One item of the simulated shop, kept compact (shared texts by index, photo ids by base) so that a
 * million of them fit in memory. `json` caches the rendered item (UTF-8, off the JS heap) and is
 * cleared on every change.
 */
export interface SimRecord {
  readonly serial: number;
  readonly id: string;
  title: string;
  readonly createdMs: number;
  /** The price as an integer count of 10^-scale units: exact, never a float. */
  priceUnits: number;
  readonly scale: 2 | 3;
  priceRepr: PriceRepr;
  originalUnits: number | null;
  originalRepr: PriceRepr;
  readonly currency: string | null;
  quantity: number;
  published: boolean;
  readonly photoCount: number;
  readonly photoBase: number;
  readonly hasPhotosId: boolean;
  /** Index into DESCRIPTIONS, -1 when absent. */
  readonly description: number;
  readonly rawDescription: number;
  readonly hasFbcomments: boolean;
  readonly hasWebUrl: boolean;
  /** Bit i set: the item is in category i + 1. */
  readonly categories: number;
  readonly featured: boolean;
  readonly promotable: boolean;
  /** Bit i set: the item ships to COUNTRIES[i]. */
  readonly shipping: number;
  readonly views: number;
  json: Buffer | undefined;
  /**
   * Poisoned members (`Mutation.poison`): member name to the exact bytes sent as its value, which need
   * not be JSON's idea of a sane value, nor UTF-8. Absent on every healthy record.
   */
  poison?: ReadonlyMap<string, Buffer>;
}

/** A new price in the same scale as the record's, for generation and mutation. */
export function randomUnits(rng: Prng, scale: 2 | 3): number {
  return scale === 3 ? 1 + rng.int(999_999) : 1 + rng.int(50_000);
}

function generatePrice(rng: Prng): { units: number; scale: 2 | 3 } {
  const r = rng.next();
  // 0.1, 0.2 and 0.3 are the classic binary-float traps (0.1 + 0.2 !== 0.3).
  if (r < 0.08) return { units: rng.pick([10, 20, 30]), scale: 2 };
  if (r < 0.14) return { units: randomUnits(rng, 3), scale: 3 };
  if (r < 0.22) return { units: (1 + rng.int(500)) * 100, scale: 2 };
  if (r < 0.24) return { units: 100_000_000 + rng.int(900_000_000), scale: 2 };
  return { units: randomUnits(rng, 2), scale: 2 };
}

function randomBits(rng: Prng, width: number, count: number): number {
  let bits = 0;
  for (let i = 0; i < count; i += 1) bits |= 1 << rng.int(width);
  return bits;
}

/** The record of catalogue item `serial`: a pure function of (seed, serial, createdMs). */
export function generateRecord(seed: number, serial: number, createdMs: number): SimRecord {
  const rng = new Prng(mix(seed, serial));
  const { units, scale } = generatePrice(rng);
  const onSale = rng.chance(0.3);
  const description = rng.chance(0.85) ? rng.int(DESCRIPTIONS.length) : -1;
  return {
    serial,
    id: `${mix(seed, serial, 0x1d).toString(36).padStart(7, '0')}-${serial.toString(36)}`,
    title: catalogueTitle(serial, rng),
    createdMs,
    priceUnits: units,
    scale,
    priceRepr: rng.int(PRICE_REPRS) as PriceRepr,
    originalUnits: onSale ? units + 1 + rng.int(Math.max(units, 100)) : null,
    originalRepr: rng.int(PRICE_REPRS) as PriceRepr,
    currency: rng.chance(0.05) ? null : rng.pick(CURRENCIES),
    quantity: rng.chance(0.1) ? 0 : 1 + rng.int(50),
    published: !rng.chance(0.12),
    photoCount: rng.int(5),
    photoBase: 100_000 + serial * 5,
    hasPhotosId: rng.chance(0.8),
    description,
    rawDescription: description >= 0 && rng.chance(0.9) ? description : -1,
    hasFbcomments: rng.chance(0.85),
    hasWebUrl: rng.chance(0.8),
    categories: randomBits(rng, CATEGORY_COUNT, 1 + rng.int(3)),
    featured: rng.chance(0.2),
    promotable: rng.chance(0.4),
    shipping: randomBits(rng, COUNTRIES.length, 1 + rng.int(4)),
    views: rng.int(100_000),
    json: undefined,
  };
}

/** `units` scaled down by `scale` places: plain notation, trailing zeros kept when `padded`. */
export function formatUnits(units: number, scale: number, padded: boolean): string {
  const digits = String(units).padStart(scale + 1, '0');
  const whole = digits.slice(0, -scale);
  const fraction = digits.slice(-scale);
  if (padded) return `${whole}.${fraction}`;
  const trimmed = fraction.replace(/0+$/, '');
  return trimmed ? `${whole}.${trimmed}` : whole;
}

/** The JSON text of a price in the given representation. */
export function renderPrice(units: number, scale: number, repr: PriceRepr): string {
  switch (repr) {
    case 0:
      return formatUnits(units, scale, false);
    case 1:
      return formatUnits(units, scale, true);
    case 2:
      return `"${formatUnits(units, scale, true)}"`;
    case 3:
      return `"${formatUnits(units, scale, false)}"`;
  }
}

/** Price in thousandths, comparable across scales. */
export function priceMillis(record: SimRecord): number {
  return record.scale === 2 ? record.priceUnits * 10 : record.priceUnits;
}

export function bitsToList<T>(bits: number, values: (index: number) => T, width: number): T[] {
  const list: T[] = [];
  for (let i = 0; i < width; i += 1) if (bits & (1 << i)) list.push(values(i));
  return list;
}
