import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressLine, progressText, StatusLine } from '../../src/cli/progress.js';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, text: () => chunks.join('') };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the sync progress line', () => {
  it('names the phase and shows pages, items and the rate', () => {
    expect(progressText('Syncing shop', { phase: 'reading', pages: 3, items: 300, invalid: 0 }, 1500)).toBe(
      'Syncing shop, reading pages: 3 pages, 300 items (200 items/s)',
    );
    expect(progressText('Syncing shop', { phase: 'feeds', pages: 1, items: 9, invalid: 1 }, 0)).toBe(
      'Syncing shop, writing feeds: 1 pages, 9 items, 1 invalid (0 items/s)',
    );
  });

  it('redraws in place at most every 100 ms, a new phase at once, and erases itself at the end', async () => {
    let now = 1_000;
    const out = capture();
    const line = new ProgressLine(new StatusLine(out.stream), 'Syncing s', () => now);
    now += 50;
    line.update({ phase: 'reading', pages: 1, items: 10, invalid: 0 });
    now += 50;
    line.update({ phase: 'reading', pages: 2, items: 20, invalid: 0 });
    line.update({ phase: 'committing', pages: 2, items: 20, invalid: 0 });
    line.clear();
    await settle();
    expect(out.text()).toBe(
      '\r\u001b[KSyncing s, reading pages: 1 pages, 10 items (200 items/s)' +
        '\r\u001b[KSyncing s, committing: 2 pages, 20 items (200 items/s)\r\u001b[K',
    );
  });

  it('clears itself before a log line and draws itself again under it', async () => {
    const out = capture();
    const status = new StatusLine(out.stream);
    status.write('before\n');
    status.show('progress');
    status.write('{"level":30}\n');
    status.clear();
    status.write('after\n');
    await settle();
    expect(out.text()).toBe('before\n\r\u001b[Kprogress\r\u001b[K{"level":30}\nprogress\r\u001b[Kafter\n');
  });

  it('writes nothing at all when it never drew', async () => {
    const out = capture();
    new ProgressLine(new StatusLine(out.stream), 'Syncing s').clear();
    await settle();
    expect(out.text()).toBe('');
  });
});
