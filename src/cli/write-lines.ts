import { once } from 'node:events';

/** Writes lines to `out`, waiting for it to drain when it asks to: memory stays flat for long outputs. */
export async function writeLines(out: NodeJS.WritableStream, lines: Iterable<string>): Promise<void> {
  for (const line of lines) {
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  }
}
