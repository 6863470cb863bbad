import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseConfigText } from '../../src/config/config-text.js';

/** What the reference makes of a text: its data, or the first line of its refusal. */
function yamlOf(text: string): unknown {
  try {
    return { data: parseYaml(text) };
  } catch (error) {
    return { refused: (error as Error).message.split('\n')[0] };
  }
}

function readOf(text: string): unknown {
  try {
    return { data: parseConfigText(text) };
  } catch (error) {
    return { refused: (error as Error).message.split('\n')[0] };
  }
}

describe('parseConfigText', () => {
  it('reads every JSON text as YAML does, however it is spaced', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, space) => {
        const text = JSON.stringify(value, null, space);
        expect(readOf(text)).toEqual(yamlOf(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('leaves a key written twice to YAML, which refuses it, at any depth', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.nat(), (object, pick) => {
        const keys = Object.keys(object);
        const key = keys[pick % keys.length] as string;
        const inner = JSON.stringify(object);
        const twice = `${inner.slice(0, -1)},${JSON.stringify(key)}:1}`;
        for (const text of [twice, `{"shops":${twice}}`, `[${twice}]`]) {
          expect(readOf(text)).toEqual(yamlOf(text));
          expect(readOf(text)).toHaveProperty('refused');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reads YAML that is not JSON, and refuses what is neither', () => {
    const yaml = 'data_dir: ./data\nshops:\n  north:\n    per_page: 50\n';
    expect(parseConfigText(yaml)).toEqual({ data_dir: './data', shops: { north: { per_page: 50 } } });
    expect(readOf('shops: [unclosed')).toEqual(yamlOf('shops: [unclosed'));
    expect(readOf('shops: [unclosed')).toHaveProperty('refused');
  });
});
