import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { simulateCommand } from '../../src/cli/commands/simulate.js';
import type { CliIO } from '../../src/cli/io.js';
import {
  type ChurnFault,
  type Simulator,
  singleShopAdmin,
  startAdmin,
  startSimulator,
} from '../../src/simulator/index.js';
import { type Json, listPage, sellToken } from './client.js';

let sim: Simulator;
afterEach(() => sim.close());

/** Every page in order, one request at a time, as a naive client reads: what it saw, page by page. */
async function readAllPages(perPage: number, query = ''): Promise<string[][]> {
  const token = (await sellToken(sim)).access;
  const pages: string[][] = [];
  for (let page = 1; ; page += 1) {
    const items: Json[] = await listPage(sim, token, `per_page=${perPage}&page=${page}${query}`);
    if (items.length === 0) return pages;
    pages.push(items.map((item) => String(item.id)));
  }
}

async function churning(churn: Partial<ChurnFault>, items = 60): Promise<void> {
  sim = await startSimulator({ items, seed: 5, faults: { churn } });
}

describe('the churn fault', () => {
  it('deletes behind the reader after the chosen response, so a naive reader skips the item that moved up', async () => {
    await churning({ from: 2, times: 1, deleteAt: [0] });
    const before = sim.listedIds();
    const pages = await readAllPages(10);
    const [change, ...others] = sim.churnLog();
    expect(others).toEqual([]);
    expect(change).toMatchObject({
      seq: 1,
      kind: 'delete',
      id: before[0],
      response: 2,
      position: 0,
      side: 'behind',
    });
    // After page 2, everything moved up one place: the first item of page 3 went into page 2, already read.
    const seen = pages.flat();
    expect(seen).not.toContain(before[20]);
    expect(sim.listedIds()).toContain(before[20]);
    expect(seen.length).toBe(before.length - 1);
    expect(sim.stats().faultsInjected.churnDelete).toBe(1);
  });

  it('inserts a new item exactly at the chosen position of the newest-first listing', async () => {
    sim = await startSimulator({ items: 60, seed: 5 });
    const before = sim.listedIds();
    const changes = sim.churnNow({ insertAt: [0, 17, 60] });
    expect(changes.map((c) => [c.kind, c.position])).toEqual([
      ['insert', 0],
      ['insert', 17],
      ['insert', 60],
    ]);
    const after = sim.listedIds();
    const ids = changes.map((c) => c.id);
    expect(after.length).toBe(63);
    expect(after[0]).toBe(ids[0]);
    // Right before the item that was at 17 (which moved to 18 with the insertion at the front).
    expect(after[18]).toBe(ids[1]);
    expect(after[19]).toBe(before[17]);
    expect(after.at(-1)).toBe(ids[2]);
    expect(sim.truth().map((item) => item.id)).toEqual(after);
  });

  it('makes events from `from`, every `every` responses, at most `times`, behind and ahead as asked', async () => {
    await churning(
      { from: 2, every: 2, times: 3, deleteBehind: 1, deleteAhead: 1, insertBehind: 1, insertAhead: 1 },
      200,
    );
    const pages = await readAllPages(10);
    const log = sim.churnLog();
    expect(pages.length).toBeGreaterThan(7);
    expect([...new Set(log.map((c) => c.response))]).toEqual([2, 4, 6]);
    for (const response of [2, 4, 6]) {
      const event = log.filter((c) => c.response === response);
      expect(event.map((c) => `${c.kind} ${c.side}`).sort()).toEqual([
        'delete ahead',
        'delete behind',
        'insert ahead',
        'insert behind',
      ]);
      // Behind means before the end of the page just served (page `response`, ten items each).
      for (const c of event) expect(c.position < response * 10).toBe(c.side === 'behind');
    }
    expect(sim.churnLog(log[5]?.seq)).toEqual(log.slice(6));
  });

  it('churns the filtered listing the response was read from, with new items that match the filter', async () => {
    await churning({ deleteBehind: 1, insertBehind: 1 }, 300);
    const pages = await readAllPages(10, '&f.shipping_to=IT');
    expect(pages.length).toBeGreaterThan(3);
    const listed = new Set(sim.listedIds('f.shipping_to=IT'));
    const log = sim.churnLog();
    expect(log.every((c) => c.listing === 'newest|shipping_to=IT')).toBe(true);
    const deleted = new Set(log.filter((c) => c.kind === 'delete').map((c) => c.id));
    const inserted = log.filter((c) => c.kind === 'insert' && !deleted.has(c.id));
    expect(inserted.length).toBeGreaterThan(0);
    for (const c of inserted) expect(listed.has(c.id)).toBe(true);
    for (const c of log.filter((c) => c.kind === 'delete')) expect(sim.listedIds()).not.toContain(c.id);
  });

  it('is the same churn for the same seed and requests, and starts over when set again', async () => {
    const run = async () => {
      await churning({ deleteBehind: 2, insertAhead: 1 }, 100);
      await readAllPages(10);
      const ids = sim.churnLog().map((c) => `${c.kind} ${c.id} ${c.position}`);
      await sim.close();
      return ids;
    };
    const first = await run();
    expect(first.length).toBeGreaterThan(0);
    expect(await run()).toEqual(first);
    sim = await startSimulator({
      items: 100,
      seed: 5,
      faults: { churn: { from: 2, times: 1, deleteAt: [3] } },
    });
    await readAllPages(50);
    sim.setFaults({ churn: { from: 2, times: 1, deleteAt: [3] } });
    await readAllPages(50);
    expect(sim.churnLog().map((c) => c.response)).toEqual([2, 2]);
  });

  it('refuses churn settings that make no sense', async () => {
    sim = await startSimulator({ items: 5 });
    expect(() => sim.setFaults({ churn: { every: 0 } })).toThrow(
      'faults.churn.every must be an integer >= 1',
    );
    expect(() => sim.setFaults({ churn: { deleteAt: [-1] } })).toThrow(
      'faults.churn.deleteAt[] must be an integer >= 0',
    );
  });

  it('tells what churn did on the admin port: GET /churn?shop=1&since=n', async () => {
    await churning({ deleteBehind: 1 }, 50);
    const admin = await startAdmin(singleShopAdmin(sim), () => true, '127.0.0.1', 0);
    try {
      await readAllPages(10);
      const all = (await (await fetch(`${admin.url}/churn?shop=1`)).json()) as {
        changes: Json[];
        last: number;
      };
      expect(all.changes.length).toBe(sim.churnLog().length);
      expect(all.last).toBe(sim.churnLog().at(-1)?.seq);
      const later = (await (await fetch(`${admin.url}/churn?shop=1&since=2`)).json()) as { changes: Json[] };
      expect(later.changes.map((c) => c.seq)).toEqual(sim.churnLog(2).map((c) => c.seq));
      expect((await fetch(`${admin.url}/churn?shop=2`)).status).toBe(400);
    } finally {
      await admin.close();
    }
  });
});

