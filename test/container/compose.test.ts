import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findShop, loadConfig, requireConnection } from '../../src/config/app-config.js';
import { tempDir } from '../store/fixtures.js';

interface Service {
  command?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  secrets?: string[];
  volumes?: string[];
  ports?: string[];
  init?: boolean;
}
interface Compose {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
}

const compose = parse(readFileSync('compose.yaml', 'utf8')) as Compose;
const redis = compose.services.redis as Service;
const worker = compose.services.worker as Service;

let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir('shop-sync-compose-');
});
afterEach(() => temp.cleanup());

describe('compose.yaml', () => {
  it('runs Redis with an append-only file, no eviction and a health check', () => {
    const command = (redis.command ?? []).join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--maxmemory-policy noeviction');
    expect(redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(redis.volumes?.some((v) => v.endsWith(':/data'))).toBe(true);
  });

  it('starts the worker once Redis is healthy, with its data at /data and the ops port published', () => {
    expect(worker.command).toEqual(['worker']);
    expect(worker.depends_on?.redis?.condition).toBe('service_healthy');
    expect(worker.volumes?.some((v) => v.endsWith(':/data'))).toBe(true);
    const opsPort = worker.environment?.OPS_PORT;
    expect(worker.ports).toContainEqual(`127.0.0.1:${opsPort}:${opsPort}`);
  });

  it('gives every secret as a *_FILE from compose secrets, and the loader accepts the whole environment', () => {
    const env = { ...worker.environment };
    // The ops login's user name is not a secret (Prometheus' scrape config shows it); its password is.
    const secretVars = Object.keys(env).filter(
      (name) => /SECRET|PASSWORD|CLIENT_ID|USERNAME/.test(name) && name !== 'OPS_USERNAME',
    );
    expect(secretVars.length).toBe(6);
    for (const name of secretVars) {
      expect(name).toMatch(/_FILE$/);
      const secret = path.basename(env[name] as string);
      expect(env[name]).toBe(`/run/secrets/${secret}`);
      expect(worker.secrets).toContain(secret);
      expect(compose.secrets[secret]?.file).toBe(`./secrets/${secret}`);
      // As the container sees it: the secret's file, here in a temporary directory.
      const file = path.join(temp.dir, secret);
      writeFileSync(file, `${secret}-value\n`);
      env[name] = file;
    }
    const config = loadConfig({ ...env, DATA_DIR: temp.dir });
    expect(config.opsPort).toBe(9464);
    expect(config.opsHost).toBe('0.0.0.0');
    expect(config.opsLogin?.username).toBe('prometheus');
    expect(config.redisUrl).toBe('redis://redis:6379');
    expect(requireConnection(findShop(config, 'main')).password).toBe('marketplace_password-value');
  });
});

describe('.dockerignore', () => {
  it('keeps the host’s modules, builds, data, secrets and history out of the build context', () => {
    const ignored = readFileSync('.dockerignore', 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', 'secrets', '.git']) expect(ignored).toContain(entry);
  });
});
