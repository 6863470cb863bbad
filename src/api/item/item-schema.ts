import { z } from 'zod';
import { type Decimal, readDecimal, shownLiteral } from '../../domain/decimal.js';
import type { InvalidItem, Item } from '../../domain/item.js';
import type { StoredVersion } from '../../domain/unchanged-item.js';
import {
  API_FIELDS,
  type ApiField,
  ITEM_MEMBERS,
  type Reading,
  type Readings,
  SHOP_FIELDS,
  SHOP_MEMBER,
} from './api-fields.js';
import { exactQuantity, isBlank, isPublished, isWellFormed, logoUrl, wellFormed } from './item-values.js';
import { type ObjectLayout, type ObjectSource, objectSource } from './json-source.js';
import { wellFormedItem } from './well-formed-item.js';

/**
 * The spec's Item and Shop summary, read tolerantly where the spec and its samples disagree (prices as
 * numbers or strings, `shop.image` as `{}`, optional fields absent or null) or where servers stray
 * from it (flags and counts as strings, empty strings for absent prices), and normalised to `Item`.
 */

/**
 * A price: an exact decimal within DECIMAL_LIMITS that is not negative (a negative price is a broken
 * record, not a sale).
 */
const price = z.union([z.string(), z.number()]).transform((value, ctx): Decimal => {
  const reading = readDecimal(value);
  if (!reading.ok) {
    ctx.addIssue({ code: 'custom', message: reading.reason });
    return z.NEVER;
  }
  if (reading.value.startsWith('-')) {
    ctx.addIssue({ code: 'custom', message: `a price cannot be negative: ${reading.value}` });
    return z.NEVER;
  }
  return reading.value;
});

const blankAsNull = (value: unknown) => (isBlank(value) ? null : value);

/** Text as kept: every lone surrogate replaced (`wellFormed`), so that every file holds valid UTF-8. */
const text = z.string().transform(wellFormed);
const nonEmptyText = z.string().min(1).transform(wellFormed);

/** An id is an identity: rewriting a lone surrogate could make two items one, so such an id is refused. */
const identifier = z
  .union([z.string().min(1), z.number().int()])
  .transform(String)
  .refine(isWellFormed, { message: 'the id holds a lone surrogate, which no file can store as UTF-8' });
const optionalText = text.nullish().transform((value) => value ?? null);
/** `exactQuantity`: an exact integer within ±(2^53 − 1), or the item is invalid; never rounded. */
const count = z.union([z.string(), z.number()]).transform((value, ctx): number => {
  const quantity = exactQuantity(value);
  if (quantity === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `not an exact integer within ±(2^53 - 1): ${shownLiteral(value)}`,
    });
    return z.NEVER;
  }
  return quantity;
});

const flag = z.unknown().optional().transform(isPublished);
const logo = z.unknown().optional().transform(logoUrl);
const optionalPrice = z.preprocess(blankAsNull, price.nullish()).transform((value) => value ?? null);
// A photo id past 2^53 has been rounded by JSON.parse already: refused, as any value that is not exact.
const exactInteger = z.number().refine(Number.isSafeInteger, 'not an exact integer within ±(2^53 - 1)');

/** Each reading (`Reading`) as a schema. */
const READERS: { readonly [R in Reading]: z.ZodType<Readings[R]> } = {
  identifier,
  text,
  nonEmptyText,
  optionalText,
  logo,
  price,
  optionalPrice,
  count,
  flag,
  texts: z
    .array(text)
    .nullish()
    .transform((value) => value ?? []),
  integers: exactInteger
    .array()
    .nullish()
    .transform((value) => value ?? []),
};

const readers = (fields: readonly ApiField[]) =>
  Object.fromEntries(fields.map((field) => [field.member, READERS[field.reading]]));

const shopSummary = z.object(readers(SHOP_FIELDS));

/** The spec's Item, its members read in the declaration's order (which orders the reasons given). */
const apiItem = z.object({ ...readers(ITEM_MEMBERS), [SHOP_MEMBER]: shopSummary });

export type NormalisedItem = { ok: true; item: Item } | { ok: false; invalid: InvalidItem };

