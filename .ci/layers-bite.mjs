// Proves that the layer rules in biome.json bite: each probe is a forbidden import written into the
// folder it is forbidden in, linted with the project's own configuration, and must be refused.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

const probes = [
  {
    file: 'src/api/layers-probe.ts',
    source: "import { Queue } from 'bullmq';\nexport const probe = Queue;\n",
  },
  {
    file: 'src/store/layers-probe.ts',
    source: "import { Redis } from 'ioredis';\nexport const probe = Redis;\n",
  },
  {
    file: 'src/export/layers-probe.ts',
    source: "import { startSimulator } from '../simulator/index.js';\nexport const probe = startSimulator;\n",
  },
  {
    file: 'src/layers-probe.ts',
    source: "import { QUEUE_NAME } from '../jobs/queue.js';\nexport const probe = QUEUE_NAME;\n",
  },
  {
    file: 'src/simulator/layers-probe.ts',
    source: "import { sanitizeUrl } from '../api/sanitize.js';\nexport const probe = sanitizeUrl;\n",
  },
  { file: 'src/simulator/layers-probe2.ts', source: "import { z } from 'zod';\nexport const probe = z;\n" },
  {
    file: 'src/cli/layers-probe.ts',
    source: "import { Queue } from 'bullmq';\nexport const probe = Queue;\n",
  },
];

let failed = false;
for (const probe of probes) {
  writeFileSync(probe.file, probe.source);
  try {
    execFileSync('npx', ['--no-install', 'biome', 'lint', probe.file], { stdio: 'pipe' });
    process.stderr.write(`layers: ${probe.file} imports across a layer and biome let it pass\n`);
    failed = true;
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    if (!output.includes('noRestrictedImports')) {
      process.stderr.write(`layers: biome failed on ${probe.file} for another reason:\n${output}\n`);
      failed = true;
    }
  } finally {
    rmSync(probe.file, { force: true });
  }
}
if (failed) process.exit(1);
process.stdout.write(`layers: all ${probes.length} forbidden imports were refused by the linter\n`);
