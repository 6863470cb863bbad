import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const cwd = mkdtempSync(path.join(tmpdir(), 'shop-sync-cli-'));

describe('shop-sync command line', () => {
  it('prints help listing the commands and exits 0', async () => {
    const result = await runCli(['--help'], {}, cwd);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: shop-sync');
    for (const command of ['sync', 'runs', 'diff', 'export', 'simulate', 'demo']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });

  it('treats an unknown flag or command as a usage error (exit 2)', async () => {
    const flag = await runCli(['--bogus'], {}, cwd);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--bogus'");
    const command = await runCli(['frobnicate'], {}, cwd);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'frobnicate'");
  });

  it('reports a configuration error in one sentence naming the setting, exit 2, no stack trace', async () => {
    const result = await runCli(['runs'], { SYNC_PER_PAGE: 'lots' }, cwd);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('SYNC_PER_PAGE="lots" is invalid');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('shows the stack trace when LOG_LEVEL=debug', async () => {
    const result = await runCli(['runs'], { SYNC_PER_PAGE: 'lots', LOG_LEVEL: 'debug' }, cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/\n\s+at /);
  });
});
