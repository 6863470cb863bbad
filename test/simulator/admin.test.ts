import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminServer,
  type SimItem,
  type Simulator,
  singleShopAdmin,
  startAdmin,
  startSimulator,
} from '../../src/simulator/index.js';
import { getPath, sellToken } from './client.js';

let sim: Simulator;
let admin: AdminServer;
beforeAll(async () => {
  sim = await startSimulator({ items: 30, seed: 3 });
  admin = await startAdmin(singleShopAdmin(sim), () => true, '127.0.0.1', 0);
});
afterAll(async () => {
  await admin.close();
  await sim.close();
});

const post = (path: string, body: string) => fetch(`${admin.url}${path}`, { method: 'POST', body });

/** The item as its URL sends it now. */
async function sent(id: string): Promise<Record<string, unknown>> {
  const { access } = await sellToken(sim);
  return (await (await getPath(sim, `/v1/items/${id}`, access)).json()) as Record<string, unknown>;
}

const ids = () => new Set(sim.truth().map((item) => item.id));

describe('POST /mutate on the admin port', () => {
  it('applies a body with every member the README documents, and answers what changed', async () => {
    const [poisoned, padded] = sim.truth().slice(-2) as SimItem[];
    const before = ids();
    const first = await post(
      '/mutate?shop=1',
      JSON.stringify({ remove: 1, poison: [{ id: poisoned?.id, field: 'title', json: '"poisoned"' }] }),
    );
    expect(await first.json()).toEqual({ added: 0, removed: 1, updated: 0 });
    const [removed] = [...before].filter((id) => !ids().has(id));
    expect((await sent(poisoned?.id as string)).title).toBe('poisoned');

    const body = {
      prices: 1,
      quantities: 1,
      publish: 1,
      titles: 1,
      representation: 1,
      add: 1,
      remove: 1,
      restore: [removed],
      poison: [{ id: padded?.id, field: 'price', hex: '22313222', padZeros: 3 }],
      cure: [poisoned?.id],
    };
    const second = await post('/mutate', JSON.stringify(body));
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ added: 2, removed: 1, updated: 4 });
    expect(ids().has(removed as string)).toBe(true);
    expect((await sent(padded?.id as string)).price).toBe('10002');
    expect((await sent(poisoned?.id as string)).title).toBe(poisoned?.title);
  });

  it('refuses a malformed body with 400 and a sentence naming what is wrong, changing nothing', async () => {
    const listed = (sim.truth()[0] as SimItem).id;
    const size = sim.truth().length;
    const cases: Array<[path: string, body: string, message: string]> = [
      ['/mutate', 'prices=3', 'request body is not valid JSON (Unexpected token'],
      ['/mutate', '[{"prices":3}]', 'JSON request body must be an object, got [{"prices":3}]'],
      ['/mutate', 'null', 'JSON request body must be an object, got null'],
      [
        '/mutate',
        '{"price":3}',
        'mutation has no member "price" (it has prices, quantities, publish, titles, representation, add, remove, restore, poison, cure)',
      ],
      ['/mutate', '{"prices":"3"}', 'mutation.prices must be a non-negative integer, got "3"'],
      ['/mutate', '{"add":-1}', 'mutation.add must be a non-negative integer, got -1'],
      ['/mutate', '{"titles":1.5}', 'mutation.titles must be a non-negative integer, got 1.5'],
      ['/mutate', '{"restore":"abc"}', 'mutation.restore must be a list of item ids, got "abc"'],
      ['/mutate', '{"prices":2,"cure":[1]}', 'mutation.cure[0] must be a non-empty string, got 1'],
      [
        '/mutate',
        `{"poison":{"id":"${listed}"}}`,
        `mutation.poison must be a list of poisons, got {"id":"${listed}"}`,
      ],
      ['/mutate', '{"poison":[null]}', 'mutation.poison[0] must be a JSON object, got null'],
      ['/mutate', `{"poison":[{"id":"${listed}","json":"1"}]}`, 'mutation.poison[0] needs field'],
      [
        '/mutate',
        `{"poison":[{"id":"${listed}","field":"price"}]}`,
        'mutation.poison[0] needs exactly one of json and hex',
      ],
      [
        '/mutate',
        `{"poison":[{"id":"${listed}","field":"price","json":"1","hex":"31"}]}`,
        'mutation.poison[0] needs exactly one of json and hex',
      ],
      [
        '/mutate',
        `{"poison":[{"id":"${listed}","field":"price","json":1}]}`,
        'mutation.poison[0].json must be JSON text, got 1',
      ],
      [
        '/mutate',
        `{"poison":[{"id":"${listed}","field":"price","hex":"zz"}]}`,
        'mutation.poison[0].hex must be bytes as pairs of hex digits, got "zz"',
      ],
      [
        '/mutate',
        `{"poison":[{"id":"${listed}","field":"price","json":"1","padZeros":-1}]}`,
        'mutation.poison[0].padZeros must be an integer from 0 to 536870912, got -1',
      ],
      [
        '/mutate',
        `{"poison":[{"id":"${listed}","field":"price","value":"1"}]}`,
        'mutation.poison[0] has no member "value" (it has id, field, json, hex, padZeros)',
      ],
      [
        '/mutate',
        '{"prices":3,"poison":[{"id":"nope","field":"price","json":"1"}]}',
        'cannot poison nope: it is not listed',
      ],
      [
        '/mutate',
        `{"remove":${size},"cure":["${listed}"]}`,
        `mutation touches ${size} items but the catalogue lists ${size - 1} besides the 1 it poisons or cures`,
      ],
      ['/mutate?shop=abc', '{"prices":1}', 'shop must be an integer >= 1, got "abc"'],
      ['/mutate?shop=2', '{"prices":1}', 'no shop 2: this simulator serves one shop'],
      ['/faults', '{"latencyMs":', 'request body is not valid JSON (Unexpected end of JSON input)'],
    ];
    const before = sim.truth();
    for (const [path, body, message] of cases) {
      const response = await post(path, body);
      const answer = (await response.json()) as { error: string; message: string };
      expect({ path, body, status: response.status, error: answer.error }).toEqual({
        path,
        body,
        status: 400,
        error: 'bad_request',
      });
      expect(answer.message.startsWith(message), `${body}: ${answer.message}`).toBe(true);
    }
    expect(sim.truth()).toEqual(before);
  });
});
