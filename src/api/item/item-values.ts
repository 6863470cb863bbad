/** How the item schema reads the values that servers spell in many ways; shared by `item-schema.ts`
 * and its fast path, `well-formed-item.ts`, so that the two cannot read them differently. */

/** An empty or blank string stands for an absent value, like null. */
export function isBlank(value: unknown): boolean {
  return typeof value === 'string' && value.trim() === '';
}

/** Only an explicit false hides an item; servers spell it `false`, `"false"`, `0` or `"0"`. */
export function isPublished(value: unknown): boolean {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : value;
  return !(text === false || text === 'false' || text === 0 || text === '0');
}

/** A logo URL, directly or as an object's `url`; the sample's empty object, an empty string and null
 * all mean "no logo". */
export function logoUrl(value: unknown): string | null {
  const url = typeof value === 'object' && value !== null ? (value as { url?: unknown }).url : value;
  return typeof url === 'string' && url.trim() !== '' ? wellFormed(url) : null;
}

/** A quantity as sent: whole digits, optionally with a fraction of zeros only ("3", "3.0", "-2"). */
const EXACT_INTEGER = /^-?\d+(?:\.0+)?$/;

/**
 * A quantity, exactly: an integer within ±(2^53 − 1), which a JavaScript number holds without rounding,
 * sent as a safe integer number or as its digits (JSON numbers reach the schema as their literal text:
 * `ITEM_LAYOUT`). Anything else, "9007199254740993" included, is not a quantity: never round it.
 */
export function exactQuantity(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!EXACT_INTEGER.test(text)) return undefined;
  // Number() of the digits is exact exactly when the result is a safe integer (and `-0` is 0).
  const quantity = Number(text) || 0;
  return Number.isSafeInteger(quantity) ? quantity : undefined;
}

/** The lone-surrogate checks of ES2024, which Node 20 has and the project's ES2023 types lack. */
interface WellFormable {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** Whether `text` can be written as UTF-8 (no lone surrogate). */
export function isWellFormed(text: string): boolean {
  return (text as unknown as WellFormable).isWellFormed();
}

/**
 * `text` with each lone surrogate (a JSON "\ud800" escape) replaced by U+FFFD, as every feed is UTF-8 and
 * SQLite would otherwise store the surrogate's bytes, which are not. Bytes that were not UTF-8 in the
 * body already arrive as U+FFFD (the body is decoded that way).
 */
export function wellFormed(text: string): string {
  const formable = text as unknown as WellFormable;
  return formable.isWellFormed() ? text : formable.toWellFormed();
}
