import { describe, expect, it } from 'vitest';
import { writeToStdout } from '../../src/cli/stdout.js';
import { StoreError } from '../../src/errors.js';

const failing = (code: string) => () =>
  Promise.reject(Object.assign(new Error(`${code}: something, write`), { code }));

describe('writeToStdout', () => {
  it('ends quietly when the reader has gone (EPIPE)', async () => {
    await expect(writeToStdout(failing('EPIPE'))).resolves.toBeUndefined();
  });

  it('turns any other failure into one sentence naming standard output', async () => {
    const error = await writeToStdout(failing('ENOSPC')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toBe('Cannot write to standard output: ENOSPC something');
  });

  it('returns what the write did when it succeeds', async () => {
    let written = false;
    await writeToStdout(async () => {
      written = true;
    });
    expect(written).toBe(true);
  });
});
