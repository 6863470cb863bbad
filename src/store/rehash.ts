import type Database from 'better-sqlite3';
import type { Decimal } from '../domain/decimal.js';
import { itemHash } from './item-row.js';

/**
 * `item_values_hash(title, price, …, shop_items_url)`: the item hash (`itemHash`) of a version's
 * tracked values as the store keeps them, for the migration that changed its definition. The
 * arguments are the columns as schema version 7 had them, in that order: the migration is history,
 * whatever the columns become.
 */
export function registerValuesHash(db: Database.Database): void {
  db.function('item_values_hash', { deterministic: true, varargs: true }, (...columns: unknown[]) => {
    const [title, price, originalPrice, currency, quantity, published, createdAt, url, webUrl] = columns;
    const [photos, photosId, description, rawDescription, fbcomments] = columns.slice(9);
    const [shopId, shopName, shopUrl, shopImage, shopItemsUrl] = columns.slice(14);
    return itemHash({
      id: '',
      title: title as string,
      price: price as Decimal,
      original_price: originalPrice as Decimal | null,
      currency: currency as string | null,
      quantity: quantity as number,
      published: published === 1,
      created_at: createdAt as string,
      url: url as string,
      web_url: webUrl as string | null,
      photos: JSON.parse(photos as string) as string[],
      photos_id: JSON.parse(photosId as string) as number[],
      description: description as string | null,
      raw_description: rawDescription as string | null,
      fbcomments: fbcomments as string | null,
      shop_id: shopId as string,
      shop_name: shopName as string,
      shop_url: shopUrl as string,
      shop_image: shopImage as string | null,
      shop_items_url: shopItemsUrl as string,
      raw: '',
    });
  });
}
