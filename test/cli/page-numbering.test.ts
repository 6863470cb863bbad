import { readFileSync } from 'node:fs';
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

/**
 * The spec shows no default and no base for `page`. A marketplace that numbers its pages from 0 answers
 * `page=1` with its second page: a reading that starts there misses the first page and still sees a
 * listing that ends well. This one switches numbering between syncs, as a marketplace upgraded under
 * the shop would.
 */
const SENTENCE =
  'The marketplace answered page 0 (GET /v1/sell/shop/items?page=0&per_page=100) with items that the listing read from page 1 never showed: it seems to number its pages from 0, so the listing cannot be read completely.';

let server: ScriptedServer;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let ids: string[] = [];
let firstPage = 1;

function answer(request: ScriptedRequest): ScriptedAnswer {
  if (request.url.pathname === '/v1/oauth/token') return issuedToken(1, { expires_in: 7200 });
  const item = /^\/v1\/items\/(.+)$/.exec(request.url.pathname)?.[1];
  if (item !== undefined) {
    return ids.includes(item)
      ? { status: 200, body: JSON.stringify(sampleItem(server.baseUrl, item)) }
      : { status: 404, body: '{"detail":"Not found."}' };
  }
  const page = Number(request.url.searchParams.get('page'));
  const perPage = Number(request.url.searchParams.get('per_page'));
  // Django REST Framework's answer to a page it does not have, page 0 included when it numbers from 1.
  if (page < firstPage) return { status: 404, body: '{"detail":"Invalid page."}' };
  const start = (page - firstPage) * perPage;
  const items = ids.slice(start, start + perPage).map((id) => sampleItem(server.baseUrl, id));
  return { status: 200, body: JSON.stringify(items) };
}

const catalogue = (count: number) => Array.from({ length: count }, (_, i) => `item-${1000 + i}`);

beforeAll(async () => {
  server = await startScripted(answer);
  temp = tempDir('shop-sync-page-numbering-');
  env = scriptedShopEnv(server.baseUrl, temp.dir);
});
afterAll(async () => {
  await server.close();
  temp.cleanup();
});

describe('a marketplace that numbers its pages from 0', () => {
  let before: Buffer;

  it('is read completely while it numbers them from 1 (page 0 answered 404)', async () => {
    ids = catalogue(250);
    firstPage = 1;
    const result = await runCli(['sync', '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'complete', items: 250, added: 250 });
    before = readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv);
  });

  it.each([
    ['several pages', 250],
    ['fewer items than one page, all of them on page 0', 50],
  ])('fails in one sentence over %s, keeping the previous data and feeds', async (_kind, count) => {
    ids = catalogue(count);
    firstPage = 0;
    const result = await runCli(['sync', '--json'], env);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`shop-sync: ${SENTENCE}\n`);
    expect(result.code).toBe(1);
    const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as {
      status: string;
      error: string | null;
    }[];
    expect(runs.at(-1)).toMatchObject({ status: 'failed', error: SENTENCE });
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv)).toEqual(before);
    expect(Buffer.from((await runCli(['export'], env)).stdout)).toEqual(before);
  });

  it('fails again when the next sync resumes the failed run', async () => {
    ids = catalogue(250);
    firstPage = 0;
    const latest = async () =>
      (
        JSON.parse((await runCli(['runs', '--json'], env)).stdout) as { status: string; attempts: number }[]
      ).at(-1);
    const first = await runCli(['sync', '--json'], env);
    const attempts = (await latest())?.attempts ?? 0;
    const resumed = await runCli(['sync', '--json'], env);
    for (const result of [first, resumed]) {
      expect(result.stderr).toBe(`shop-sync: ${SENTENCE}\n`);
      expect(result.code).toBe(1);
    }
    expect(await latest()).toMatchObject({ status: 'failed', attempts: attempts + 1 });
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv)).toEqual(before);
  });

  it('syncs again, reporting nothing changed, once it numbers its pages from 1 again', async () => {
    ids = catalogue(250);
    firstPage = 1;
    const result = await runCli(['sync', '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: 'complete',
      items: 250,
      added: 0,
      updated: 0,
      removed: 0,
    });
  });
});
