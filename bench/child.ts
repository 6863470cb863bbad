import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ProbeReport, probeFile } from './probe.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The compiled probe beside this file, and the CLI as users start it. */
export const PROBE = path.join(HERE, 'probe.js');
export const CLI = path.resolve(HERE, '../../bin/shop-sync.js');
export const BASELINE = path.join(HERE, 'baseline-client.js');

export interface ChildFigures {
  wallMs: number;
  cpuMs: number;
  peakRssMiB: number;
  loopMaxMs: number;
  /** Largest size the watched file (a SQLite WAL) reached while the child ran. */
  watchedMaxMiB: number | null;
  stdout: string;
}

export interface ChildOptions {
  env?: Readonly<Record<string, string>>;
  /** A file whose size is sampled while the child runs. */
  watch?: string;
}

const SAMPLE_MS = 20;
export const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** A file's size in bytes, 0 while it does not exist. */
export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** The probe's report of a child that has exited. */
export function readProbe(pid: number): ProbeReport {
  const file = probeFile(pid);
  if (!existsSync(file)) throw new Error(`child ${pid} exited without its probe report`);
  const report = JSON.parse(readFileSync(file, 'utf8')) as ProbeReport;
  rmSync(file);
  return report;
}

/**
 * `node --import probe <script> <args>` with only PATH and HOME from this process plus `env`, and this
 * process's temporary folder, where the probe writes the report that readProbe reads.
 */
export function spawnProbed(
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
) {
  return spawn(process.execPath, ['--import', PROBE, script, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs one command to its end and measures it; a non-zero exit is an error carrying its stderr. */
export async function measure(
  script: string,
  args: readonly string[],
  options: ChildOptions = {},
): Promise<ChildFigures> {
  const started = performance.now();
  const child = spawnProbed(script, args, options.env);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const { watch } = options;
  let watched = watch ? fileSize(watch) : 0;
  const sampler = watch
    ? setInterval(() => {
        watched = Math.max(watched, fileSize(watch));
      }, SAMPLE_MS)
    : undefined;
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const wallMs = performance.now() - started;
  clearInterval(sampler);
  if (code !== 0) {
    throw new Error(`${path.basename(script)} ${args.join(' ')} exited with ${code}: ${stderr.trim()}`);
  }
  const probe = readProbe(child.pid as number);
  return {
    wallMs: Math.round(wallMs),
    cpuMs: probe.cpuMs,
    peakRssMiB: mib(probe.peakRssKiB * 1024),
    loopMaxMs: probe.loopMaxMs,
    watchedMaxMiB: watch ? mib(watched) : null,
    stdout,
  };
}
