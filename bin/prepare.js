// npm's `prepare`: builds dist/ in a development install; a production install (`npm ci --omit=dev`,
// or NODE_ENV=production) has no compiler toolchain and uses the dist/ it was given.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const BUILT = new URL('../dist/bundle/main.js', import.meta.url);

// biome-ignore lint/style/noProcessEnv: npm tells its lifecycle scripts what it omitted only here
const { npm_config_omit: omit = '', NODE_ENV: nodeEnv } = process.env;
const devOmitted = omit.split(/[\s,]+/).includes('dev') || nodeEnv === 'production';

if (!devOmitted) {
  execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
} else if (!existsSync(BUILT)) {
  process.stderr.write(
    'shop-sync: cannot prepare a production install: dist/ is not built and dev dependencies (the TypeScript compiler and esbuild) are omitted; run `npm ci` with them to build it, or install where dist/ was built.\n',
  );
  process.exitCode = 1;
}
