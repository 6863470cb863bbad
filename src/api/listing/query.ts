import { z } from 'zod';
import {
  type ListingFilters,
  listingFiltersSchema,
  listingLocaleSchema,
} from '../../config/listing-filters.js';
import { UsageError } from '../../errors.js';

/** How `f` travels in the query string; the spec leaves it open. `brackets`: `f[price]=…`, `dots`: `f.price=…`. */
export type FilterEncoding = 'brackets' | 'dots';

export interface ListingQuery {
  readonly perPage?: number;
  readonly order?: string;
  readonly locale?: string;
  readonly filters?: ListingFilters;
  readonly filterEncoding?: FilterEncoding;
}

const Query = z.object({
  perPage: z.number().int().positive().optional(),
  order: z.string().min(1).optional(),
  locale: listingLocaleSchema.optional(),
  filters: listingFiltersSchema.optional(),
  filterEncoding: z.enum(['brackets', 'dots']).optional(),
});

/** The query, checked before any request: a bad filter is the caller's mistake, not the server's. */
export function validateListingQuery(query: ListingQuery): ListingQuery {
  const parsed = Query.safeParse(query);
  if (parsed.success) return query;
  const issue = parsed.error.issues[0];
  const path = issue?.path ?? [];
  const name =
    path[0] === 'filters' && path[1] !== undefined ? `f[${String(path[1])}]` : path.map(String).join('.');
  throw new UsageError(
    `The listing query's ${name || 'value'} is invalid: ${issue?.message ?? 'unreadable'}.`,
  );
}

/** Path and query of one listing page. */
export function listingPath(query: ListingQuery, page: number): string {
  const params = new URLSearchParams();
  params.set('page', String(page));
  if (query.perPage !== undefined) params.set('per_page', String(query.perPage));
  if (query.order !== undefined) params.set('order', query.order);
  if (query.locale !== undefined) params.set('locale', query.locale);
  const encode = query.filterEncoding === 'dots' ? (n: string) => `f.${n}` : (n: string) => `f[${n}]`;
  for (const [name, value] of Object.entries(query.filters ?? {})) {
    if (value === undefined) continue;
    params.set(encode(name), Array.isArray(value) ? value.join(',') : String(value));
  }
  return `/v1/sell/shop/items?${params.toString()}`;
}
