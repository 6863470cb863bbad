/** What the client reports as it talks to the marketplace, for metrics; every callback is optional. */
export interface MarketplaceEvents {
  /** Every answer's HTTP status, or `network` when no answer came (refused, reset, timed out). */
  response?(status: number | 'network'): void;
  /** Every token obtained: a password login or a refresh. */
  token?(grant: 'password' | 'refresh_token'): void;
}
