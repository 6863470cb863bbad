/**
 * A stretch of the listing as `page`/`per_page` can ask for it: items `start` to `start + perPage - 1`
 * (offsets from 0), where `start = (page - 1) * perPage`.
 */
export interface ListingWindow {
  readonly page: number;
  readonly perPage: number;
  readonly start: number;
}

export function windowAt(page: number, perPage: number): ListingWindow {
  return { page, perPage, start: (page - 1) * perPage };
}

/**
 * The window that holds the `overlap` items ending at offset `end` (the last item the reading has
 * proved) and as many items after it as a page of at most `maxPerPage` can: a window that starts inside
 * what was read is what lets the next answer prove itself, by holding an item already read. Smaller
 * pages than `maxPerPage` are tried too, and the largest overlap below `overlap` that a window affords;
 * the first window (`end` = -1) is page 1. Null when no window of at most `maxPerPage` items holds both
 * `end` and the item after it (`end + 1` a multiple of every size up to `maxPerPage`: with 10, every
 * 2,520 items; with 100, never in practice).
 */
export function windowAfter(end: number, overlap: number, maxPerPage: number): ListingWindow | null {
  for (let shared = overlap; shared >= 1; shared -= 1) {
    const window = bestWindow(end, shared, maxPerPage);
    if (window) return window;
  }
  return null;
}

/**
 * Of the windows of 2 to `maxPerPage` items (or of 1, where that is the most) that start at or before `end - overlap + 1`, the one that
 * reaches furthest past `end` (the larger page on a tie); null when none reaches past it. Planning a
 * listing's end asks this thousands of times over: it allocates only the window it returns.
 */
function bestWindow(end: number, overlap: number, maxPerPage: number): ListingWindow | null {
  const from = Math.max(0, end - overlap + 1);
  let bestPerPage = 0;
  let bestGain = 0;
  for (let perPage = maxPerPage; perPage >= Math.min(2, maxPerPage); perPage -= 1) {
    const gain = Math.floor(from / perPage) * perPage + perPage - 1 - end;
    if (gain > bestGain) {
      bestPerPage = perPage;
      bestGain = gain;
    }
  }
  return bestGain > 0 ? windowAt(Math.floor(from / bestPerPage) + 1, bestPerPage) : null;
}
