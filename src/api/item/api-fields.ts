import type { Decimal } from '../../domain/decimal.js';
import {
  declaration,
  FIELD_NAMES,
  type FieldDeclaration,
  type FieldKind,
  type FieldName,
} from '../../domain/item.js';

/**
 * How a field is read from the API, and what it reads as: the schema (item-schema.ts) and its fast
 * path (well-formed-item.ts) each implement every reading, so the two choose readers alike.
 */
export interface Readings {
  identifier: string;
  text: string;
  nonEmptyText: string;
  optionalText: string | null;
  logo: string | null;
  price: Decimal;
  optionalPrice: Decimal | null;
  count: number;
  flag: boolean;
  texts: readonly string[];
  integers: readonly number[];
}

export type Reading = keyof Readings;

/** The reading of a field declared as `declared`. */
function readingOf({ kind, nullable, nonEmpty }: FieldDeclaration): Reading {
  switch (kind) {
    case 'id':
      return 'identifier';
    case 'text':
      return nonEmpty ? 'nonEmptyText' : nullable ? 'optionalText' : 'text';
    case 'image':
      return 'logo';
    case 'decimal':
      return nullable ? 'optionalPrice' : 'price';
    case 'integer':
      return 'count';
    case 'boolean':
      return 'flag';
    case 'texts':
    case 'integers':
      return kind;
  }
}

/** Where the API's item holds each field (the item's declaration, `domain/item.ts`, says). */
export interface ApiField {
  readonly name: FieldName;
  readonly reading: Reading;
  /**
   * Whether a JSON number is read from its literal text (`ITEM_LAYOUT`), so that no double rounds it:
   * for the item's own members that hold numbers (the shop's id is read as JSON.parse gives it).
   */
  readonly exact: boolean;
  /** The member that holds it: of the item, or of the item's `shop` when `inShop`. */
  readonly member: string;
  readonly inShop: boolean;
}

/** The member of the API's item holding its shop's summary. */
export const SHOP_MEMBER = 'shop';
const SHOP_PREFIX = `${SHOP_MEMBER}.`;

const EXACT_KINDS: ReadonlySet<FieldKind> = new Set(['id', 'decimal', 'integer']);

function apiField(name: FieldName): ApiField {
  const declared = declaration(name);
  const inShop = declared.from !== undefined;
  return Object.freeze({
    name,
    reading: readingOf(declared),
    exact: !inShop && EXACT_KINDS.has(declared.kind),
    member: inShop ? declared.from.slice(SHOP_PREFIX.length) : name,
    inShop,
  });
}

/** Every field, in the declaration's order. */
export const API_FIELDS: readonly ApiField[] = Object.freeze(FIELD_NAMES.map(apiField));

/** The fields the item holds itself. */
export const ITEM_MEMBERS: readonly ApiField[] = API_FIELDS.filter((field) => !field.inShop);

/** The fields the item's `shop` holds. */
export const SHOP_FIELDS: readonly ApiField[] = API_FIELDS.filter((field) => field.inShop);
