import type Database from 'better-sqlite3';

/**
 * SQLite computes inventory.csv's cells itself, so that no row passes through JavaScript; this is the
 * conversion where its result could differ from what JavaScript gives, with the exact range where
 * both agree and a call into JavaScript beyond it.
 */

/** Registers the JavaScript conversion the expression below calls outside that range. */
export function registerJsConversions(db: Database.Database): void {
  db.function('js_string', { deterministic: true }, (value: unknown) =>
    value === null ? null : String(value),
  );
}

/**
 * An INTEGER column's value as `String(value)` writes it: SQLite's own text for integers up to 2^53,
 * where a double's shortest form is every digit; JavaScript's otherwise.
 */
export function integerTextSql(value: string): string {
  return `CASE WHEN typeof(${value}) = 'integer' AND ${value} BETWEEN -9007199254740991 AND 9007199254740991 THEN ${value} ELSE js_string(${value}) END`;
}
