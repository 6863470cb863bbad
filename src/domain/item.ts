import type { Decimal } from './decimal.js';

/**
 * The item, declared once: its TypeScript type (`Item`), the API members it is read from, the store's
 * columns, the diff's tracked fields and every feed's columns derive from this table (`item-fields.ts`
 * for the files, `api/api-fields.ts` for the API). The entries' order is the order diffs report
 * changed fields; `inventory.csv`'s order (the contract's) is `csv`.
 */

/**
 * What a field holds. `id`: an identity, sent as text or an integer; `image`: an image's URL, which
 * the API may send as an object holding `url`; `texts` and `integers`: lists.
 */
export type FieldKind = 'id' | 'text' | 'image' | 'decimal' | 'integer' | 'boolean' | 'texts' | 'integers';

/** The value of each kind of field. */
interface KindValues {
  id: string;
  text: string;
  image: string;
  decimal: Decimal;
  integer: number;
  boolean: boolean;
  texts: readonly string[];
  integers: readonly number[];
}

export interface FieldDeclaration {
  readonly kind: FieldKind;
  /** Whether the item may lack it (`null`). */
  readonly nullable?: true;
  /** Text that is never empty (an empty one makes the item invalid). */
  readonly nonEmpty?: true;
  /** The member of the API's item that holds it when not its name; `shop.x` is `x` of the item's `shop`. */
  readonly from?: `shop.${string}`;
  /** Its position among `inventory.csv`'s columns, when it has one. */
  readonly csv?: number;
  /**
   * Shown before and after on changes: on every change (`changes.csv`, `diff`'s table and JSON), or
   * only in `diff --format json`.
   */
  readonly changeSide?: 'every' | 'json';
  /**
   * Whose identity it is: the item's (the one field whose change does not make a new version) or its
   * shop's (which keys `snapshot.sqlite`'s `shops` table).
   */
  readonly identifies?: 'item' | 'shop';
  /** The shop's details, the same on every item of a shop: `snapshot.sqlite` keeps them once a shop. */
  readonly perShop?: true;
}

const ITEM_DECLARATION = {
  id: { kind: 'id', csv: 0, identifies: 'item' },
  price: { kind: 'decimal', csv: 2, changeSide: 'every' },
  original_price: { kind: 'decimal', nullable: true, csv: 3, changeSide: 'json' },
  quantity: { kind: 'integer', csv: 5, changeSide: 'every' },
  /** `true` unless the API said `false` (the member appears only on hidden items). */
  published: { kind: 'boolean', csv: 6, changeSide: 'every' },
  title: { kind: 'text', csv: 1 },
  currency: { kind: 'text', nullable: true, csv: 4 },
  /** ISO 8601 as the API sent it. */
  created_at: { kind: 'text', nonEmpty: true, csv: 7 },
  url: { kind: 'text', nonEmpty: true, csv: 8 },
  web_url: { kind: 'text', nullable: true, csv: 9 },
  photos: { kind: 'texts', csv: 10 },
  photos_id: { kind: 'integers' },
  description: { kind: 'text', nullable: true, csv: 11 },
  raw_description: { kind: 'text', nullable: true },
  fbcomments: { kind: 'text', nullable: true },
  shop_id: { kind: 'id', from: 'shop.id', csv: 12, identifies: 'shop' },
  shop_name: { kind: 'text', from: 'shop.name', perShop: true },
  shop_url: { kind: 'text', nonEmpty: true, from: 'shop.url', perShop: true },
  /** `null` when the API sends none, an empty string, or an empty object. */
  shop_image: { kind: 'image', nullable: true, from: 'shop.image', perShop: true },
  shop_items_url: { kind: 'text', nonEmpty: true, from: 'shop.items_url', perShop: true },
} as const satisfies Record<string, FieldDeclaration>;

export type FieldName = keyof typeof ITEM_DECLARATION;

/** The value of a field declared as `D`. */
type FieldValue<D extends FieldDeclaration> = D extends { readonly nullable: true }
  ? KindValues[D['kind']] | null
  : KindValues[D['kind']];

/**
 * One item of a shop as shop-sync keeps it: the API's loose JSON normalised to exact values, and `raw`:
 * what the API sent that no field reads (the item's unknown members and, under `shop`, the shop's), as
 * a JSON object text with each value exactly as written (`{}` when there are none). `raw` is not tracked.
 */
export type Item = {
  readonly [Name in FieldName | 'raw']: Name extends FieldName
    ? FieldValue<(typeof ITEM_DECLARATION)[Name]>
    : string;
};

/** The fields in the declaration's order. */
export const FIELD_NAMES: readonly FieldName[] = Object.freeze(Object.keys(ITEM_DECLARATION) as FieldName[]);

type IdentityField = {
  [Name in FieldName]: (typeof ITEM_DECLARATION)[Name] extends { identifies: 'item' } ? Name : never;
}[FieldName];

export type TrackedField = Exclude<FieldName, IdentityField>;

/** The fields whose change makes a new version, in the order diffs report them. */
export const TRACKED_FIELDS: readonly TrackedField[] = Object.freeze(
  FIELD_NAMES.filter((name): name is TrackedField => declaration(name).identifies !== 'item'),
);

type ChangeSideField<Where> = {
  [Name in FieldName]: (typeof ITEM_DECLARATION)[Name] extends { changeSide: Where } ? Name : never;
}[FieldName];

/** A field shown before and after on every change. */
export type SideField = ChangeSideField<'every'>;

/** The fields shown before and after on every change (`changes.csv`, `diff`'s table), in order. */
export const SIDE_FIELDS: readonly SideField[] = Object.freeze(
  FIELD_NAMES.filter((name): name is SideField => declaration(name).changeSide === 'every'),
);

/** The fields `diff --format json` shows before and after on every change, in order. */
export const JSON_SIDE_FIELDS: readonly ChangeSideField<'every' | 'json'>[] = Object.freeze(
  FIELD_NAMES.filter(
    (name): name is ChangeSideField<'every' | 'json'> => declaration(name).changeSide !== undefined,
  ),
);

/** How `name` is declared, as a `FieldDeclaration`. */
export function declaration(name: FieldName): FieldDeclaration {
  return ITEM_DECLARATION[name];
}

/** An item the API sent that could not be normalised: counted and reported, never silently dropped. */
export interface InvalidItem {
  /** The item's id when it had a readable one. */
  readonly id: string | null;
  readonly page: number;
  readonly reason: string;
}
