import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressLine, progressText } from '../../src/cli/progress.js';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, text: () => chunks.join('') };
}

describe('the sync progress line', () => {
  it('shows pages, items and the rate', () => {
    expect(progressText('Syncing shop', { phase: 'reading', pages: 3, items: 300, invalid: 0 }, 1500)).toBe(
      'Syncing shop: 3 pages, 300 items (200 items/s)',
    );
    expect(progressText('Syncing shop', { phase: 'reading', pages: 1, items: 9, invalid: 1 }, 0)).toBe(
      'Syncing shop: 1 pages, 9 items, 1 invalid (0 items/s)',
    );
  });

  it('redraws in place at most every 100 ms and erases itself at the end', async () => {
    let now = 1_000;
    const out = capture();
    const line = new ProgressLine(out.stream, 'Syncing s', () => now);
    now += 50;
    line.update({ phase: 'reading', pages: 1, items: 10, invalid: 0 });
    now += 50;
    line.update({ phase: 'reading', pages: 2, items: 20, invalid: 0 });
    now += 60;
    line.update({ phase: 'reading', pages: 3, items: 30, invalid: 0 });
    line.clear();
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.text()).toBe(
      '\r\u001b[KSyncing s: 1 pages, 10 items (200 items/s)\r\u001b[KSyncing s: 3 pages, 30 items (188 items/s)\r\u001b[K',
    );
  });

  it('writes nothing at all when it never drew', async () => {
    const out = capture();
    new ProgressLine(out.stream, 'Syncing s').clear();
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.text()).toBe('');
  });
});
