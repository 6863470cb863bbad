import { InvalidArgumentError } from 'commander';
import { MAX_PER_PAGE } from '../../config/app-config.js';

/** Commander argument parser for whole numbers from `min` to `max`, e.g. `--port`, `--items`. */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
      throw new InvalidArgumentError(`expected a whole number ${range}.`);
    }
    return n;
  };
}

/** Commander argument parser for flags such as `--keep`. */
export const positiveInteger = wholeNumber(1);

/** Commander argument parser for run numbers. */
export const runNumber = wholeNumber(1);

/** `--per-page`: capped like SYNC_PER_PAGE. */
export const perPage = wholeNumber(1, MAX_PER_PAGE);

/** Commander argument parser for durations such as `--timeout` and `--expires-in`: seconds above 0. */
export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n > 0 && Number.isFinite(n)))
    throw new InvalidArgumentError('expected seconds > 0.');
  return n;
}
