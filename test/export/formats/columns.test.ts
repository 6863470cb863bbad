import { describe, expect, it } from 'vitest';
import type { Change } from '../../../src/domain/change.js';
import type { Decimal } from '../../../src/domain/decimal.js';
import {
  CHANGE_TABLE_COLUMNS,
  CHANGES_COLUMNS,
  INVENTORY_FIELDS,
  ITEM_TABLE_COLUMNS,
  SHOP_TABLE_COLUMNS,
} from '../../../src/export/formats/columns.js';
import { makeItem } from '../../store/fixtures.js';
import { CHANGES_HEADER, INVENTORY_HEADER } from '../expected.js';

const item = makeItem('x1', {
  price: '1200.50' as Decimal,
  photos: ['https://img.example/a.jpg', 'https://img.example/b.jpg'],
  photos_id: [7, 8],
  published: false,
});
const change: Change = {
  change: 'updated',
  id: 'x1',
  title: 'Item x1',
  fields: ['price', 'published'],
  before: makeItem('x1'),
  after: item,
};

const cells = <Row>(columns: readonly { name: string; value: (row: Row) => unknown }[], row: Row) =>
  Object.fromEntries(columns.map((c) => [c.name, c.value(row)]));

describe('the column lists derived from the item fields', () => {
  it('give inventory.csv and changes.csv the contract’s columns in its order', () => {
    expect(INVENTORY_FIELDS.map((f) => f.csv.column).join(',')).toBe(INVENTORY_HEADER);
    expect(CHANGES_COLUMNS.map((c) => c.name).join(',')).toBe(CHANGES_HEADER);
  });

  it('guard text cells only: prices, quantities and flags are data', () => {
    expect(INVENTORY_FIELDS.filter((f) => !f.csv.text).map((f) => f.csv.column)).toEqual([
      'price',
      'original_price',
      'quantity',
      'published',
    ]);
    expect(CHANGES_COLUMNS.filter((c) => c.text).map((c) => c.name)).toEqual([
      'change',
      'id',
      'title',
      'changed_fields',
    ]);
  });

  it('fill the CSV cells of a change', () => {
    expect(cells(CHANGES_COLUMNS, change)).toMatchObject({
      changed_fields: 'price|published',
      price_before: '10.5',
      price_after: '1200.50',
      published_before: true,
      published_after: false,
    });
  });

  it('give snapshot.sqlite numeric prices beside their text, and the shop’s details apart', () => {
    const items = Object.fromEntries(ITEM_TABLE_COLUMNS.map((c) => [c.column, [c.sqlType, c.field.name]]));
    expect(items).toMatchObject({
      price: ['REAL', 'price'],
      price_text: ['TEXT', 'price'],
      original_price: ['REAL', 'original_price'],
      published: ['INTEGER', 'published'],
      photos: ['TEXT', 'photos'],
      photos_id: ['TEXT', 'photos_id'],
    });
    expect(Object.keys(items)).not.toContain('shop_name');
    expect(SHOP_TABLE_COLUMNS.map((c) => c.column)).toEqual([
      'shop_id',
      'shop_name',
      'shop_url',
      'shop_image',
      'shop_items_url',
    ]);
    expect(Object.fromEntries(CHANGE_TABLE_COLUMNS.map((c) => [c.column, c.value(change)]))).toMatchObject({
      price_before: 10.5,
      price_before_text: '10.5',
      price_after: 1200.5,
      published_after: 0,
    });
  });
});
