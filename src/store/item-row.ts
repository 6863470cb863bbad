import { createHash } from 'node:crypto';
import type { Decimal } from '../domain/decimal.js';
import { type Item, TRACKED_FIELDS } from '../domain/item.js';

/** An item as SQLite holds it: booleans as 0/1, arrays as JSON text. */
export interface ItemRow {
  id: string;
  hash: string;
  title: string;
  price: string;
  original_price: string | null;
  currency: string | null;
  quantity: number;
  published: 0 | 1;
  created_at: string;
  url: string;
  web_url: string | null;
  photos: string;
  photos_id: string;
  description: string | null;
  raw_description: string | null;
  fbcomments: string | null;
  shop_id: string;
  shop_name: string;
  shop_url: string;
  shop_image: string | null;
  shop_items_url: string;
  raw: string;
}

/** The item columns shared by `item_versions` and `staged_items`, in a fixed order. */
export const ITEM_COLUMNS: readonly (keyof ItemRow)[] = ['id', 'hash', ...TRACKED_FIELDS, 'raw'];

/**
 * Identity of an item's tracked values: equal values give equal hashes whatever the API's
 * representation was, because the values are canonical before they get here.
 */
export function itemHash(item: Item): string {
  const values = TRACKED_FIELDS.map((field) => item[field]);
  return createHash('sha1').update(JSON.stringify(values)).digest('hex');
}

export function itemToRow(item: Item): ItemRow {
  return {
    id: item.id,
    hash: itemHash(item),
    title: item.title,
    price: item.price,
    original_price: item.original_price,
    currency: item.currency,
    quantity: item.quantity,
    published: item.published ? 1 : 0,
    created_at: item.created_at,
    url: item.url,
    web_url: item.web_url,
    photos: JSON.stringify(item.photos),
    photos_id: JSON.stringify(item.photos_id),
    description: item.description,
    raw_description: item.raw_description,
    fbcomments: item.fbcomments,
    shop_id: item.shop_id,
    shop_name: item.shop_name,
    shop_url: item.shop_url,
    shop_image: item.shop_image,
    shop_items_url: item.shop_items_url,
    raw: item.raw,
  };
}

export function rowToItem(row: ItemRow): Item {
  return {
    id: row.id,
    title: row.title,
    price: row.price as Decimal,
    original_price: row.original_price as Decimal | null,
    currency: row.currency,
    quantity: row.quantity,
    published: row.published === 1,
    created_at: row.created_at,
    url: row.url,
    web_url: row.web_url,
    photos: JSON.parse(row.photos) as string[],
    photos_id: JSON.parse(row.photos_id) as number[],
    description: row.description,
    raw_description: row.raw_description,
    fbcomments: row.fbcomments,
    shop_id: row.shop_id,
    shop_name: row.shop_name,
    shop_url: row.shop_url,
    shop_image: row.shop_image,
    shop_items_url: row.shop_items_url,
    raw: row.raw,
  };
}

/** `prefix.column AS alias_column, ...` for selecting two item rows side by side. */
export function aliasedColumns(table: string, alias: string): string {
  return ITEM_COLUMNS.map((c) => `${table}.${c} AS ${alias}${c}`).join(', ');
}

/** The row whose columns were selected with `aliasedColumns(_, alias)`, or null when absent. */
export function unaliasRow(row: Record<string, unknown>, alias: string): ItemRow | null {
  if (row[`${alias}id`] === null) return null;
  const out: Record<string, unknown> = {};
  for (const c of ITEM_COLUMNS) out[c] = row[`${alias}${c}`];
  return out as unknown as ItemRow;
}
