import { createRequire } from 'node:module';
import { z } from 'zod';
import { type ListingFilters, listingFiltersSchema, listingLocaleSchema } from './listing-filters.js';

/**
 * The kinds of value a setting takes. Each parses an environment string and a config file's value
 * alike, and says in `expects` what it accepts: a problem is reported as "expected <expects>", never in
 * the parsing library's words. Every refinement here carries its whole message (code `custom`), shown
 * as it is.
 */
export interface SettingType<T> {
  readonly schema: z.ZodType<T>;
  readonly expects: string;
}

function type<T>(expects: string, schema: z.ZodType<T>): SettingType<T> {
  return { schema, expects };
}

/** A type whose check is a predicate: its failure reads "expected <expects>" like any other. */
function checked<T>(expects: string, schema: z.ZodType<T>, check: (value: T) => boolean): SettingType<T> {
  return type(expects, schema.refine(check, `expected ${expects}`));
}

/** A shop name: it becomes a directory name and a Redis key, so it is short and plain. */
const SHOP_NAME_MAX = 64;
const SHOP_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
export const SHOP_NAME_RULE = `letters, digits, - and _ only, at most ${SHOP_NAME_MAX} characters`;

export function isShopName(name: string): boolean {
  return name.length <= SHOP_NAME_MAX && SHOP_NAME_PATTERN.test(name);
}

/** The documented values of on/off settings; anything else (`yes`, `on`) is a mistake worth reporting. */
const FLAG_VALUES = ['1', '0', 'true', 'false'] as const;

export const text = type('text (in YAML, quote a value that looks like a number)', z.string().min(1));
export const shopName = checked(SHOP_NAME_RULE, z.string(), isShopName);
export const flag = type(
  `one of ${FLAG_VALUES.join(', ')}`,
  z.union([z.boolean(), z.enum(FLAG_VALUES)]).transform((v) => v === true || v === '1' || v === 'true'),
);

export function oneOf<const V extends readonly [string, ...string[]]>(values: V): SettingType<V[number]> {
  return type(`one of ${values.join(', ')}`, z.enum(values));
}

export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER): SettingType<number> {
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
  return type(`a whole number ${range}`, z.coerce.number().int().min(min).max(max));
}

export function number(expects: string, check: (n: number) => boolean): SettingType<number> {
  return checked(expects, z.coerce.number(), (n) => Number.isFinite(n) && check(n));
}

export const redisUrl = checked(
  'a redis:// or rediss:// URL',
  z.string(),
  (value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol),
);

/**
 * A notification target: http(s) only, and no user or password in it, since the URL is kept in Redis
 * with each pending delivery and shown in `status`.
 */
const HTTP_URL = 'an http:// or https:// URL';
export const notifyUrl = type(
  HTTP_URL,
  z
    .string()
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
      error: `expected ${HTTP_URL}`,
      abort: true,
    })
    .refine(
      (value) => new URL(value).username === '' && new URL(value).password === '',
      'a user or password in the URL would be kept in Redis: put a token in NOTIFY_SECRET instead',
    ),
);

/**
 * How many items one run may remove before it is held: at most `items`, and at most `percent` of the
 * last complete run's items; a run is held only above every bound given, so `none` (no bound) never
 * holds. `written` is the value as the user set it, for the sentence of a held run (absent: the default).
 */
export interface RemovalLimit {
  readonly items?: number;
  readonly percent?: number;
  readonly written?: string;
}

const REMOVAL_LIMIT = 'a number of items (500), a share of the shop (10%) or none';
export const removalLimit = type<RemovalLimit>(
  REMOVAL_LIMIT,
  z.union([z.number(), z.string()]).transform((value, context): RemovalLimit => {
    const written = String(value).trim();
    if (written === 'none') return { written };
    const share = /^(\d+(?:\.\d+)?)\s*%$/.exec(written);
    if (share && Number(share[1]) <= 100) return { percent: Number(share[1]), written };
    if (/^\d+$/.test(written) && Number.isSafeInteger(Number(written)))
      return { items: Number(written), written };
    context.addIssue({ code: 'custom', message: `expected ${REMOVAL_LIMIT}` });
    return z.NEVER;
  }),
);

export const hostName = type('an IP address or a host name', z.string().regex(/^[A-Za-z0-9.:_-]+$/));
export const keyPrefix = type('letters, digits, -, _ and . only', z.string().regex(/^[A-Za-z0-9_.-]+$/));

/** A cron pattern the worker's schedulers will accept (BullMQ reads them with cron-parser too). */
export const cronPattern = type(
  'a cron pattern such as */15 * * * *',
  z.string().superRefine((pattern, context) => {
    const problem = knownCronProblem(pattern);
    if (problem !== undefined) {
      const message = `expected a cron pattern such as */15 * * * *${problem ? `; ${problem}` : ''}`;
      context.addIssue({ code: 'custom', message });
    }
  }),
);

export const locale = type('a language code such as en or it', listingLocaleSchema);
export const filters = type<ListingFilters>('the listing filters', listingFiltersSchema);

/** Ranges of the fields of a five-field pattern; a sixth, leading field is seconds. */
const CRON_FIELDS = [
  ['minute', 60],
  ['hour', 24],
  ['day of month', 31],
  ['month', 12],
  ['day of week', 7],
] as const;

/**
 * Patterns checked so far, with their problem: a fleet's shops share a few patterns, and parsing one
 * with cron-parser costs about a millisecond (a config of 1,000 shops spent 1.2 s of its start-up here).
 */
const checkedPatterns = new Map<string, string | undefined>();

function knownCronProblem(pattern: string): string | undefined {
  if (!checkedPatterns.has(pattern)) checkedPatterns.set(pattern, cronProblem(pattern));
  return checkedPatterns.get(pattern);
}

/**
 * What is wrong with a pattern in our words ('' when only cron-parser refuses it), checked first for what
 * cron-parser lets through: a wrong number of fields (`*\/99 * * *`), a step longer than its field.
 */
function cronProblem(pattern: string): string | undefined {
  const fields = pattern.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `it has ${fields.length} fields where 5 (or 6, with seconds first) are expected`;
  }
  const named = fields.length === 6 ? [['second', 60] as const, ...CRON_FIELDS] : CRON_FIELDS;
  for (const [index, field] of fields.entries()) {
    const [name, size] = named[index] as readonly [string, number];
    for (const step of field.matchAll(/\/(\d+)/g)) {
      if (Number(step[1]) < 1 || Number(step[1]) > size)
        return `the ${name} step /${step[1]} is outside 1-${size}`;
    }
  }
  // Loaded only when a pattern is set: with the default schedule, a command does not pay for cron-parser
  // and luxon at start-up.
  const { CronExpressionParser } = createRequire(import.meta.url)(
    'cron-parser',
  ) as typeof import('cron-parser');
  try {
    CronExpressionParser.parse(pattern);
  } catch {
    // cron-parser's own wording is not shown to users; the expected form is.
    return '';
  }
  return undefined;
}
