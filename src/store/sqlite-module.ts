import { createRequire } from 'node:module';

/**
 * Where better-sqlite3 resolves from here, for the store's threads (`verify.ts`, `keeper.ts`): their
 * code is evaluated CommonJS, which requires the driver by this path from the sources, dist/ and the
 * bundle alike.
 */
export const SQLITE_MODULE = createRequire(import.meta.url).resolve('better-sqlite3');
