import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findShop } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { startSimulator } from '../../src/simulator/index.js';
import { runSync } from '../../src/sync/index.js';
import { simConfig, tempDir } from '../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;

/** A shop whose CSV is far larger than a pipe's buffer, so that a reader leaving early is noticed. */
beforeAll(async () => {
  temp = tempDir('shop-sync-export-stdout-');
  const sim = await startSimulator({ items: 1500, seed: 2 });
  try {
    const config = simConfig(sim, temp.dir);
    await runSync(findShop(config, 'shop'), { config, log: silentLogger() });
  } finally {
    await sim.close();
  }
});
afterAll(() => temp.cleanup());

interface Outcome {
  code: number | null;
  stderr: string;
}

/** Runs `export` with stdout going to `stdout`: a file descriptor, or a pipe read until `readBytes`. */
function exportTo(stdout: number | 'pipe', readBytes = 0): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve('bin/shop-sync.js'), 'export'], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: temp.dir, SHOP_NAME: 'shop', LOG_LEVEL: 'silent' },
      stdio: ['ignore', stdout, 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let read = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read >= readBytes) child.stdout?.destroy();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('shop-sync export to standard output', () => {
  it('stops quietly when the reader stops reading (| head)', async () => {
    expect(await exportTo('pipe', 1)).toEqual({ code: 0, stderr: '' });
  });

  it.skipIf(!existsSync('/dev/full'))(
    'fails with exit 1 and the cause when stdout cannot be written',
    async () => {
      const full = openSync('/dev/full', 'w');
      try {
        expect(await exportTo(full)).toEqual({
          code: 1,
          stderr: 'shop-sync: Cannot write to standard output: ENOSPC no space left on device\n',
        });
      } finally {
        closeSync(full);
      }
    },
  );
});
