import type { CompleteRunMessages } from '../store/run-records.js';

/** One wording, for every command, of a run asked for by number that is missing or not complete. */
export function runMessages(shop: string, use: 'compared' | 'exported'): CompleteRunMessages {
  return {
    missing: (run) => `Run ${run} does not exist in shop ${shop}.`,
    incomplete: (run, status) =>
      `Run ${run} of shop ${shop} is not complete (${status}): only complete runs can be ${use}.`,
  };
}