/** Which members of a listing element the schemas read, from their shapes: the others are `Item.raw`. */
export const ITEM_LAYOUT: ObjectLayout = {
  known: new Set(Object.keys(apiItem.shape)),
  exact: new Set(ITEM_MEMBERS.filter((field) => field.exact).map((field) => field.member)),
  nested: new Map([
    [SHOP_MEMBER, { known: new Set(Object.keys(shopSummary.shape)), exact: new Set(), nested: new Map() }],
  ]),
};

/** Identities sent as numbers are kept as their literal only when it is an integer. */
const ID_MEMBERS: ReadonlySet<string> = new Set(
  ITEM_MEMBERS.filter((field) => field.reading === 'identifier').map((field) => field.member),
);

/** A listing element as parsed: JSON.parse's value with exact numbers (`exactElement`), and `Item.raw`. */
export interface ParsedElement {
  readonly json: unknown;
  readonly raw: string;
  /** Why the element could not be read at all (it alone exceeds the response cap): it is invalid. */
  readonly unreadable?: string;
  /** The hash of the element's text as sent (`sent-text.ts`), when it was taken. */
  readonly sent?: number;
  /** The stored version read from this very text: the element needs no reading. */
  readonly unchanged?: StoredVersion;
}

/**
 * `json` (JSON.parse's value of an element) with each exact-number field it holds as a number replaced
 * by its literal text from `source` (integers only for ids). The value is changed in place: it is the
 * parser's own, and a copy of every element showed in profiles.
 */
export function exactElement(json: unknown, { numbers, unknown: raw }: ObjectSource): ParsedElement {
  // Numbers are only found in an object's text, so `json` is that object whenever there are any.
  for (const [field, literal] of numbers ?? []) {
    if (!ID_MEMBERS.has(field) || INTEGER.test(literal)) (json as Record<string, unknown>)[field] = literal;
  }
  return { json, raw };
}

const INTEGER = /^-?\d+$/;

/** One element of a listing (`json`, parsed from `text`, and changed in place) as an Item, or the
 * reason it cannot be one. */
export function normaliseItem(json: unknown, text: string, page: number): NormalisedItem {
  return normaliseElement(exactElement(json, objectSource(text, ITEM_LAYOUT, json)), page);
}

/** A parsed listing element as an Item, or the reason it cannot be one. */
export function normaliseElement(element: ParsedElement, page: number): NormalisedItem {
  if (element.unreadable !== undefined)
    return { ok: false, invalid: { id: null, page, reason: element.unreadable } };
  const item = wellFormedItem(element.json, element.raw);
  return item === undefined ? normaliseBySchema(element, page) : { ok: true, item };
}

/** `normaliseElement` by the schema alone: what `wellFormedItem` must agree with. */
export function normaliseBySchema({ json, raw }: ParsedElement, page: number): NormalisedItem {
  const parsed = apiItem.safeParse(json);
  if (!parsed.success)
    return { ok: false, invalid: { id: readableId(json), page, reason: oneLine(parsed.error) } };
  return { ok: true, item: itemOf(parsed.data as ApiItem, raw) };
}

type ApiItem = Record<string, unknown>;

/** The Item of the schema's output, whose members hold each field's value. */
function itemOf(read: ApiItem, raw: string): Item {
  const shop = read[SHOP_MEMBER] as ApiItem;
  const item: Record<string, unknown> = {};
  for (const field of API_FIELDS) item[field.name] = (field.inShop ? shop : read)[field.member];
  item.raw = raw;
  return item as Item;
}

/**
 * The id of an element with exact numbers (`exactElement`) when it has one worth reporting, whatever
 * else is wrong with it. A numeric id past 2^53 is by then its literal text: it cannot collide.
 */
export function readableId(json: unknown): string | null {
  const id = (json as { id?: unknown } | null)?.id;
  // Logged and stored beside the run: written as UTF-8, like everything else.
  if (typeof id === 'string') return id === '' ? null : wellFormed(id);
  if (typeof id === 'number' && Number.isInteger(id)) return String(id);
  return null;
}

function oneLine(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'item'}: ${issue.message}`)
    .join('; ')
    .replace(/\s+/g, ' ');
}
