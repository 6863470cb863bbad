import { close, fsync, open } from 'node:fs';

/**
 * Flushes a file or a directory to disk: a rename or a link is durable once its directory is flushed.
 * Through file descriptors rather than a `FileHandle`: a feed's publication flushes about ten paths,
 * and a `FileHandle`'s promises cost about twice the CPU (125-175 µs a path against 70).
 */
export function fsyncPath(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    open(file, 'r', (opening, fd) => {
      if (opening) return reject(opening);
      fsync(fd, (syncing) => {
        close(fd, (closing) => {
          const failure = syncing ?? closing;
          if (failure) reject(failure);
          else resolve();
        });
      });
    });
  });
}
