import { ProtocolError } from '../../errors.js';
import type { HttpResponse } from '../http/response.js';
import { readableId } from '../item/item-schema.js';
import { parseJsonBody } from './page-body.js';
import { receivedOf } from './page-readings.js';
import type { FetchBeforeFirst, FetchWindow } from './paginator.js';

/** The page asked for to prove that page 1 starts the listing. */
export const PAGE_BEFORE_FIRST = 0;

/**
 * Answers to `page=0` that say there is no such page. The spec shows none; Django REST Framework and
 * Flask answer 404, others 400 or 422, and a server that turns page 0 into a negative offset fails with
 * 500. A marketplace that numbers its pages from 0 serves page 0 as its first page, so a 500 there
 * right after page 1 was served is the server refusing the page, not an outage hiding it.
 */
export const NO_PAGE_BEFORE_FIRST: readonly number[] = [204, 400, 404, 410, 416, 422, 500];

/** The ids of the items a `page=0` answer lists: none for a status of `NO_PAGE_BEFORE_FIRST`, an empty
 * body, or JSON that is not a list. */
export function idsBeforeFirst(response: HttpResponse, shown: string): string[] {
  if (response.status !== 200 || response.body.trim() === '') return [];
  const json = parseJsonBody(response, shown);
  if (!Array.isArray(json)) return [];
  return json.flatMap((element) => readableId(element) ?? []);
}

/**
 * The proof that page 1 starts the listing. The spec shows no base for `page`: a marketplace that
 * numbers its pages from 0 answers page 1 with its second page, and the listing then reads as complete
 * without its first items. So once page 1 is read, page 0 at the same size is asked for too. It may
 * list nothing, page 1 again (a server that clamps `page`), or any other page of the listing (Django's
 * `Paginator.get_page` serves the last page for page 0): every item it lists must be read by the end.
 */
export class ListingStart {
  /** Items page 0 listed that page 1 did not, with the request that listed them. */
  private readonly owed = new Map<string, string>();

  private asked = false;

  constructor(private readonly before: FetchBeforeFirst) {}

  /** `fetch`, with page 0 asked for after the first answer to page 1: how a server numbers its pages
   * does not change within one reading. */
  watch(fetch: FetchWindow): FetchWindow {
    return async (window, request) => {
      const raw = await fetch(window, request);
      if (window.start !== 0 || this.asked) return raw;
      this.asked = true;
      const { ids, shown } = await this.before(window, request);
      const first = new Set(receivedOf(raw).map((received) => received.id));
      for (const id of ids) if (!first.has(id)) this.owed.set(id, shown);
      return raw;
    };
  }

  /** Once the listing is read (`seen`: every id it yielded): fails unless it held page 0's items. */
  settle(seen: ReadonlySet<string>): void {
    for (const [id, shown] of this.owed) {
      if (!seen.has(id)) throw numberedFromZero(shown);
    }
  }
}

function numberedFromZero(shown: string): ProtocolError {
  return new ProtocolError(
    `The marketplace answered page 0 (${shown}) with items that the listing read from page 1 never showed: it seems to number its pages from 0, so the listing cannot be read completely.`,
  );
}
