import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runNode } from '../../bench/faults/processes.js';
import { UNFINISHED } from '../../src/cli/exit-guard.js';
import { tempDir } from '../store/fixtures.js';

/** The built guard (global setup builds dist/), loaded by a real child process as the CLI loads it. */
const GUARD = pathToFileURL(path.resolve('dist/src/cli/exit-guard.js')).href;

const temp = tempDir('shop-sync-exit-guard-');
afterAll(() => temp.cleanup());

/** Runs `body` in a fresh node process after `const guard = installExitGuard()`. */
async function withGuard(name: string, body: string) {
  const script = path.join(temp.dir, `${name}.mjs`);
  writeFileSync(
    script,
    `import { installExitGuard } from '${GUARD}';\nconst guard = installExitGuard();\n${body}\n`,
  );
  return runNode(script, [], {});
}

describe('the exit guard: a process exits 0 only when its command settled with 0', () => {
  it('a command whose promise never settles exits 1 with one sentence, not 0 in silence', async () => {
    const result = await withGuard('never', 'new Promise(() => {}).then((code) => guard.settle(code));');
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: `${UNFINISHED}\n` });
  });

  it('an event loop that drains while the command still waits (its last timer gone) exits 1', async () => {
    const result = await withGuard(
      'drain',
      `const outcome = new Promise((resolve) => { const t = setTimeout(() => resolve(0), 60_000); setTimeout(() => clearTimeout(t), 20); });
outcome.then((code) => guard.settle(code));`,
    );
    expect(result).toMatchObject({ code: 1, stderr: `${UNFINISHED}\n` });
  });

  it('a process.exit(0) from anywhere before the command settled exits 1', async () => {
    const result = await withGuard('early-exit', 'setTimeout(() => process.exit(0), 10);');
    expect(result).toMatchObject({ code: 1, stderr: `${UNFINISHED}\n` });
  });

  it('a settled command exits with its own status, and the guard stays silent', async () => {
    expect(await withGuard('ok', 'Promise.resolve(0).then((code) => guard.settle(code));')).toMatchObject({
      code: 0,
      stderr: '',
    });
    expect(await withGuard('failed', 'Promise.resolve(2).then((code) => guard.settle(code));')).toMatchObject(
      { code: 2, stderr: '' },
    );
    // Settled, then ended deliberately (a closed pipe): the status it was given.
    expect(await withGuard('deliberate', 'guard.settle(0); process.exit();')).toMatchObject({
      code: 0,
      stderr: '',
    });
  });
});
