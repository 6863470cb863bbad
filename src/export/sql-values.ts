import type Database from 'better-sqlite3';

/**
 * SQLite computes the feeds' values itself, so that no row passes through JavaScript; these are the
 * few conversions where its result could differ from what JavaScript gave when rows did, each with
 * the exact range where both agree and a call into JavaScript beyond it.
 */

/** Registers the JavaScript conversions the expressions below call outside that range. */
export function registerJsConversions(db: Database.Database): void {
  db.function('js_number', { deterministic: true }, (text: unknown) => (text === null ? null : Number(text)));
  db.function('js_string', { deterministic: true }, (value: unknown) =>
    value === null ? null : String(value),
  );
}

/**
 * A canonical decimal's REAL, as `Number(text)`. SQLite rounds correctly (as V8 does) whenever every
 * digit fits its 64-bit significand, which any text of up to 18 characters does; longer texts are
 * rare, and JavaScript converts them.
 */
export function decimalRealSql(text: string): string {
  return `CASE WHEN ${text} IS NULL THEN NULL WHEN length(${text}) <= 18 THEN CAST(${text} AS REAL) ELSE js_number(${text}) END`;
}

/**
 * An INTEGER column's value as `String(value)` writes it: SQLite's own text for integers up to 2^53,
 * where a double's shortest form is every digit; JavaScript's otherwise.
 */
export function integerTextSql(value: string): string {
  return `CASE WHEN typeof(${value}) = 'integer' AND ${value} BETWEEN -9007199254740991 AND 9007199254740991 THEN ${value} ELSE js_string(${value}) END`;
}
