// `npm run build`'s second step: bundles the compiled CLI (dist/src) into dist/bundle/, so that a
// command loads a few files instead of several hundred (module loading was most of its start-up).
// Packages that load files or native code by path at run time stay outside the bundle.
import { rmSync } from 'node:fs';
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

const OUTDIR = new URL('../dist/bundle/', import.meta.url).pathname;

// Chunks are named by their content: the folder is emptied first, so that no chunk of an earlier build
// is left beside the current ones.
rmSync(OUTDIR, { recursive: true, force: true });

await build({
  entryPoints: [new URL('../dist/src/cli/main.js', import.meta.url).pathname],
  outdir: OUTDIR,
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
