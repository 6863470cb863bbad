import { Writable } from 'node:stream';
import { afterEach } from 'vitest';
import { MemoryTokenStore, type StoredToken } from '../../src/api/auth/token-store.js';
import { MarketplaceClient, type MarketplaceOptions, type ReadItemsQuery } from '../../src/api/client.js';
import type { ItemPage } from '../../src/api/listing/paginator.js';
import type { InvalidItem, Item } from '../../src/domain/item.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { SimItem, Simulator } from '../../src/simulator/index.js';

/** Retries fast enough for tests, patient enough for high fault rates. */
export const TEST_RETRY = { maxAttempts: 12, baseDelayMs: 1, maxDelayMs: 20, budgetMs: 30_000 };

export function clientFor(sim: Simulator, overrides: Partial<MarketplaceOptions> = {}): MarketplaceClient {
  return new MarketplaceClient({ baseUrl: sim.baseUrl, ...sim.credentials, retry: TEST_RETRY, ...overrides });
}

export interface Reading {
  readonly pages: ItemPage[];
  readonly items: Item[];
  readonly invalid: InvalidItem[];
  readonly duplicates: number;
}

export async function readAll(client: MarketplaceClient, query: ReadItemsQuery = {}): Promise<Reading> {
  const pages: ItemPage[] = [];
  for await (const page of client.readItems(query)) pages.push(page);
  return {
    pages,
    items: pages.flatMap((p) => p.items),
    invalid: pages.flatMap((p) => p.invalid),
    duplicates: pages.reduce((sum, p) => sum + p.duplicates, 0),
  };
}

export function withoutRaw(item: Item): SimItem {
  const { raw: _raw, ...rest } = item;
  return rest;
}

/** Items keyed by id, for comparisons that do not depend on order. */
export function byId<T extends { id: string }>(items: readonly T[]): Map<string, T> {
  return new Map(items.map((item) => [item.id, item]));
}

/** A debug-level logger whose output is kept for inspection. */
export function capturedLogger(): { logger: Logger; output: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('debug', sink), output: () => chunks.join('') };
}

/** The process token store, keeping every token it was given so tests can look for leaks. */
export class RecordingTokenStore extends MemoryTokenStore {
  readonly history: StoredToken[] = [];

  override async set(token: StoredToken): Promise<void> {
    this.history.push(token);
    await super.set(token);
  }

  tokenValues(): string[] {
    return this.history.flatMap((t) => (t.refreshToken ? [t.accessToken, t.refreshToken] : [t.accessToken]));
  }
}

/** What a test started: the marketplace it serves from and the client reading it. */
export interface Started<S extends { close(): Promise<unknown> }> {
  server: S | undefined;
  client: MarketplaceClient | undefined;
}

/** Registers an `afterEach` that closes what each test started (the client before its server) and forgets it. */
export function closedAfterEach<S extends { close(): Promise<unknown> }>(): Started<S> {
  const started: Started<S> = { server: undefined, client: undefined };
  afterEach(async () => {
    await started.client?.close();
    await started.server?.close();
    started.client = undefined;
    started.server = undefined;
  });
  return started;
}
