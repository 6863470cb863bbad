import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

interface Lockfile {
  readonly packages: Record<string, { hasInstallScript?: boolean }>;
}

it('names every dependency with an install script in allowScripts, so that npm ci has nothing to warn of', () => {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as Lockfile;
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
    allowScripts?: Record<string, boolean>;
  };
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .sort();
  expect(withScripts.length).toBeGreaterThan(0);
  expect(Object.keys(manifest.allowScripts ?? {}).sort()).toEqual(withScripts);
});
