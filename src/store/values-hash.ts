import { Hash53 } from '../domain/hash53.js';

/** Tags that tell the kinds of value apart, so that no two different lists of values feed the same words. */
const NULL = 1;
const FALSE = 2;
const TRUE = 3;
const NUMBER = 4;
const TEXT = 5;
const LIST = 6;

/**
 * The hash of a list of item values (text, numbers, booleans, null, and lists of them), each fed with
 * its kind and length: equal values give equal hashes, and values differing anywhere (`["ab", ""]`
 * against `["a", "b"]` too) give different ones but by a 2^-53 chance. About a third of what
 * `JSON.stringify` and SHA-1 of the same values cost.
 */
export function valuesHash(values: readonly unknown[]): number {
  const hash = new Hash53();
  feedList(hash, values);
  return hash.digest();
}

function feedList(hash: Hash53, values: readonly unknown[]): void {
  hash.word(LIST).word(values.length);
  for (const value of values) feed(hash, value);
}

function feed(hash: Hash53, value: unknown): void {
  if (typeof value === 'string') hash.word(TEXT).text(value);
  else if (typeof value === 'number') hash.word(NUMBER).text(String(value));
  else if (value === null) hash.word(NULL);
  else if (value === true) hash.word(TRUE);
  else if (value === false) hash.word(FALSE);
  else if (Array.isArray(value)) feedList(hash, value);
  else throw new TypeError(`an item value of an unexpected kind: ${typeof value}`);
}
