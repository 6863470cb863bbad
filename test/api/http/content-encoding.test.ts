import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/errors.js';
import { closedAfterEach, readAll } from '../helpers.js';
import {
  issuedToken,
  type ScriptedAnswer,
  type ScriptedServer,
  sampleItem,
  scriptedClient,
  startScripted,
} from '../scripted-server.js';

const live = closedAfterEach<ScriptedServer>();
const IDS = Array.from({ length: 150 }, (_, i) => `item-${i}`);

/** A marketplace of `IDS` that sends every body (token answers too) through `encode`, as `encoding`. */
async function encoding(name: string, encode: (body: Buffer) => Buffer): Promise<ScriptedServer> {
  const encoded = (answer: ScriptedAnswer): ScriptedAnswer => ({
    ...answer,
    bytes: encode(Buffer.from(answer.body ?? '')),
    headers: { 'content-encoding': name },
  });
  live.server = await startScripted((request) => {
    if (request.url.pathname === '/v1/oauth/token') return encoded(issuedToken(1));
    const baseUrl = live.server?.baseUrl ?? '';
    const page = Number(request.url.searchParams.get('page'));
    const perPage = Number(request.url.searchParams.get('per_page'));
    if (page === 0) return { status: 404, body: '{"detail":"Invalid page."}' };
    const items = IDS.slice((page - 1) * perPage, page * perPage).map((id) => sampleItem(baseUrl, id));
    return encoded({ status: 200, body: JSON.stringify(items) });
  });
  return live.server;
}

describe('a marketplace that compresses its answers unasked', () => {
  it.each<[string, (body: Buffer) => Buffer]>([
    ['gzip', (body) => gzipSync(body)],
    ['x-gzip', (body) => gzipSync(body)],
    ['deflate', (body) => deflateSync(body)],
    ['deflate', (body) => deflateRawSync(body)],
    ['br', (body) => brotliCompressSync(body)],
    ['GZIP', (body) => gzipSync(body)],
    ['identity', (body) => body],
  ])('is read as %s: every item, the token included', async (name, encode) => {
    const s = await encoding(name, encode);
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client);
    expect(reading.items.map((item) => item.id)).toEqual(IDS);
  });

  it('in an encoding shop-sync cannot read fails at once, naming it', async () => {
    const s = await encoding('zstd', (body) => body);
    live.client = scriptedClient(s.baseUrl);
    const started = Date.now();
    const failure = readAll(live.client);
    await expect(failure).rejects.toBeInstanceOf(ProtocolError);
    await expect(failure).rejects.toThrow(
      'POST /v1/oauth/token answered in Content-Encoding "zstd", which shop-sync cannot decode (it reads gzip, deflate and br).',
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses a body that decompresses beyond the response cap, at once and for good', async () => {
    const s = await encoding('gzip', (body) => gzipSync(Buffer.concat([body, Buffer.alloc(4 << 20, 0x20)])));
    live.client = scriptedClient(s.baseUrl, { maxResponseBytes: 1 << 20 });
    const failure = readAll(live.client);
    await expect(failure).rejects.toBeInstanceOf(ProtocolError);
    await expect(failure).rejects.toThrow(
      'POST /v1/oauth/token failed: the response exceeded 1048576 bytes once decoded from gzip.',
    );
    expect(s.grants()).toEqual(['password']);
  });
});
