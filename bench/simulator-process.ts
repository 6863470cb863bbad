import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Faults, Mutation, SimStats } from '../src/simulator/index.js';
import { CLI } from './child.js';

/** The marketplace in its own process (as in real life), driven through its control port. */
export interface SimulatorProcess {
  readonly baseUrl: string;
  mutate(m: Mutation, shop?: number): Promise<void>;
  setFaults(f: Partial<Faults>): Promise<void>;
  stats(): Promise<SimStats>;
  close(): Promise<void>;
}

async function call(url: string, init?: RequestInit): Promise<unknown> {
  const response = await fetch(url, init);
  const body = (await response.json()) as unknown;
  if (!response.ok)
    throw new Error(`simulator control ${url} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

function post(url: string, value: unknown): Promise<unknown> {
  return call(url, { method: 'POST', body: JSON.stringify(value) });
}

/** `shop-sync simulate` with `args`, once it listens and has prerendered every item. */
export async function startSimulatorProcess(args: readonly string[]): Promise<SimulatorProcess> {
  const child = spawn(process.execPath, [CLI, 'simulate', '--port', '0', '--admin-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const found = () => ({
    baseUrl: /^simulator listening on (\S+)/m.exec(out)?.[1],
    admin: /^admin listening on (\S+)/m.exec(out)?.[1],
  });
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const deadline = Date.now() + 600_000;
    while (!found().admin) {
      if (child.exitCode !== null) throw new Error(`the simulator exited with ${child.exitCode}: ${out}`);
      if (Date.now() > deadline) throw new Error('the simulator did not start');
      await sleep(20);
    }
    const { baseUrl, admin } = found() as { baseUrl: string; admin: string };
    while ((await fetch(`${admin}/ready`)).status !== 200) await sleep(100);
    return {
      baseUrl,
      mutate: async (m, shop = 1) => {
        await post(`${admin}/mutate?shop=${shop}`, m);
      },
      setFaults: async (f) => {
        await post(`${admin}/faults`, f);
      },
      stats: async () => (await call(`${admin}/stats`)) as SimStats,
      close: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
