import { defaultRepeatStrategy, type RepeatStrategy } from 'bullmq';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rememberingRepeatStrategy } from '../../jobs/repeat-strategy.js';
import '../fast-check-seed.js';

const PATTERNS = [
  '*/15 * * * *',
  '0 0 1 1 *',
  '5 4 * * sun',
  '0 */2 * * *',
  '*/10 * * * * *',
  '30 9 1-7 * mon',
  '0 0 29 2 *',
];

const START = Date.UTC(2026, 10, 27, 22, 0, 0);

describe('the remembering repeat strategy', () => {
  it('answers what BullMQ’s own strategy answers, for any sequence of times and patterns', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            pattern: fc.constantFrom(...PATTERNS),
            // Mostly small steps (the upserts of one start, across a run's time), some long ones, some
            // back in time.
            step: fc.oneof(
              { arbitrary: fc.integer({ min: 0, max: 1_500 }), weight: 10 },
              { arbitrary: fc.integer({ min: 0, max: 120_000 }), weight: 2 },
              { arbitrary: fc.integer({ min: 0, max: 3 * 3_600_000 }), weight: 1 },
              { arbitrary: fc.integer({ min: -60_000, max: 0 }), weight: 1 },
            ),
          }),
          { minLength: 1, maxLength: 200 },
        ),
        fc.integer({ min: 0, max: 3_600_000 }),
        (asks, offset) => {
          const remembering = rememberingRepeatStrategy();
          let millis = START + offset;
          for (const { pattern, step } of asks) {
            millis += step;
            expect(remembering(millis, { pattern })).toBe(defaultRepeatStrategy(millis, { pattern }));
          }
        },
      ),
    );
  });

  it('asks the reference once for a thousand schedulers of one pattern, and always for other options', () => {
    let asked = 0;
    const counting: RepeatStrategy = (millis, opts) => {
      asked += 1;
      return defaultRepeatStrategy(millis, opts);
    };
    const remembering = rememberingRepeatStrategy(counting);
    for (let shop = 0; shop < 1000; shop += 1) remembering(START + shop, { pattern: '*/15 * * * *' });
    expect(asked).toBe(1);
    remembering(START, { pattern: '*/15 * * * *', tz: 'Europe/Rome' });
    remembering(START, { pattern: '*/15 * * * *', startDate: START + 3_600_000 });
    expect(asked).toBe(3);
  });
});
