import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/errors.js';
import { commitFiles, prepareStream, writeFileAtomic } from '../../../src/export/publish/atomic.js';
import { tempDir } from '../../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir('shop-sync-atomic-');
});
afterEach(() => temp.cleanup());

const text = (content: string) => async (out: NodeJS.WritableStream) => {
  out.write(content);
};

describe('writeFileAtomic', () => {
  it('replaces the file and leaves nothing else beside it', async () => {
    const file = path.join(temp.dir, 'feeds', 'out.csv');
    await writeFileAtomic(file, text('first\n'));
    await writeFileAtomic(file, text('second\n'));
    expect(readFileSync(file, 'utf8')).toBe('second\n');
    expect(readdirSync(path.dirname(file))).toEqual(['out.csv']);
  });

  it('keeps the previous file and removes the temporary one when writing fails midway', async () => {
    const file = path.join(temp.dir, 'out.csv');
    writeFileSync(file, 'previous\n');
    const failing = async (out: NodeJS.WritableStream) => {
      out.write('half of the new');
      throw new Error('the source broke');
    };

    const error = await writeFileAtomic(file, failing, { label: 'feed' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toBe(`Cannot write feed ${file}: the source broke`);
    expect((error as StoreError).path).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe('previous\n');
    expect(readdirSync(temp.dir)).toEqual(['out.csv']);
  });

  it('names the file and the cause when its directory cannot be created', async () => {
    const blocker = path.join(temp.dir, 'not-a-dir');
    writeFileSync(blocker, 'a file');
    const file = path.join(blocker, 'feeds', 'out.csv');

    await expect(writeFileAtomic(file, text('x'))).rejects.toThrow(
      `Cannot write ${file}: ENOTDIR not a directory`,
    );
    expect(readFileSync(blocker, 'utf8')).toBe('a file');
  });
});

describe('commitFiles', () => {
  it('replaces none of a set when one target cannot be replaced', async () => {
    const good = path.join(temp.dir, 'inventory.csv');
    const blocked = path.join(temp.dir, 'changes.csv');
    writeFileSync(good, 'previous inventory\n');
    mkdirSync(blocked);
    const prepared = [
      await prepareStream(good, text('new inventory\n'), { label: 'feed' }),
      await prepareStream(blocked, text('new changes\n'), { label: 'feed' }),
    ];

    await expect(commitFiles(prepared)).rejects.toThrow(`Cannot write feed ${blocked}: EISDIR`);
    expect(readFileSync(good, 'utf8')).toBe('previous inventory\n');
    expect(readdirSync(temp.dir).sort()).toEqual(['changes.csv', 'inventory.csv']);
  });
});
