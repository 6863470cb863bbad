// Proves that the layer rules in biome.json bite: each probe is a forbidden import (or an import cycle)
// written into the folder it is forbidden in, linted with the project's own configuration, and must be
// refused with the rule named. The direction is cli -> jobs -> sync -> api/store/export -> domain.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

const importing = (what, from) => `import { ${what} } from '${from}';\nexport const probe = ${what};\n`;

const probes = [
  { rule: 'noRestrictedImports', files: { 'src/api/layers-probe.ts': importing('Queue', 'bullmq') } },
  { rule: 'noRestrictedImports', files: { 'src/store/layers-probe.ts': importing('Redis', 'ioredis') } },
  {
    rule: 'noRestrictedImports',
    files: { 'src/export/layers-probe.ts': importing('startSimulator', '../simulator/index.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/layers-probe.ts': importing('QUEUE_NAME', '../jobs/queue.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/simulator/layers-probe.ts': importing('sanitizeUrl', '../api/http/sanitize.js') },
  },
  { rule: 'noRestrictedImports', files: { 'src/simulator/layers-probe.ts': importing('z', 'zod') } },
  { rule: 'noRestrictedImports', files: { 'src/cli/layers-probe.ts': importing('Queue', 'bullmq') } },
  {
    rule: 'noRestrictedImports',
    files: { 'src/store/layers-probe.ts': importing('MarketplaceClient', '../api/client.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/api/layers-probe.ts': importing('runSync', '../sync/index.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/export/layers-probe.ts': importing('runSync', '../sync/index.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/domain/layers-probe.ts': importing('ShopSyncError', '../errors.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/config/layers-probe.ts': importing('openStore', '../store/open.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/sync/layers-probe.ts': importing('QUEUE_NAME', '../../jobs/queue.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'jobs/layers-probe.ts': importing('runCli', '../src/cli/main.js') },
  },
  {
    rule: 'noRestrictedImports',
    files: { 'src/export/formats/layers-probe.ts': importing('commitFiles', '../publish/atomic.js') },
  },
  {
    rule: 'noImportCycles',
    files: {
      'src/domain/layers-probe.ts': "import type { B } from './layers-probe2.js';\nexport type A = B[];\n",
      'src/domain/layers-probe2.ts':
        "import type { A } from './layers-probe.js';\nexport type B = A | string;\n",
    },
  },
];

let failed = false;
for (const { rule, files } of probes) {
  const paths = Object.keys(files);
  for (const [file, source] of Object.entries(files)) writeFileSync(file, source);
  try {
    execFileSync('npx', ['--no-install', 'biome', 'lint', ...paths], { stdio: 'pipe' });
    process.stderr.write(`layers: ${paths.join(' + ')} broke ${rule} and biome let it pass\n`);
    failed = true;
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    if (!output.includes(rule)) {
      process.stderr.write(`layers: biome failed on ${paths.join(' + ')} for another reason:\n${output}\n`);
      failed = true;
    }
  } finally {
    for (const file of paths) rmSync(file, { force: true });
  }
}
if (failed) process.exit(1);
process.stdout.write(
  `layers: all ${probes.length} forbidden imports and cycles were refused by the linter\n`,
);
