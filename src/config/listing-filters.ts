import { z } from 'zod';

/**
 * The listing's filters `f` and `locale` as the spec lists them: the client sends them and the
 * configuration loader checks a shop's with the same rules, so a bad filter fails at start-up.
 */
export interface ListingFilters {
  readonly category_ids?: readonly number[] | string;
  readonly featured?: boolean;
  readonly on_sale?: boolean;
  /** `low..high` in whole currency units, e.g. `10..50`. */
  readonly price?: string;
  readonly promotable?: boolean;
  /** Two uppercase letters, e.g. `IT`. */
  readonly shipping_to?: string;
}

export const listingFiltersSchema = z.strictObject({
  category_ids: z
    .union(
      [
        z.array(z.number().int('must be whole numbers').nonnegative('must not be negative')),
        z.string().regex(/^\d+(,\d+)*$/, 'must look like 1,2,3'),
      ],
      { error: 'must be a list of ids such as [1, 2] or "1,2"' },
    )
    .optional(),
  featured: z.boolean().optional(),
  on_sale: z.boolean().optional(),
  price: z
    .string()
    .regex(/^\d+\.\.\d+$/, 'must look like 10..50')
    .refine((range) => {
      const bounds = /^(\d+)\.\.(\d+)$/.exec(range);
      return !bounds || BigInt(bounds[1] ?? 0) <= BigInt(bounds[2] ?? 0);
    }, 'must not start above its end')
    .optional(),
  promotable: z.boolean().optional(),
  shipping_to: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be two uppercase letters such as IT')
    .optional(),
});

export const listingLocaleSchema = z
  .string()
  .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a language code such as en or it');
