import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { MACHINE_REDIS_URL, type TestRedisAddress, testRedis } from './test-redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    testRedis: TestRedisAddress;
  }
}

/**
 * CLI tests run the built command (the bundle) exactly as users do; build it once so they never see stale
 * code. Then find the tests' Redis (test/test-redis.ts) and hand its address, or what to install, to the
 * test files (test/jobs/redis-fixtures.ts); a redis-server started for the run stops with it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  const { stop, ...address } = await testRedis(process.env.TEST_REDIS_URL ?? MACHINE_REDIS_URL);
  project.provide('testRedis', address);
  return stop;
}
