import { open } from 'node:fs/promises';

/** Flushes a file or a directory to disk: a rename or a link is durable once its directory is flushed. */
export async function fsyncPath(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
