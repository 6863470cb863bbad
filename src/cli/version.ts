import { readFileSync } from 'node:fs';

/**
 * The package's version from its package.json, found from this module's place whether it runs from
 * `src/` (tests) or `dist/src/` (the built command).
 */
export function packageVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'shop-sync' && manifest.version) return manifest.version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error('cannot find the package.json of shop-sync');
}
