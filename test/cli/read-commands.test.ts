import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  temp = tempDir('shop-sync-read-');
  const demo = await runCli(['demo', '--items', '300'], { DATA_DIR: temp.dir });
  expect(demo.code).toBe(0);
});
afterAll(() => temp.cleanup());

/** Runs the CLI and closes its stdout after the first chunk, as `| head -c 1` does. */
function runIntoClosedPipe(args: readonly string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve('bin/shop-sync.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('reading commands', () => {
  it('read a shop that has a store but no configuration, such as the demo', async () => {
    const runs = await runCli(['runs', '--shop', 'demo', '--json'], { DATA_DIR: temp.dir });
    expect(runs.stderr).toBe('');
    expect((JSON.parse(runs.stdout) as { status: string }[]).map((r) => r.status)).toEqual([
      'complete',
      'complete',
    ]);
    const diff = await runCli(['diff', '--shop', 'demo', '--format', 'json'], { DATA_DIR: temp.dir });
    expect(JSON.parse(diff.stdout)).toMatchObject({ shop: 'demo', from: 1, to: 2 });
  });

  it('still refuse a shop that has neither configuration nor store, naming the configured ones', async () => {
    for (const shop of ['nowhere', '../demo']) {
      const result = await runCli(['runs', '--shop', shop], { DATA_DIR: temp.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `shop-sync: Shop "${shop}" is not configured (configured shops: default) and DATA_DIR (${temp.dir}) holds no store for it.\n`,
      );
    }
  });

  it('end quietly with exit 0 when the reader closes the pipe early', async () => {
    for (const format of ['table', 'csv', 'json']) {
      const result = await runIntoClosedPipe(['diff', '--shop', 'demo', '--format', format], {
        DATA_DIR: temp.dir,
      });
      expect(result).toEqual({ code: 0, stderr: '' });
    }
    const exported = await runIntoClosedPipe(['export', '--shop', 'demo'], { DATA_DIR: temp.dir });
    expect(exported).toEqual({ code: 0, stderr: '' });
  });
});
