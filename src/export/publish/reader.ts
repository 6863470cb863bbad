import Database from 'better-sqlite3';
import type { Store } from '../../store/open.js';
import { storeError } from '../../store/open.js';

/**
 * A second, read-only connection to `store`'s file. Streaming a large snapshot keeps a statement
 * open across awaits; on the store's own connection that would make every other statement of the
 * process (a lease renewal, a progress update) fail as "busy" until the stream ends.
 */
export function openReader(store: Store): Store {
  let db: Database.Database;
  try {
    db = new Database(store.path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw storeError(`Cannot read store ${store.path}`, store.path, error);
  }
  return Object.freeze({
    db,
    path: store.path,
    close: () => {
      if (db.open) db.close();
    },
  });
}
