import { type Decimal, parseDecimal } from '../domain/decimal.js';
import type { Item } from '../domain/item.js';
import { exactQuantity, isBlank, isPublished, isWellFormed, logoUrl, wellFormed } from './item-values.js';

/**
 * The item schema's fast path: a listing element of the usual well-formed shape as the Item the schema
 * (`apiItem` in item-schema.ts) gives for it, or undefined for anything else, which the schema then
 * reads and, if it must, rejects with its reasons. It accepts nothing the schema refuses, and gives what
 * the schema gives for what it accepts (test/api/well-formed-item.test.ts compares the two on generated
 * and mutated elements). zod costs several times as much per item, a third of reading a page.
 */
export function wellFormedItem(json: unknown, raw: string): Item | undefined {
  if (!isRecord(json) || !isRecord(json.shop)) return undefined;
  const { shop } = json;
  const item: Maybe<Item> = {
    id: identifier(json.id),
    title: text(json.title),
    price: price(json.price),
    original_price:
      json.original_price == null || isBlank(json.original_price) ? null : price(json.original_price),
    currency: optionalText(json.currency),
    quantity: count(json.quantity),
    published: isPublished(json.published),
    created_at: nonEmpty(json.created_at),
    url: nonEmpty(json.url),
    web_url: optionalText(json.web_url),
    // A photo URL with a lone surrogate is rare: the schema repairs it, this path leaves it to the schema.
    photos: list(json.photos, isKeptString),
    photos_id: list(json.photos_id, isSafeInteger),
    description: optionalText(json.description),
    raw_description: optionalText(json.raw_description),
    fbcomments: optionalText(json.fbcomments),
    shop_id: identifier(shop.id),
    shop_name: text(shop.name),
    shop_url: nonEmpty(shop.url),
    shop_image: logoUrl(shop.image),
    shop_items_url: nonEmpty(shop.items_url),
    raw,
  };
  return isComplete(item) ? item : undefined;
}

/** What a value that is not of the usual shape reads as: the element is left to the schema. */
const UNUSUAL: unique symbol = Symbol('unusual');
type Unusual = typeof UNUSUAL;
type Maybe<T> = { [K in keyof T]: T[K] | Unusual };

function isComplete<T extends object>(values: Maybe<T>): values is T {
  for (const key in values) if (values[key] === UNUSUAL) return false;
  return true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === 'string';
/** An element of `photos` as the schema keeps it: text, lone surrogates replaced. */
const isKeptString = (value: unknown): value is string => isString(value) && isWellFormed(value);
const isSafeInteger = (value: unknown): value is number => Number.isSafeInteger(value);

/** `z.union([z.string().min(1), z.number().int()]).transform(String)`, well-formed (else refused) */
function identifier(value: unknown): string | Unusual {
  if (typeof value === 'string') return value === '' || !isWellFormed(value) ? UNUSUAL : value;
  return isSafeInteger(value) ? String(value) : UNUSUAL;
}

/** `z.string()`, well-formed (`wellFormed`) */
function text(value: unknown): string | Unusual {
  return isString(value) ? wellFormed(value) : UNUSUAL;
}

/** `z.string().min(1)`, well-formed */
function nonEmpty(value: unknown): string | Unusual {
  return isString(value) && value !== '' ? wellFormed(value) : UNUSUAL;
}

/** `z.string().nullish()`, absent as null, well-formed. */
function optionalText(value: unknown): string | null | Unusual {
  if (value === null || value === undefined) return null;
  return isString(value) ? wellFormed(value) : UNUSUAL;
}

/** The schema's `decimal`, for a price it accepts (parseDecimal refuses what z.number() does not take). */
function price(value: unknown): Decimal | Unusual {
  if (!isString(value) && typeof value !== 'number') return UNUSUAL;
  const parsed = parseDecimal(value);
  return parsed === undefined || parsed.startsWith('-') ? UNUSUAL : parsed;
}

/** The schema's `count` (`exactQuantity`). */
function count(value: unknown): number | Unusual {
  return exactQuantity(value) ?? UNUSUAL;
}

/** `z.array(…).nullish()`, absent as empty. */
function list<T>(value: unknown, isElement: (element: unknown) => element is T): readonly T[] | Unusual {
  if (value === null || value === undefined) return [];
  return Array.isArray(value) && value.every(isElement) ? value : UNUSUAL;
}
