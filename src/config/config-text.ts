import { createRequire } from 'node:module';

/**
 * A config file's text as data. YAML is the reference, and the only reader of a text that is not JSON;
 * a JSON text (JSON is YAML) whose every key is written once is read by JSON.parse, to the same data:
 * the yaml package took 170 ms of a 1,000-shop worker's start-up to read its 200 KB file, JSON.parse
 * 1 ms. A key written twice is left to YAML, which refuses it where JSON.parse would keep the last.
 * test/config/config-text.test.ts holds the two to one another.
 */
export function parseConfigText(text: string): unknown {
  const json = jsonOrUndefined(text);
  if (json !== undefined && keysIn(json) === keysWritten(text)) return json.value;
  // Loaded only for a text JSON.parse does not read alone: most commands never pay for yaml.
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return parse(text);
}

function jsonOrUndefined(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** The keys of every object in a parsed JSON value. */
function keysIn({ value }: { value: unknown }): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + keysIn({ value: item }), 0);
  if (typeof value !== 'object' || value === null) return 0;
  const values = Object.values(value);
  return values.length + values.reduce((sum: number, item) => sum + keysIn({ value: item }), 0);
}

/** The keys written in a JSON text: its strings followed by a colon (a colon elsewhere is inside a string). */
function keysWritten(text: string): number {
  let keys = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) {
    at = stringEnd(text, at);
    let next = at + 1;
    while (next < text.length && ' \t\n\r'.includes(text[next] as string)) next += 1;
    if (text[next] === ':') keys += 1;
  }
  return keys;
}

/** Where the string opening at `open` closes. */
function stringEnd(text: string, open: number): number {
  let at = open + 1;
  while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
  return at;
}
