/** How the item schema reads the values that servers spell in many ways; shared by `item-schema.ts`
 * and its fast path, `well-formed-item.ts`, so that the two cannot read them differently. */

/** An empty or blank string stands for an absent value, like null. */
export function isBlank(value: unknown): boolean {
  return typeof value === 'string' && value.trim() === '';
}

/** Only an explicit false hides an item; servers spell it `false`, `"false"`, `0` or `"0"`. */
export function isPublished(value: unknown): boolean {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : value;
  return !(text === false || text === 'false' || text === 0 || text === '0');
}

/** A logo URL, directly or as an object's `url`; the sample's empty object, an empty string and null
 * all mean "no logo". */
export function logoUrl(value: unknown): string | null {
  const url = typeof value === 'object' && value !== null ? (value as { url?: unknown }).url : value;
  return typeof url === 'string' && url.trim() !== '' ? url : null;
}
