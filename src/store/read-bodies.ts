import type { KnownBody } from '../domain/unchanged-item.js';
import type { Store } from './open.js';
import { perConnection } from './per-connection.js';

/**
 * The listing bodies the store has read in full, by digest, with their elements (`KnownBodies` in
 * `src/api/listing/known-bodies.ts`): `listing_bodies`, one row a page. What a run learns and uses is
 * written with its staged pages (`write`, in their transaction); once a run completes, the bodies it
 * did not receive are dropped (`discardRunData`), so the table holds about one row per page of the shop.
 */
export class ReadBodies {
  private learnt = new Map<string, KnownBody>();
  private used = new Set<string>();
  /** Whether the store knew no body when the run began (a first sync): nothing to look up then. */
  private readonly none: boolean;

  constructor(private readonly store: Store) {
    this.none = statements(store.db).none.get() === 1;
  }

  /** Undefined too for a row that does not read as elements (the body is then read, and learnt again). */
  elementsOf(digest: string): KnownBody | undefined {
    if (this.none) return undefined;
    const text = statements(this.store.db).elements.get(digest) as string | undefined;
    const elements = text === undefined ? undefined : elementsIn(text);
    if (elements !== undefined) this.used.add(digest);
    return elements;
  }

  learn(digest: string, elements: KnownBody): void {
    this.learnt.set(digest, elements);
  }

  /** Writes the bodies learnt and notes the ones used as received by `run`, in the caller's transaction. */
  write(run: number): void {
    const s = statements(this.store.db);
    for (const [digest, elements] of this.learnt)
      s.learn.run(digest, JSON.stringify([elements.ids, elements.sent]), run);
    for (const digest of this.used) s.use.run(run, digest);
    this.learnt = new Map();
    this.used = new Set();
  }
}

const statements = perConnection((db) => ({
  none: db.prepare('SELECT NOT EXISTS (SELECT 1 FROM listing_bodies)').pluck(),
  elements: db.prepare('SELECT elements FROM listing_bodies WHERE digest = ?').pluck(),
  learn: db.prepare(
    `INSERT INTO listing_bodies (digest, elements, run) VALUES (?, ?, ?)
       ON CONFLICT (digest) DO UPDATE SET elements = excluded.elements, run = excluded.run`,
  ),
  use: db.prepare('UPDATE listing_bodies SET run = ? WHERE digest = ?'),
}));

/** The elements a row holds (`[ids, sent]`), or undefined when it holds anything else. */
function elementsIn(text: string): KnownBody | undefined {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
  const [ids, sent] = Array.isArray(row) ? (row as unknown[]) : [];
  if (!Array.isArray(ids) || !Array.isArray(sent) || ids.length === 0 || ids.length !== sent.length)
    return undefined;
  const wellFormed =
    ids.every((id) => typeof id === 'string') && sent.every((hash) => Number.isSafeInteger(hash));
  return wellFormed ? { ids, sent } : undefined;
}
