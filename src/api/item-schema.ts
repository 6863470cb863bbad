import { z } from 'zod';
import { type Decimal, parseDecimal } from '../domain/decimal.js';
import type { InvalidItem, Item } from '../domain/item.js';

/**
 * The spec's Item and Shop summary, read tolerantly where the spec and its samples disagree (prices as
 * numbers or strings, `shop.image` as `{}`, optional fields absent or null) and normalised to `Item`.
 */

const decimal = z.union([z.string(), z.number()]).transform((value, ctx): Decimal => {
  const parsed = parseDecimal(value);
  if (parsed === undefined) {
    ctx.addIssue({ code: 'custom', message: `not a decimal number: ${JSON.stringify(value).slice(0, 40)}` });
    return z.NEVER;
  }
  return parsed;
});

const identifier = z.union([z.string().min(1), z.number().int()]).transform(String);
const optionalText = z
  .string()
  .nullish()
  .transform((value) => value ?? null);
const count = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^-?\d+$/)
    .transform(Number),
]);

/** A logo URL; the sample's empty object, an empty string and null all mean "no logo". */
const shopImage = z
  .union([z.string(), z.null(), z.strictObject({})])
  .optional()
  .transform((value) => (typeof value === 'string' && value !== '' ? value : null));

const shopSummary = z.looseObject({
  id: identifier,
  url: z.string().min(1),
  name: z.string(),
  image: shopImage,
  items_url: z.string().min(1),
});

const apiItem = z.looseObject({
  id: identifier,
  title: z.string(),
  currency: optionalText,
  description: optionalText,
  raw_description: optionalText,
  published: z.boolean().nullish(),
  url: z.string().min(1),
  created_at: z.string().min(1),
  price: decimal,
  original_price: decimal.nullish(),
  photos_id: z.array(z.number().int()).nullish(),
  photos: z.array(z.string()).nullish(),
  fbcomments: optionalText,
  shop: shopSummary,
  quantity: count,
  web_url: optionalText,
});

export type NormalisedItem = { ok: true; item: Item } | { ok: false; invalid: InvalidItem };

/** One element of a listing (`json`, parsed from `raw`) as an Item, or the reason it cannot be one. */
export function normaliseItem(json: unknown, raw: string, page: number): NormalisedItem {
  const parsed = apiItem.safeParse(json);
  if (!parsed.success)
    return { ok: false, invalid: { id: readableId(json), page, reason: oneLine(parsed.error) } };
  const a = parsed.data;
  return {
    ok: true,
    item: {
      id: a.id,
      title: a.title,
      price: a.price,
      original_price: a.original_price ?? null,
      currency: a.currency,
      quantity: a.quantity,
      published: a.published !== false,
      created_at: a.created_at,
      url: a.url,
      web_url: a.web_url,
      photos: a.photos ?? [],
      photos_id: a.photos_id ?? [],
      description: a.description,
      raw_description: a.raw_description,
      fbcomments: a.fbcomments,
      shop_id: a.shop.id,
      shop_name: a.shop.name,
      shop_url: a.shop.url,
      shop_image: a.shop.image,
      shop_items_url: a.shop.items_url,
      raw,
    },
  };
}

/** The element's id when it has one worth reporting, whatever else is wrong with it. */
export function readableId(json: unknown): string | null {
  if (typeof json !== 'object' || json === null) return null;
  const id = (json as { id?: unknown }).id;
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number' && Number.isInteger(id)) return String(id);
  return null;
}

function oneLine(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'item'}: ${issue.message}`)
    .join('; ')
    .replace(/\s+/g, ' ');
}
