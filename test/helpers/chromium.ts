import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sparticuz from '@sparticuz/chromium';
import { type Browser, chromium } from 'playwright-core';

/**
 * No sandbox, as the tests may run as root; the rest keep Chromium from calling home: the network here is
 * closed, and such calls fail many at a time.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The installed package's version: each version unpacks into a folder of its own. */
function packageVersion(): string {
  const manifest = readFileSync('node_modules/@sparticuz/chromium/package.json', 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

/**
 * The package unpacks its compressed binary into `os.tmpdir()` and then takes any `chromium` found there
 * for its own, whichever version (or interrupted unpack) left it. So it unpacks into a fresh folder,
 * which then replaces nothing: it is renamed to its version's name, and a folder of that name is whole.
 */
async function unpackedChromium(): Promise<string> {
  const folder = path.join(tmpdir(), `shop-sync-chromium-${packageVersion()}`);
  const binary = path.join(folder, 'chromium');
  if (existsSync(binary)) return binary;
  const staging = mkdtempSync(`${folder}-unpacking-`);
  const tmpdirBefore = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    await sparticuz.executablePath();
  } finally {
    if (tmpdirBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdirBefore;
  }
  if (existsSync(binary)) rmSync(staging, { recursive: true, force: true });
  else renameSync(staging, folder);
  return binary;
}

/**
 * Headless Chromium from the npm registry (@sparticuz/chromium, a dev dependency), driven by
 * playwright-core: `npm ci` is all a machine needs for the browser tests, no system Chromium.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: await unpackedChromium(), headless: true, args: FLAGS });
}
