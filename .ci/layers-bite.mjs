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

// Every probe gets files of its own, so one lint run (one scan of the module graph, the costly part)
// judges them all.
const written = probes.map(({ rule, files }, i) => ({
  rule,
  files: Object.fromEntries(
    Object.entries(files).map(([file, source]) => [
      file.replace(/layers-probe(2?)\.ts$/, `layers-probe-${i}$1.ts`),
      source.replace(/layers-probe(2?)\.js/g, `layers-probe-${i}$1.js`),
    ]),
  ),
}));
const paths = written.flatMap(({ files }) => Object.keys(files));

function lint() {
  try {
    return execFileSync('npx', ['--no-install', 'biome', 'lint', '--reporter=json', ...paths], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
  } catch (error) {
    return `${error.stdout ?? ''}`;
  }
}

let report;
try {
  for (const { files } of written)
    for (const [file, source] of Object.entries(files)) writeFileSync(file, source);
  report = JSON.parse(lint());
} finally {
  for (const file of paths) rmSync(file, { force: true });
}

const refused = new Set(report.diagnostics.map((d) => `${d.location?.path} ${d.category.split('/').at(-1)}`));
const others = report.diagnostics.filter((d) => !/noRestrictedImports|noImportCycles/.test(d.category));
let failed = false;
for (const { category, location, message } of others) {
  process.stderr.write(
    `layers: biome failed on ${location?.path} for another reason: ${category} ${message}\n`,
  );
  failed = true;
}
for (const { rule, files } of written) {
  const names = Object.keys(files);
  if (!names.some((file) => refused.has(`${file} ${rule}`))) {
    process.stderr.write(`layers: ${names.join(' + ')} broke ${rule} and biome let it pass\n`);
    failed = true;
  }
}
if (failed) process.exit(1);
process.stdout.write(
  `layers: all ${probes.length} forbidden imports and cycles were refused by the linter\n`,
);
