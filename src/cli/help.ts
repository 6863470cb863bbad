import { APP, CONNECTION_VARIABLES, MAX_PER_PAGE, SHOP, SOURCES, variable } from '../config/settings.js';

const SIM = 'MARKETPLACE_BASE_URL=http://127.0.0.1:4010';

/** The text after each command's `--help`: an example a user can copy, and what it reads from the environment. */
export const HELP_EXAMPLES: Readonly<Record<string, string>> = {
  'shop-sync': `
Example:
  $ npx shop-sync demo                 # end to end against the bundled simulator
  $ npx shop-sync sync --shop north    # one sync of a configured shop
`,
  sync: `
Environment (or a SHOP_SYNC_CONFIG file; each secret also as NAME_FILE):
  ${CONNECTION_VARIABLES.join('\n  ')}
  ${variable(SOURCES.shopName)}, ${variable(APP.dataDir)}, ${variable(SHOP.perPage)} (at most ${MAX_PER_PAGE}), ${variable(APP.logLevel)}, ${variable(APP.logFormat)}

Example:
  $ ${SIM} MARKETPLACE_CLIENT_ID=demo-client MARKETPLACE_CLIENT_SECRET=demo-secret \\
    MARKETPLACE_USERNAME=demo-owner MARKETPLACE_PASSWORD=demo-password npx shop-sync sync --json
  $ SHOP_SYNC_CONFIG=shops.yaml npx shop-sync sync --all
`,
  check: `
Example:
  $ SHOP_SYNC_CONFIG=shops.yaml npx shop-sync check --all
`,
  runs: `
Example:
  $ npx shop-sync runs --shop north --json
`,
  diff: `
Example:
  $ npx shop-sync diff --shop north --from 3 --to 5 --format csv --out changes-3-5.csv
`,
  prune: `
Example:
  $ npx shop-sync prune --shop north --keep 10
`,
  export: `
Example:
  $ npx shop-sync export --shop north --format sqlite --out north.sqlite
`,
  worker: `
Example:
  $ REDIS_URL=redis://127.0.0.1:6379 SHOP_SYNC_CONFIG=shops.yaml npx shop-sync worker
`,
  trigger: `
Example:
  $ npx shop-sync trigger --shop north --wait --json
`,
  status: `
Example:
  $ npx shop-sync status --json
`,
  demo: `
Example:
  $ npx shop-sync demo --items 2000 --data-dir /tmp/demo
`,
  simulate: `
Example:
  $ npx shop-sync simulate --port 4010 --items 5000 --rate-429 0.05
`,
};
