import { priceMillis, type SimRecord } from './record.js';
import { COUNTRIES } from './texts.js';

export type OrderName = 'newest' | 'title' | 'price_desc';

export interface ListingFilters {
  categoryIds?: readonly number[];
  featured?: boolean;
  onSale?: boolean;
  /** Inclusive, in whole currency units. */
  price?: { low: number; high: number };
  promotable?: boolean;
  shippingTo?: string;
}

export interface ListingQuery {
  page: number;
  perPage: number;
  order: OrderName;
  filters: ListingFilters;
  /** Identifies the filter set, for caching filtered listings. Empty when there are no filters. */
  filterKey: string;
}

/** A query the server refuses with 422: `error` is the machine code, `message` one sentence. */
export class QueryError extends Error {
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

const ORDERS: Record<string, OrderName> = {
  '': 'newest',
  newest: 'newest',
  title: 'title',
  price_desc: 'price_desc',
};
const FILTER_NAMES = new Set(['category_ids', 'featured', 'on_sale', 'price', 'promotable', 'shipping_to']);
const FILTER_KEY = /^f(?:\[([^\]]*)\]|\.(.*))$/;

function positiveInteger(name: string, value: string | null, fallback: number): number {
  if (value === null) return fallback;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) {
    throw new QueryError('invalid_parameter', `${name} must be a positive integer, got "${value}"`);
  }
  return Number(value);
}

function booleanFilter(name: string, value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new QueryError('invalid_filter', `f[${name}] must be true, false, 1 or 0, got "${value}"`);
}

function parseFilter(filters: ListingFilters, name: string, value: string): void {
  switch (name) {
    case 'category_ids': {
      if (value === '') return;
      if (!/^\d+(,\d+)*$/.test(value)) {
        throw new QueryError('invalid_filter', `f[category_ids] must be comma-separated integers like 1,2`);
      }
      filters.categoryIds = value.split(',').map(Number);
      return;
    }
    case 'price': {
      const match = /^(\d{1,9})\.\.(\d{1,9})$/.exec(value);
      if (!match || Number(match[1]) > Number(match[2])) {
        throw new QueryError('invalid_filter', 'f[price] must look like 10..50 (low..high, low <= high)');
      }
      filters.price = { low: Number(match[1]), high: Number(match[2]) };
      return;
    }
    case 'shipping_to':
      if (!/^[A-Z]{2}$/.test(value)) {
        throw new QueryError('invalid_filter', 'f[shipping_to] must be two uppercase letters like IT');
      }
      filters.shippingTo = value;
      return;
    case 'featured':
      filters.featured = booleanFilter(name, value);
      return;
    case 'on_sale':
      filters.onSale = booleanFilter(name, value);
      return;
    case 'promotable':
      filters.promotable = booleanFilter(name, value);
      return;
  }
}

/** Reads `f[name]=value` and its alias `f.name=value`. */
function parseFilters(params: URLSearchParams): { filters: ListingFilters; filterKey: string } {
  const filters: ListingFilters = {};
  const keyParts: string[] = [];
  for (const [key, value] of params) {
    const match = FILTER_KEY.exec(key);
    if (!match) continue;
    const name = match[1] ?? match[2] ?? '';
    if (!FILTER_NAMES.has(name)) {
      throw new QueryError(
        'invalid_filter',
        `unknown filter "${key}"; known: ${[...FILTER_NAMES].join(', ')}`,
      );
    }
    parseFilter(filters, name, value);
    keyParts.push(`${name}=${value}`);
  }
  return { filters, filterKey: keyParts.sort().join('&') };
}

export function parseListingQuery(
  params: URLSearchParams,
  limits: { defaultPerPage: number; perPageCap: number },
): ListingQuery {
  const page = positiveInteger('page', params.get('page'), 1);
  const perPage = Math.min(
    positiveInteger('per_page', params.get('per_page'), limits.defaultPerPage),
    limits.perPageCap,
  );
  const orderParam = params.get('order') ?? '';
  const order = ORDERS[orderParam];
  if (order === undefined) {
    throw new QueryError(
      'invalid_parameter',
      `order must be one of title, price_desc (or absent), got "${orderParam}"`,
    );
  }
  const locale = params.get('locale');
  if (locale !== null && !/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,4})?$/.test(locale)) {
    throw new QueryError(
      'invalid_parameter',
      `locale must be a short language code like en or it-IT, got "${locale}"`,
    );
  }
  return { page, perPage, order, ...parseFilters(params) };
}

export function matchesFilters(record: SimRecord, filters: ListingFilters): boolean {
  if (filters.featured !== undefined && record.featured !== filters.featured) return false;
  if (filters.promotable !== undefined && record.promotable !== filters.promotable) return false;
  if (filters.onSale !== undefined && (record.originalUnits !== null) !== filters.onSale) return false;
  if (
    filters.categoryIds &&
    !filters.categoryIds.some((id) => id >= 1 && id <= 31 && record.categories & (1 << (id - 1)))
  ) {
    return false;
  }
  if (filters.shippingTo !== undefined) {
    const bit = COUNTRIES.indexOf(filters.shippingTo);
    if (bit < 0 || !(record.shipping & (1 << bit))) return false;
  }
  if (filters.price) {
    const millis = priceMillis(record);
    if (millis < filters.price.low * 1000 || millis > filters.price.high * 1000) return false;
  }
  return true;
}
