import { StoreError } from '../errors.js';
import { describeCause } from '../export/publish/cause.js';
import { isCorruptionError } from '../store/open.js';

/**
 * Runs `write`, which streams a command's output to standard output. A reader that stops early
 * (`| head`) ends the command quietly, as for any Unix filter; any other failure is a StoreError.
 */
export async function writeToStdout(write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return;
    // Damage in the store being read is the store's failure, not standard output's: the caller names it.
    if (isCorruptionError(error)) throw error;
    throw new StoreError(`Cannot write to standard output: ${describeCause(error)}`, 'stdout', false, {
      cause: error,
    });
  }
}
