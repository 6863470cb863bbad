import type { IncomingHttpHeaders } from 'node:http';

/** An answer of the marketplace, whatever its status. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}
