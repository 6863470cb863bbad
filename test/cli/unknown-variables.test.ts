import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir('shop-sync-unknown-variables-');
});
afterAll(() => temp.cleanup());

/** The messages of the JSON log lines on `stderr`. */
function logged(stderr: string): { level: number; msg: string }[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

it('warns of an environment variable that looks like a setting but is none, with a did-you-mean, and still runs', async () => {
  const result = await runCli(['runs', '--json'], {
    DATA_DIR: temp.dir,
    MARKETPLACE_BASEURL: 'https://api.example.com',
    SYNC_PERPAGE: '50',
    OPS_PASS: 'secret-value',
    // Another program's: not ours, though they share a prefix with ours.
    REDIS_PASSWORD: 'x',
    LOG_FILE: '/tmp/x',
    SHOP_ID: '7',
  });
  expect(result.code).toBe(0);
  const warnings = logged(result.stderr)
    .filter((line) => line.level === 40)
    .map((line) => line.msg);
  expect(warnings).toEqual([
    'environment variable MARKETPLACE_BASEURL is not a shop-sync setting; did you mean MARKETPLACE_BASE_URL?',
    'environment variable OPS_PASS is not a shop-sync setting; did you mean OPS_PASSWORD?',
    'environment variable SYNC_PERPAGE is not a shop-sync setting; did you mean SYNC_PER_PAGE?',
  ]);
  expect(result.stderr).not.toContain('secret-value');
});

it('says nothing of the variables it knows, secret files included', async () => {
  const result = await runCli(['runs', '--json'], {
    DATA_DIR: temp.dir,
    MARKETPLACE_PASSWORD_FILE: '/nonexistent',
    SYNC_PER_PAGE: '50',
    OPS_PORT: '0',
  });
  expect(result.code).toBe(0);
  expect(result.stderr).toBe('');
});
