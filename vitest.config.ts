import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/fast-check-seed.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: on CI's two, one file at a time, with a core
    // idle while a file waits on its processes, servers and timers. Files run in parallel safely: each
    // has its own temp directories, ports and Redis key prefix (test/jobs/redis-fixtures.ts).
    maxWorkers: 2,
  },
});
