import type { HttpResponse } from '../http/response.js';
import { readableId } from '../item/item-schema.js';
import { type Settled, Slots, settledOf } from './driver.js';
import { parseJsonBody } from './page-body.js';
import { type FetchPageIds, type FetchWindow, listingFailure } from './paginator.js';
import type { YieldedIds } from './yielded-ids.js';

type PageIds = Awaited<ReturnType<FetchPageIds>>;

/** The page asked for to prove that page 1 starts the listing. */
const PAGE_BEFORE_FIRST = 0;

/**
 * Answers to `page=0` that say there is no such page. The spec shows none; Django REST Framework and
 * Flask answer 404, others 400 or 422, and a server that turns page 0 into a negative offset fails with
 * 500. A marketplace that numbers its pages from 0 serves page 0 as its first page, so a 500 there
 * right after its other pages were served is the server refusing the page, not an outage hiding it.
 */
export const NO_SUCH_PAGE: readonly number[] = [204, 400, 404, 410, 416, 422, 500];

/** The ids of the items an answer lists: none for a status of `NO_SUCH_PAGE`, an empty body, or JSON
 * that is not a list. */
export function idsListed(response: HttpResponse, shown: string): string[] {
  if (response.status !== 200 || response.body.trim() === '') return [];
  const json = parseJsonBody(response, shown);
  if (!Array.isArray(json)) return [];
  return json.flatMap((element) => readableId(element) ?? []);
}

/**
 * The proof that page 1 starts the listing. The spec shows no base for `page`: a marketplace that
 * numbers its pages from 0 answers page 1 with its second page, and the listing then reads as complete
 * without its first items. So once the listing is read, page 0 is asked for at the reading's page size. It may
 * list nothing, page 1 again (a server that clamps `page`), or any other page of the listing (Django's
 * `Paginator.get_page` serves the last page for page 0): every item it lists must have been read, or be
 * on page 1 asked right after it (an item listed since the reading passed page 1 is the next run's).
 * Asked beside page 1 rather than after the reading, where it cost every sync a round trip of its own
 * (30 ms of the 400 of an unchanged 2,000-item resync at that latency); its answer waits for the
 * reading's end. It counts among the requests in flight (`SYNC_MAX_IN_FLIGHT`): at the limit, it goes
 * out when a window is answered, and the window asked next waits for it.
 */
export class ListingStart {
  /** Page 0's answer, once the reading asked for page 1: a resumed reading that never does has proved
   * its start before. Settled either way, so that a reading failing first leaves no rejection unheard. */
  private zero: Promise<Settled<PageIds>> | undefined;
  /** Requests in flight through `watch`: the reading's windows, and page 0. */
  private readonly slots: Slots;

  /** `perPage`: the size the reading asks its pages at, which page 0 and page 1 are then asked at. */
  constructor(
    private readonly pageIds: FetchPageIds,
    private readonly perPage: number,
    maxInFlight: number,
  ) {
    this.slots = new Slots(maxInFlight);
  }

  /** `fetch`, asking for page 0 beside the reading's first request for page 1. */
  watch(fetch: FetchWindow): FetchWindow {
    return (window, request) => {
      const answer = this.slots.run(() => fetch(window, request));
      if (window.start === 0 && this.zero === undefined) {
        this.zero = settledOf(this.slots.run(() => this.pageIds(PAGE_BEFORE_FIRST, this.perPage)));
      }
      return answer;
    };
  }

  /** Once the listing is read (`yielded`: every id it yielded): fails unless it held page 0's items. */
  async settle(yielded: Pick<YieldedIds, 'has'>): Promise<void> {
    if (this.zero === undefined) return;
    const answer = await this.zero;
    if (!answer.ok) throw answer.error;
    const zero = answer.value;
    const unread = zero.ids.filter((id) => !yielded.has(id));
    if (unread.length === 0) return;
    const first = new Set((await this.pageIds(1, this.perPage)).ids);
    if (unread.some((id) => !first.has(id))) throw listingFailure.numberedFromZero(zero.shown);
  }
}
