import { describe, expect, it } from 'vitest';
import { JSON_SIDE_FIELDS, SIDE_FIELDS, TRACKED_FIELDS } from '../../src/domain/item.js';
import { ITEM_FIELDS, ITEM_KEY, itemField, SHOP_KEY, storedValue } from '../../src/domain/item-fields.js';
import { ITEM_COLUMNS } from '../../src/store/item-row.js';
import { makeItem } from '../store/fixtures.js';

describe('the item fields table', () => {
  it('lists every field of an item but its raw JSON, once', () => {
    const names = ITEM_FIELDS.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.sort()).toEqual(
      Object.keys(makeItem('a'))
        .filter((key) => key !== 'raw')
        .sort(),
    );
  });

  it('is where the tracked fields and the store’s item columns come from', () => {
    expect(TRACKED_FIELDS).toEqual(ITEM_FIELDS.filter((f) => f.name !== 'id').map((f) => f.name));
    expect(ITEM_COLUMNS).toEqual(['id', 'hash', ...TRACKED_FIELDS, 'raw']);
    expect(TRACKED_FIELDS.slice(0, 4)).toEqual(['price', 'original_price', 'quantity', 'published']);
  });

  it('gives the contract’s change sides and the keys of items and shops', () => {
    expect(SIDE_FIELDS).toEqual(['price', 'quantity', 'published']);
    expect(JSON_SIDE_FIELDS).toEqual(['price', 'original_price', 'quantity', 'published']);
    expect([ITEM_KEY.name, SHOP_KEY.name]).toEqual(['id', 'shop_id']);
  });

  it('says how each kind is kept', () => {
    expect(itemField('price')).toMatchObject({ sqlType: 'TEXT', nullable: false, tracked: true });
    expect(itemField('price').snapshot.map((c) => [c.column, c.sqlType])).toEqual([
      ['price', 'REAL'],
      ['price_text', 'TEXT'],
    ]);
    expect(itemField('published')).toMatchObject({ sqlType: 'INTEGER', csv: { text: false } });
    expect(itemField('photos_id').csv).toBeUndefined();
    expect(itemField('shop_name').table).toBe('shops');
    expect([storedValue(true), storedValue(false), storedValue(['a']), storedValue(null)]).toEqual([
      1,
      0,
      '["a"]',
      null,
    ]);
  });
});
