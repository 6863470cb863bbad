import fc from 'fast-check';
import type { Change } from '../../src/domain/change.js';
import { type Decimal, parseDecimal } from '../../src/domain/decimal.js';
import type { SimItem } from '../../src/simulator/index.js';
import { makeItem } from '../store/fixtures.js';

/** The formula guard as the contract words it, written out independently of the writer. */
export function guarded(text: string | null): string {
  if (text === null) return '';
  return ['=', '+', '-', '@', '\t', '\r'].some((c) => text.startsWith(c)) ? `'${text}` : text;
}

/** The `inventory.csv` record the contract promises for an item. */
export function inventoryRecord(item: SimItem): Record<string, string> {
  return {
    id: guarded(item.id),
    title: guarded(item.title),
    price: item.price,
    original_price: item.original_price ?? '',
    currency: guarded(item.currency),
    quantity: String(item.quantity),
    published: String(item.published),
    created_at: guarded(item.created_at),
    url: guarded(item.url),
    web_url: guarded(item.web_url),
    photos: guarded(item.photos.join(' ')),
    description: guarded(item.description),
    shop_id: guarded(item.shop_id),
  };
}

/** The `changes.csv` record the contract promises for a change. */
export function changeRecord(change: Change): Record<string, string> {
  const side = (value: string | number | boolean | undefined) => (value === undefined ? '' : String(value));
  return {
    change: change.change,
    id: guarded(change.id),
    title: guarded(change.title),
    changed_fields: change.fields.join('|'),
    price_before: side(change.before?.price),
    price_after: side(change.after?.price),
    quantity_before: side(change.before?.quantity),
    quantity_after: side(change.after?.quantity),
    published_before: side(change.before?.published),
    published_after: side(change.after?.published),
  };
}

export const INVENTORY_HEADER =
  'id,title,price,original_price,currency,quantity,published,created_at,url,web_url,photos,description,shop_id';
export const CHANGES_HEADER =
  'change,id,title,changed_fields,price_before,price_after,quantity_before,quantity_after,published_before,published_after';

/** Text that CSV and the formula guard care about, and any other. */
export const trickyText = fc.oneof(
  fc.string({
    unit: fc.constantFrom(
      ',',
      '"',
      '\n',
      '\r',
      '=',
      '+',
      '-',
      '@',
      '\t',
      "'",
      ' ',
      '\\',
      '\0',
      'é',
      '😀',
      'a',
    ),
  }),
  fc.string({ unit: 'binary' }),
);

/** Text SQLite keeps as it is: no lone surrogates (it stores those as U+FFFD). */
const keptText = trickyText.filter((text) => Buffer.from(text).toString() === text);
const decimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 24n }), fc.nat({ max: 30 }))
  .map(([negative, digits, scale]) => parseDecimal(`${negative ? '-' : ''}${digits}e-${scale}`) as Decimal);
/** An item with any values `inventory.csv` has to write, SQLite keeping them as they are. */
export const anyItem = fc
  .record({
    id: fc.oneof(
      fc.stringMatching(/^[a-z0-9-]{1,8}$/),
      keptText.filter((text) => text !== ''),
    ),
    title: keptText,
    price: decimal,
    original_price: fc.option(decimal, { nil: null }),
    currency: fc.option(keptText, { nil: null }),
    quantity: fc.oneof(fc.integer(), fc.constantFrom(2 ** 53 + 2, 2 ** 60, -(2 ** 55), 1e21)),
    published: fc.boolean(),
    created_at: keptText,
    url: keptText,
    web_url: fc.option(keptText, { nil: null }),
    photos: fc.array(keptText, { maxLength: 4 }),
    description: fc.option(keptText, { nil: null }),
    shop_id: keptText,
  })
  .map(({ id, ...values }) => makeItem(id, values));
