import type { Prng } from './prng.js';

/**
 * Text that breaks naive CSV writers, spreadsheets and JSON handling. Catalogue item n uses
 * TITLE_KINDS[n % TITLE_KINDS.length], so any 50 consecutive items contain every kind.
 */
const NOUNS = ['mug', 'lamp', 'chair', 'scarf', 'poster', 'teapot', 'notebook', 'vase', 'ring', 'bag'];

type TitleKind = (noun: string, n: number) => string;

export const TITLE_KINDS: readonly TitleKind[] = [
  (noun, n) => `Handmade ${noun} ${n}`,
  (noun, n) => `${noun}, blue, 350 ml, set of ${n}`,
  (noun, n) => `The "Big" ${noun} it's ${n}" wide`,
  (noun, n) => `${noun} ${n}\nsecond line`,
  (noun, n) => `${noun} ${n}\r\nwindows line`,
  (_noun, n) => `Кружка керамическая №${n}`,
  (_noun, n) => `陶瓷杯 マグカップ ${n}号`,
  (_noun, n) => `كوب سيراميك ${n}`,
  (noun, n) => `${noun} ☕🔥 👍🏽 ${n}`,
  (_noun, n) => `=HYPERLINK("http://evil.test/${n}","click")`,
  (noun, n) => `+49 ${noun} case ${n}`,
  (noun, n) => `-20% ${noun} sale ${n}`,
  (noun, n) => `@home ${noun} ${n}`,
  (noun, n) => `\t${noun} tabbed ${n}`,
  (noun, n) => `  ${noun} padded ${n}  `,
];

export function catalogueTitle(serial: number, rng: Prng): string {
  const kind = TITLE_KINDS[serial % TITLE_KINDS.length] as TitleKind;
  return kind(rng.pick(NOUNS), serial);
}

/** A new title for a retitle mutation: nasty kinds drawn at random, tagged so it always differs. */
export function mutationTitle(rng: Prng, tag: number): string {
  const kind = rng.pick(TITLE_KINDS);
  return kind(rng.pick(NOUNS), tag);
}

/** Shared description texts: items reference them by index, which keeps a million items small. */
export const DESCRIPTIONS: readonly string[] = [
  'A plain description.',
  'Comma, separated, words, and "quoted" text.',
  'First line\nsecond line\nthird line',
  'Windows line\r\nanother line\r\n',
  'Описание на русском языке, с запятыми.',
  '这是一个描述。日本語の説明もあります。',
  'وصف المنتج باللغة العربية',
  'Emoji galore 🎉🧵🪡 and a ZWJ family 👨‍👩‍👧',
  '=1+2 looks like a formula',
  '+44 20 7946 0000',
  '-minus at the start',
  '@mention at the start',
  'Tab\tinside and a backslash \\ and a slash /',
  '<script>alert("x")</script> & ampersands',
];

/** raw_description is the HTML the seller typed; same texts wrapped so the two differ. */
export const RAW_DESCRIPTIONS: readonly string[] = DESCRIPTIONS.map((text) => `<p>${text}</p>`);

export const CURRENCIES: readonly string[] = ['EUR', 'EUR', 'EUR', 'EUR', 'EUR', 'EUR', 'EUR', 'USD', 'GBP'];

/** Countries an item may ship to (`shipping_to`), indexed by bit position. */
export const COUNTRIES: readonly string[] = ['IT', 'DE', 'FR', 'ES', 'GB', 'US', 'NL', 'AT'];

export const CATEGORY_COUNT = 12;
