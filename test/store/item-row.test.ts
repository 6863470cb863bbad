import { describe, expect, it } from 'vitest';
import { type Decimal, parseDecimal } from '../../src/domain/decimal.js';
import { TRACKED_FIELDS } from '../../src/domain/item.js';
import { ITEM_COLUMNS, itemAt, itemHash, itemValues, rowToItem } from '../../src/store/item-row.js';
import { valuesHash } from '../../src/store/values-hash.js';
import { makeItem } from './fixtures.js';

const decimal = (text: string) => parseDecimal(text) as Decimal;

describe('item rows', () => {
  const item = makeItem('a-1', {
    title: 'Chair "Oak", 2 pcs',
    price: decimal('1234.5'),
    original_price: decimal('1500'),
    quantity: 0,
    published: false,
    photos: ['https://img.example/1.jpg', 'https://img.example/2.jpg'],
    photos_id: [11, 12],
    description: 'Line one\nline two',
    shop_image: null,
  });

  it('round-trips an item exactly through its row values', () => {
    const values = itemValues(item, itemHash(item));
    expect(values).toHaveLength(ITEM_COLUMNS.length);
    expect(rowToItem(values)).toEqual(item);
  });

  it('stores booleans as 0/1 and lists as JSON text, in ITEM_COLUMNS order', () => {
    const at = (column: (typeof ITEM_COLUMNS)[number]) => values[ITEM_COLUMNS.indexOf(column)];
    const values = itemValues(item, 42);
    expect(at('id')).toBe('a-1');
    expect(at('hash')).toBe(42);
    expect(at('published')).toBe(0);
    expect(itemValues({ ...item, published: true }, 1)[ITEM_COLUMNS.indexOf('published')]).toBe(1);
    expect(at('photos')).toBe('["https://img.example/1.jpg","https://img.example/2.jpg"]');
    expect(at('photos_id')).toBe('[11,12]');
    expect(at('price')).toBe('1234.5');
    expect(rowToItem(itemValues({ ...item, photos: [], photos_id: [] }, 1))).toMatchObject({
      photos: [],
      photos_id: [],
    });
  });

  it('reads the item at an offset of a side-by-side row, and null where a LEFT JOIN found none', () => {
    const other = makeItem('b-2', { published: true });
    const row = [...itemValues(item, 1), ...itemValues(other, 2)];
    expect(itemAt(row, 0)).toEqual(item);
    expect(itemAt(row, ITEM_COLUMNS.length)).toEqual(other);
    const missing = [...itemValues(item, 1), ...ITEM_COLUMNS.map(() => null)];
    expect(itemAt(missing, ITEM_COLUMNS.length)).toBeNull();
  });

  it('hashes equal values equally whatever their representation, and differing values differently', () => {
    const fromText = makeItem('a-1', { price: decimal('10.50'), raw: '{"id":"a-1","price":"10.50"}' });
    const fromNumber = makeItem('a-1', {
      price: parseDecimal(10.5) as Decimal,
      raw: '{"id":"a-1","price":10.5}',
    });
    expect(itemHash(fromText)).toBe(itemHash(fromNumber));
    expect(itemHash(fromText)).not.toBe(itemHash({ ...fromText, price: decimal('10.51') }));
    expect(itemHash(fromText)).not.toBe(itemHash({ ...fromText, published: false }));
    expect(itemHash(fromText)).not.toBe(itemHash({ ...fromText, photos: ['https://img.example/x.jpg'] }));
  });

  it('is the values hash of the tracked values, a safe integer', () => {
    expect(itemHash(item)).toBe(valuesHash(TRACKED_FIELDS.map((f) => item[f])));
    expect(Number.isSafeInteger(itemHash(item))).toBe(true);
  });
});
