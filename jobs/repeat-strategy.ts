import { defaultRepeatStrategy, type RepeatOptions, type RepeatStrategy } from 'bullmq';

/** A pattern's last answer: the next run after `from` is `next`, and no run lies between them. */
interface Known {
  readonly from: number;
  readonly next: number;
}

/**
 * BullMQ's cron strategy (`defaultRepeatStrategy`, the reference, passed in by tests) answering again
 * what it answered for the same pattern when the time asked about lies between that answer's start and
 * its next run: then no run of the pattern comes sooner. A thousand shops' schedulers share a few
 * patterns, and each upsert asked cron-parser and luxon for the next run (about a millisecond each:
 * 1.5 s of a 1,000-shop worker's first start under load). Options other than a bare pattern (a start
 * or end date, a time zone, `immediately`, `every`) always go to the reference.
 */
export function rememberingRepeatStrategy(reference: RepeatStrategy = defaultRepeatStrategy): RepeatStrategy {
  const known = new Map<string, Known>();
  return (millis: number, opts: RepeatOptions, name?: string) => {
    if (!isBarePattern(opts)) return reference(millis, opts, name);
    const pattern = opts.pattern as string;
    const last = known.get(pattern);
    if (last !== undefined && millis >= last.from && millis < last.next) return last.next;
    const next = reference(millis, opts, name);
    if (typeof next === 'number') known.set(pattern, { from: millis, next });
    return next;
  };
}

function isBarePattern(opts: RepeatOptions): boolean {
  return (
    typeof opts.pattern === 'string' &&
    Object.entries(opts).every(([key, value]) => key === 'pattern' || value === undefined)
  );
}
