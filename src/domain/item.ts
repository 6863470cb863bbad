import type { Decimal } from './decimal.js';
import { ITEM_FIELDS } from './item-fields.js';

/**
 * One item of a shop as shop-sync keeps it: the API's loose JSON normalised to exact values.
 * Its fields' representations in every file are listed once, in `item-fields.ts`.
 */
export interface Item {
  readonly id: string;
  readonly title: string;
  readonly price: Decimal;
  readonly original_price: Decimal | null;
  readonly currency: string | null;
  readonly quantity: number;
  /** `true` unless the API said `false` (the field appears only on hidden items). */
  readonly published: boolean;
  /** ISO 8601 as the API sent it. */
  readonly created_at: string;
  readonly url: string;
  readonly web_url: string | null;
  readonly photos: readonly string[];
  readonly photos_id: readonly number[];
  readonly description: string | null;
  readonly raw_description: string | null;
  readonly fbcomments: string | null;
  readonly shop_id: string;
  readonly shop_name: string;
  readonly shop_url: string;
  /** `null` when the API sends none, an empty string, or an empty object. */
  readonly shop_image: string | null;
  readonly shop_items_url: string;
  /**
   * What the API sent that the schema does not read: the item's unknown fields and, under `shop`, the
   * shop's, as a JSON object text with each value exactly as written (`{}` when there are none). Not
   * tracked.
   */
  readonly raw: string;
}

export type TrackedField = Exclude<keyof Item, 'id' | 'raw'>;

/** The fields whose change makes a new version, in the order diffs report them. */
export const TRACKED_FIELDS: readonly TrackedField[] = Object.freeze(
  ITEM_FIELDS.filter((field) => field.tracked).map((field) => field.name as TrackedField),
);

/** An item the API sent that could not be normalised: counted and reported, never silently dropped. */
export interface InvalidItem {
  /** The item's id when it had a readable one. */
  readonly id: string | null;
  readonly page: number;
  readonly reason: string;
}
