import { type AdminTarget, type Fleet, startAdmin } from '../../simulator/index.js';
import { type CliIO, writeLine } from '../io.js';

interface Served {
  prerender(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** The fleet's line for users: where each shop lives and how it logs in. */
export function fleetBanner(fleet: Fleet, items: number, seed: number): string {
  const { clientId, clientSecret } = fleet.shops[0]?.credentials ?? { clientId: '', clientSecret: '' };
  return (
    `simulator listening on ${fleet.baseUrl} (${fleet.shops.length} shops of ${items} items, seed ${seed}); ` +
    `shop i: MARKETPLACE_BASE_URL=${fleet.baseUrl}/shops/i MARKETPLACE_CLIENT_ID=${clientId} ` +
    `MARKETPLACE_CLIENT_SECRET=${clientSecret} MARKETPLACE_USERNAME=shop-i-owner MARKETPLACE_PASSWORD=shop-i-password`
  );
}

/**
 * Prerenders in the background and serves until the user stops it; with an admin port, also serves
 * the benchmark's control endpoint (its `/ready` answers 200 once the prerender is done).
 */
export async function serveUntilStopped(
  io: CliIO,
  served: Served,
  admin: AdminTarget,
  where: { host: string; adminPort?: number },
): Promise<void> {
  let prerendered = false;
  const rendering = served.prerender(io.signal).then(() => {
    prerendered = true;
  });
  const control =
    where.adminPort === undefined
      ? undefined
      : await startAdmin(admin, () => prerendered, where.host, where.adminPort);
  if (control) writeLine(io.stdout, `admin listening on ${control.url}`);
  await aborted(io.signal);
  await rendering;
  await control?.close();
  await served.close();
}