describe('shop-sync simulate --churn-*', () => {
  it('serves a churning listing from the flags', async () => {
    const controller = new AbortController();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (chunk) => {
      out += String(chunk);
    });
    const io: CliIO = {
      stdout,
      stderr: new PassThrough(),
      env: {},
      cwd: process.cwd(),
      signal: controller.signal,
    };
    const running = simulateCommand(io)
      .exitOverride()
      .parseAsync(
        [
          '--port',
          '0',
          '--items',
          '30',
          '--admin-port',
          '0',
          '--churn-from',
          '1',
          '--churn-times',
          '1',
          '--churn-delete-at',
          '0,1',
        ],
        { from: 'user' },
      );
    while (!out.includes('admin listening')) await new Promise((resolve) => setTimeout(resolve, 10));
    const baseUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1] as string;
    const adminUrl = /admin listening on (http:\/\/\S+)/.exec(out)?.[1] as string;
    const token = await fetch(`${baseUrl}/v1/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: 'demo-client',
        client_secret: 'demo-secret',
        username: 'demo-owner',
        password: 'demo-password',
      }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    await fetch(`${baseUrl}/v1/sell/shop/items?per_page=5`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    const churned = (await (await fetch(`${adminUrl}/churn`)).json()) as { changes: Json[] };
    expect(churned.changes.map((c) => [c.kind, c.position, c.side])).toEqual([
      ['delete', 0, 'behind'],
      ['delete', 1, 'behind'],
    ]);
    controller.abort();
    await running;
  });
});
