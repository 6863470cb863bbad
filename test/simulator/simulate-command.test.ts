import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { simulateCommand } from '../../src/cli/commands/simulate.js';
import type { CliIO } from '../../src/cli/io.js';

function harness() {
  const controller = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => {
    out += String(chunk);
  });
  stderr.on('data', (chunk) => {
    err += String(chunk);
  });
  const io: CliIO = { stdout, stderr, env: {}, cwd: process.cwd(), signal: controller.signal };
  const command = simulateCommand(io)
    .exitOverride()
    .configureOutput({ writeOut: (text) => stdout.write(text), writeErr: (text) => stderr.write(text) });
  return { command, controller, out: () => out, err: () => err };
}

async function firstLine(read: () => string): Promise<string> {
  while (!read().includes('\n')) await new Promise((resolve) => setImmediate(resolve));
  return read().split('\n')[0] as string;
}

describe('shop-sync simulate', () => {
  it('prints the base URL and demo credentials, serves with the given faults, and stops on abort', async () => {
    const { command, controller, out } = harness();
    const running = command.parseAsync(
      ['--port', '0', '--items', '7', '--rate-5xx', '1', '--username', 'ann'],
      {
        from: 'user',
      },
    );
    const line = await firstLine(out);
    const baseUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1] as string;
    expect(line).toContain('7 items, seed 1');
    expect(line).toContain('MARKETPLACE_USERNAME=ann MARKETPLACE_PASSWORD=demo-password');
    const token = await fetch(`${baseUrl}/v1/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: 'demo-client',
        client_secret: 'demo-secret',
        username: 'ann',
        password: 'demo-password',
      }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const page = await fetch(`${baseUrl}/v1/sell/shop/items`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(page.status).toBeGreaterThanOrEqual(500);
    controller.abort();
    await running;
    await expect(fetch(`${baseUrl}/v1/sell/shop/items`)).rejects.toThrow();
  });

  it('serves false ends, lossy short pages and a dripping body as its flags ask', async () => {
    const { command, controller, out } = harness();
    const flags = ['--port', '0', '--items', '30', '--false-end-pages', '2', '--lossy-short-page-rate', '1'];
    const running = command.parseAsync([...flags, '--drip-ms', '1', '--default-per-page', '5'], {
      from: 'user',
    });
    const baseUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(await firstLine(out))?.[1] as string;
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
    const page = (n: number) =>
      fetch(`${baseUrl}/v1/sell/shop/items?page=${n}`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
    expect((await page(2)).status).toBe(404);
    const items = (await (await page(2)).json()) as unknown[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThan(5);
    controller.abort();
    await running;
  });

  it.each([
    [['--false-end-pages', '1,2'], 'expected page numbers >= 2, separated by commas.'],
    [['--drip-ms', '0'], 'expected a whole number of at least 1.'],
    [
      ['--items', 'many'],
      "option '--items <n>' argument 'many' is invalid. expected a whole number of at least 0.",
    ],
    [['--rate-429', '1.5'], 'expected a probability from 0 to 1.'],
    [['--retry-after', 'soon'], 'expected whole seconds or "date".'],
    [['--expires-in', '0'], 'expected seconds > 0.'],
    [['--move-insert-every', '0'], 'expected a whole number of at least 1.'],
  ])('refuses %j as a usage error', async (argv, message) => {
    const { command, err } = harness();
    await expect(command.parseAsync(argv, { from: 'user' })).rejects.toMatchObject({
      code: 'commander.invalidArgument',
    });
    expect(err()).toContain(message);
  });
});
