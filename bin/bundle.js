// `npm run build`'s second step: bundles the compiled CLI (dist/src) into dist/bundle/, so that a
// command loads a few files instead of several hundred (module loading was most of its start-up).
// Packages that load files or native code by path at run time stay outside the bundle.
import { build } from 'esbuild';

const EXTERNAL = [
  'better-sqlite3',
  'pino',
  'pino-pretty',
  'bullmq',
  'ioredis',
  '@bull-board/*',
  'express',
  'prom-client',
];

await build({
  entryPoints: [new URL('../dist/src/cli/main.js', import.meta.url).pathname],
  outdir: new URL('../dist/bundle/', import.meta.url).pathname,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as shopSyncRequire } from 'node:module'; const require = shopSyncRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
