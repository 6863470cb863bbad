import { InvalidArgumentError } from 'commander';

/** Commander argument parser for flags such as `--per-page` and `--keep`. */
export function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('expected a positive whole number.');
  return Number(value);
}

/** Commander argument parser for run numbers. */
export function runNumber(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('a run is a positive whole number.');
  return Number(value);
}
