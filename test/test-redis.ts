import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectRedis, displayRedisUrl } from '../jobs/redis.js';
import { freePort } from './jobs/ops/ops-fixtures.js';

/** A database of the tests' own: never 0, where a developer's own data may live. */
const TEST_DATABASE = 9;
/** The machine's Redis, on the tests' database. */
export const MACHINE_REDIS_URL = `redis://127.0.0.1:6379/${TEST_DATABASE}`;
const ANSWER_WITHIN_MS = 2_000;
const READY_WITHIN_MS = 10_000;
/** The end of a started server's output kept for the message when it stops before it answers. */
const OUTPUT_KEPT = 2_000;

/** Where the tests' Redis is, or the sentence saying what to install: what the test files are handed. */
export type TestRedisAddress = { url: string } | { missing: string };

/** `stop` ends a redis-server started for the run, and nothing else. */
interface Stoppable {
  stop: () => Promise<void>;
}

export type TestRedis = TestRedisAddress & Stoppable;

/** Why `url` does not answer a PING, or undefined when it does. */
async function refusal(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const redis = await connectRedis(url, timeoutMs);
    await redis.quit();
    return undefined;
  } catch (error) {
    const { cause } = error as Error;
    return (cause instanceof Error ? cause : (error as Error)).message;
  }
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** Polls the started server until it answers; throws with its output when it exits or stays silent. */
async function untilReady(
  child: ChildProcess,
  command: string,
  url: string,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  let reason = await refusal(url, ANSWER_WITHIN_MS);
  while (reason !== undefined) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopped(child);
      throw new Error(
        `The tests' ${command} did not answer at ${url} (${reason}): ${output() || 'it printed nothing'}`,
      );
    }
    await sleep(50);
    reason = await refusal(url, ANSWER_WITHIN_MS);
  }
}

/**
 * A `redis-server` of the run's own on a free loopback port, keeping nothing on disk; undefined when
 * `command` is not on PATH.
 */
async function startRedisServer(command: string): Promise<({ url: string } & Stoppable) | undefined> {
  const port = await freePort();
  const child = spawn(
    command,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    await once(child, 'spawn');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const url = `redis://127.0.0.1:${port}/${TEST_DATABASE}`;
  await untilReady(child, command, url, () => output);
  return { url, stop: () => stopped(child) };
}

/**
 * The Redis the tests use: `url` if it answers; else a `redis-server` (`command`, from PATH) started
 * for the run, which `stop` ends, told through `say`; else the one sentence saying what to install.
 */
export async function testRedis(
  url: string,
  command = 'redis-server',
  say: (line: string) => void = (line) => process.stderr.write(line),
): Promise<TestRedis> {
  const reason = await refusal(url, ANSWER_WITHIN_MS);
  if (reason === undefined) return { url, stop: () => Promise.resolve() };
  const shown = displayRedisUrl(url);
  const started = await startRedisServer(command);
  if (started !== undefined) {
    say(`tests: no Redis at ${shown} (${reason}); started ${command} at ${started.url}\n`);
    return started;
  }
  return {
    missing: `The Redis tests need a Redis: none answers at ${shown} (${reason}) and ${command} is not on PATH to start one; install Redis (Debian: apt-get install redis-server) or set TEST_REDIS_URL to one that answers.`,
    stop: () => Promise.resolve(),
  };
}
