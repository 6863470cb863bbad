#!/usr/bin/env node
// The npm registry these machines reach lacks some platform builds (e.g. Biome's and msgpackr-extract's
// for other systems), so `npm install` leaves them out of package-lock.json and `npm ci` then refuses
// the lockfile. This adds each missing optional platform package back as an entry npm ci skips on a
// platform it does not match. Run it after every `npm install` that changes the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'sunos', 'aix', 'netbsd'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'];

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const added = [];
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((p) => OS.includes(p));
    const cpu = parts.find((p) => CPU.includes(p));
    if (!os || !cpu) throw new Error(`${key}: cannot tell the platform of optional dependency ${name}`);
    lock.packages[target] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(parts.includes('musl') ? { libc: ['musl'] } : {}),
    };
    added.push(`${name}@${version}`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  added.length ? `added to package-lock.json: ${added.join(', ')}` : 'package-lock.json is complete',
);
