import type { MarketplaceEvents, RetryOptions, SharedPools, TokenStore } from '../api/client.js';
import type { AppConfig } from '../config/app-config.js';
import type { Logger } from '../log.js';
import type { RunEnded, SyncPoint, SyncProgress } from './outcome.js';

/** What a sync needs from whoever runs it (the CLI or the worker), and what it tells them. */
export interface SyncDeps {
  config: AppConfig;
  log: Logger;
  /** Aborting stops the run once the pages read so far are staged; a later sync resumes it. */
  signal?: AbortSignal;
  onProgress?: (progress: SyncProgress) => void;
  /** How hard to retry each marketplace request (the client's defaults within the configured budget otherwise). */
  retry?: Partial<RetryOptions>;
  /** Where the shop's token is kept: shared between worker processes; this process's memory otherwise. */
  tokenStore?: TokenStore;
  /** Told of every response and token renewal (metrics). */
  events?: MarketplaceEvents;
  /**
   * The connections to the marketplace of the process (the worker's, the `sync` command's, shared by its
   * shops): the sync borrows them and leaves them open for the next. Without them it opens its own and
   * closes them at its end.
   */
  pools?: SharedPools;
  /** Called synchronously at each `SyncPoint`. */
  onPoint?: (point: SyncPoint) => void;
  /** This run completes whatever it removes (`--accept-removals`): a person knows the removals are real. */
  acceptRemovals?: boolean;
  /** Who the sync belongs to beyond this process (the worker's job id): see `LeaseOptions.owner`. */
  leaseOwner?: string;
  /**
   * The store's fsyncs are made by a keeper connection in another thread (`keepStore`), not on the event
   * loop: for a process running many syncs at once (the worker). A lone sync has nothing else for its
   * event loop to do, and would only pay the thread (about 7 MiB and 20 ms of CPU).
   */
  fsyncsOffLoop?: boolean;
  /**
   * Told once a run ends, complete, held or failed (not when stopped or busy: that run is not over), before
   * `runSync` returns or throws; awaited, and its own failure only logged: it never changes the sync's
   * outcome. The CLI delivers the notification from here, the worker queues it.
   */
  onRun?: (ended: RunEnded) => Promise<void>;
}
