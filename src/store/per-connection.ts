import type Database from 'better-sqlite3';

/**
 * `build` run once per connection and its result kept with it (statements a hot path reuses on every
 * batch); a closed connection's entry goes with it.
 */
export function perConnection<T>(build: (db: Database.Database) => T): (db: Database.Database) => T {
  const built = new WeakMap<Database.Database, T>();
  return (db) => {
    const known = built.get(db);
    if (known !== undefined) return known;
    const fresh = build(db);
    built.set(db, fresh);
    return fresh;
  };
}
