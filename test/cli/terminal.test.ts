import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

const BIN = path.resolve('bin/shop-sync.js');
const ESC = String.fromCharCode(27);
const CLEAR_LINE = `\r${ESC}[K`;
const COLOUR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  sim = await startSimulator({ items: 600, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-terminal-');
  sim.setFaults({ latencyMs: 15 });
});
afterEach(() => temp.cleanup());

/** Runs the CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal does. */
function runInTerminal(args: readonly string[], env: Record<string, string>) {
  const command = [process.execPath, BIN, ...args].map((word) => `'${word}'`).join(' ');
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** What a person sees line by line: cleared progress lines and colours removed. */
function visibleLines(output: string): string[] {
  return output
    .split(/\r?\n/)
    .map((line) => line.split(CLEAR_LINE).at(-1) ?? '')
    .map((line) => line.replace(COLOUR, ''));
}

function hourIn(timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(new Date());
}

describe('shop-sync sync on a terminal', () => {
  it('shows a progress line naming the phase that never runs into the readable log lines', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '20', LOG_LEVEL: 'debug', TZ: 'Asia/Tokyo' };
    const before = hourIn('Asia/Tokyo');
    const { code, output } = await runInTerminal(['sync'], env);
    const after = hourIn('Asia/Tokyo');
    expect(code).toBe(0);
    expect(output).toMatch(/Syncing shop, reading pages: \d+ pages, \d+ items \(\d+ items\/s\)/);
    // Every drawing of the line is erased before anything else is written.
    const afterDrawings = output.split('items/s)').slice(1);
    expect(afterDrawings.length).toBeGreaterThan(1);
    expect(afterDrawings.filter((rest) => !rest.startsWith(CLEAR_LINE))).toEqual([]);
    expect(output).not.toContain('{"level"');
    const lines = visibleLines(output);
    const started = lines.find((line) => line.includes('sync started'));
    expect(started).toMatch(/^\[(\d\d):\d\d:\d\d\.\d{3}\] INFO: sync started \{.*"shop":"shop"/);
    expect([before, after]).toContain(started?.slice(1, 3));
    expect(lines.filter((line) => line.includes('DEBUG: page read')).length).toBeGreaterThan(10);
    expect(lines).toContainEqual(
      expect.stringMatching(/^600 items from \d+ pages: 600 added, 0 updated, 0 removed\.$/),
    );
  });

  it('shows the result once: at LOG_LEVEL info, the log lines carry their message alone', async () => {
    const { code, output } = await runInTerminal(['sync'], {
      ...simEnv(sim, temp.dir),
      SYNC_PER_PAGE: '100',
      LOG_LEVEL: 'info',
    });
    expect(code).toBe(0);
    const lines = visibleLines(output);
    expect(lines).toContainEqual(expect.stringMatching(/^\[[\d:.]+\] INFO: sync complete$/));
    expect(lines.filter((line) => /600 added|"added"/.test(line))).toEqual([
      expect.stringMatching(/^600 items from \d+ pages: 600 added, 0 updated, 0 removed\.$/),
    ]);
  });

  it('draws nothing and logs JSON lines when stderr is not a terminal', async () => {
    const result = await runCli(['sync'], {
      ...simEnv(sim, temp.dir),
      SYNC_PER_PAGE: '20',
      LOG_LEVEL: 'info',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/\r|items\/s/);
    const logs = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string });
    expect(logs.map((log) => log.msg)).toContain('sync complete');
  });
});

/** Starts a sync and sends `signal` once it has read a few pages. */
function interruptedSync(signal: NodeJS.Signals, env: Record<string, string>) {
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'sync'], {
      env: { PATH: process.env.PATH ?? '', ...env, LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let pagesRead = 0;
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      pagesRead += chunk.split('"page read"').length - 1;
      if (pagesRead >= 3 && child.signalCode === null && !child.killed) child.kill(signal);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('stopping a sync', () => {
  it('exits 128 + the signal after the checkpoint (130 for Ctrl-C), and the next sync resumes', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '10' };
    sim.setFaults({ latencyMs: 40 });
    const interrupted = await interruptedSync('SIGINT', env);
    expect(interrupted.code).toBe(130);
    expect(interrupted.stderr).toMatch(
      /shop-sync: The sync of shop shop was interrupted after page \d+; the next sync resumes from there\.\n/,
    );
    const terminated = await interruptedSync('SIGTERM', env);
    expect(terminated.code).toBe(143);

    sim.setFaults({ latencyMs: 0 });
    const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as {
      status: string;
      error: string;
    }[];
    expect(runs[0]?.status).toBe('failed');
    expect(runs[0]?.error).toMatch(/interrupted after page \d+/);
    const table = (await runCli(['runs'], env)).stdout;
    expect(table).toMatch(
      /^RUN .* ERROR\n1 +failed .*interrupted after page \d+; the next sync resumes from there\.$/m,
    );
    const resumed = await runCli(['sync', '--json'], env);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'complete', items: 600 });
  });
});
