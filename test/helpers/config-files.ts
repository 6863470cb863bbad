import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/errors.js';

/** A fresh folder for config files and secret files, and a way to write one into it. */
export function configFolder(prefix: string): { dir: string; file(name: string, text: string): string } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    file(name, text) {
      const p = path.join(dir, name);
      writeFileSync(p, text);
      return p;
    },
  };
}

/** The ConfigError `fn` throws; anything else fails the test. */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
