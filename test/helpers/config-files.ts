import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/errors.js';
import type { Simulator } from '../../src/simulator/index.js';

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

/**
 * A shop of the simulator `sim` (or of a fleet) as lines of a YAML config file's `shops:` mapping, then
 * `extra` lines of its own.
 */
export function simulatorShopLines(
  sim: Pick<Simulator, 'baseUrl' | 'credentials'>,
  name: string,
  extra: readonly string[] = [],
): string[] {
  const { clientId, clientSecret, username, password } = sim.credentials;
  return [
    `  ${name}:`,
    `    base_url: ${sim.baseUrl}`,
    `    client_id: ${clientId}`,
    `    client_secret: ${clientSecret}`,
    `    username: ${username}`,
    `    password: ${password}`,
    ...extra.map((line) => `    ${line}`),
  ];
}

/** `env` configured by the config file `file` instead: its one shop's settings (`SHOP_NAME`, `MARKETPLACE_*`) gone. */
export function configuredByFile(
  env: Readonly<Record<string, string>>,
  file: string,
): Record<string, string> {
  const kept = Object.entries(env).filter(([key]) => !key.startsWith('MARKETPLACE_') && key !== 'SHOP_NAME');
  return { ...Object.fromEntries(kept), SHOP_SYNC_CONFIG: file };
}
