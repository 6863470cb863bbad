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
    // The commands that need Redis are listed like the others: with their options when they have some.
    expect(result.stdout).toMatch(/^ {2}trigger \[options\] /m);
    expect(result.stdout).toMatch(/^ {2}status \[options\] /m);
    expect(result.stdout).toMatch(/^ {2}worker {2,}/m);
    for (const command of ['trigger', 'status']) {
      const help = await runCli([command, '--help'], {}, cwd);
      expect(help.stdout).toMatch(new RegExp(`^Usage: shop-sync ${command} \\[options\\]`));
    }
  });

  it('treats an unknown flag or command as a usage error (exit 2)', async () => {
    const flag = await runCli(['--bogus'], {}, cwd);
    expect(flag.code).toBe(2);
    // Worded like every other error of shop-sync.
    expect(flag.stderr).toBe("shop-sync: unknown option '--bogus'\n(add --help for usage)\n");
    const command = await runCli(['frobnicate'], {}, cwd);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe("shop-sync: unknown command 'frobnicate'\n(add --help for usage)\n");
    const value = await runCli(['sync', '--per-page', 'abc'], {}, cwd);
    expect(value.code).toBe(2);
    expect(value.stderr).toBe(
      "shop-sync: option '--per-page <n>' argument 'abc' is invalid. expected a whole number from 1 to 1000.\n",
    );
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
