import { expect, it } from 'vitest';
import { createLogger } from '../src/log.js';

/** What a logger at `level` writes for a warning that carries an error with a cause. */
function warnedWith(level: string): Record<string, unknown> {
  const lines: string[] = [];
  const log = createLogger(level, { write: (line: string) => lines.push(line) });
  const error = new Error('Cannot write store /data/shop/inventory.sqlite: it is corrupt', {
    cause: new Error('database disk image is malformed'),
  });
  log.warn({ err: error }, 'could not release the store after the failure');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as Record<string, unknown>;
}

it('keeps stack traces out of log lines unless LOG_LEVEL is debug or trace', () => {
  const info = warnedWith('info');
  expect(info.err).toEqual({
    type: 'Error',
    message:
      'Cannot write store /data/shop/inventory.sqlite: it is corrupt: database disk image is malformed',
  });
  expect(JSON.stringify(info)).not.toMatch(/\bat \S+ \(|stack/);
  for (const level of ['debug', 'trace']) {
    expect((warnedWith(level).err as { stack?: string }).stack).toMatch(
      /^Error: Cannot write store .*\n\s+at /,
    );
  }
});
