import { describe, expect, it } from 'vitest';
import { describeCause } from '../../../src/export/publish/cause.js';

describe('describeCause', () => {
  it('keeps the code and the reason of a system error, not the temporary file it names', () => {
    const error = Object.assign(new Error("EACCES: permission denied, open '/x/.inventory.csv.1.ab.tmp'"), {
      code: 'EACCES',
    });
    expect(describeCause(error)).toBe('EACCES permission denied');
  });

  it('keeps the first line of any other error, and the text of a thrown value', () => {
    expect(describeCause(new Error('disk on fire\nstack'))).toBe('disk on fire');
    expect(
      describeCause(
        Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' }),
      ),
    ).toBe('SQLITE_FULL database or disk is full');
    expect(describeCause('plain')).toBe('plain');
  });
});
