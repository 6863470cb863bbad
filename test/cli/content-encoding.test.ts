import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopPaths } from '../../src/store/paths.js';
import {
  issuedToken,
  type ScriptedAnswer,
  type ScriptedRequest,
  type ScriptedServer,
  sampleItem,
  scriptedShopEnv,
  startScripted,
} from '../api/scripted-server.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../store/fixtures.js';

/** A marketplace whose proxy starts compressing its answers unasked, in `coding` (none: as sent). */
let coding: string | undefined;
let server: ScriptedServer;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
const IDS = Array.from({ length: 120 }, (_, i) => `item-${i}`);

function encoded(answer: ScriptedAnswer): ScriptedAnswer {
  if (coding === undefined) return answer;
  const bytes = coding === 'gzip' ? gzipSync(answer.body ?? '') : Buffer.from(answer.body ?? '');
  return { ...answer, bytes, headers: { 'content-encoding': coding } };
}

function answer(request: ScriptedRequest): ScriptedAnswer {
  if (request.url.pathname === '/v1/oauth/token') return encoded(issuedToken(1, { expires_in: 7200 }));
  const page = Number(request.url.searchParams.get('page'));
  const perPage = Number(request.url.searchParams.get('per_page'));
  if (page === 0) return { status: 404, body: '{"detail":"Invalid page."}' };
  const items = IDS.slice((page - 1) * perPage, page * perPage).map((id) => sampleItem(server.baseUrl, id));
  return encoded({ status: 200, body: JSON.stringify(items) });
}

beforeAll(async () => {
  server = await startScripted(answer);
  temp = tempDir('shop-sync-content-encoding-');
  env = scriptedShopEnv(server.baseUrl, temp.dir);
});
afterAll(async () => {
  await server.close();
  temp.cleanup();
});

describe('a marketplace whose answers come compressed unasked', () => {
  let before: Buffer;

  it('syncs as before in gzip, reporting nothing changed', async () => {
    coding = undefined;
    expect((await runCli(['sync'], env)).code).toBe(0);
    before = readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv);
    coding = 'gzip';
    const result = await runCli(['sync', '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'complete', items: 120, added: 0, removed: 0 });
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv)).toEqual(before);
  });

  it('fails at once in one sentence naming a coding it cannot decode, keeping the previous data', async () => {
    coding = 'zstd';
    const result = await runCli(['sync', '--json'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'shop-sync: POST /v1/oauth/token answered in Content-Encoding "zstd", which shop-sync cannot decode (it reads gzip, deflate and br).\n',
    );
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv)).toEqual(before);
    expect(Buffer.from((await runCli(['export'], env)).stdout)).toEqual(before);
  });
});
