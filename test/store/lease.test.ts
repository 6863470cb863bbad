import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SyncBusyError } from '../../src/errors.js';
import { acquireLease, DEFAULT_LEASE } from '../../src/store/lease.js';
import { freshStorePerTest, openTempStore } from './fixtures.js';

const sandbox = freshStorePerTest();
const ignore = () => undefined;

/** A pid that certainly belongs to no running process: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number;
}

function plantLease(pid: number, host: string, expiresAt: number, holder = 'someone-else'): void {
  sandbox.store.db
    .prepare('INSERT INTO lease (slot, holder, pid, host, since, expires_at) VALUES (1, ?, ?, ?, ?, ?)')
    .run(holder, pid, host, '2024-05-01T10:00:00.000Z', expiresAt);
}

/**
 * A process that has exited but was not reaped (a zombie): a shell backgrounds a short-lived child,
 * then becomes `sleep`, which never waits for it. Returns the zombie's pid and the parent to kill.
 */
async function zombie(): Promise<{ pid: number; parent: ChildProcess }> {
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [line] = (await once(parent.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  const pid = Number(line.toString().trim());
  while (!readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) await sleep(10);
  return { pid, parent };
}

describe('the shop lease', () => {
  it('refuses a second holder with a sentence naming the holder', () => {
    const first = acquireLease(sandbox.store, 'acme', ignore);
    expect(() => acquireLease(sandbox.store, 'acme', ignore)).toThrow(SyncBusyError);
    expect(() => acquireLease(sandbox.store, 'acme', ignore)).toThrow(
      new RegExp(
        `^Another sync of shop acme is running \\(pid ${process.pid} on host ${hostname()}, since \\S+Z\\)\\.$`,
      ),
    );
    first.release();
    acquireLease(sandbox.store, 'acme', ignore).release();
  });

  it('is refused across connections, as between processes', () => {
    const lease = acquireLease(sandbox.store, 'acme', ignore);
    const other = openTempStore(sandbox.dir);
    try {
      expect(() => acquireLease(other, 'acme', ignore)).toThrow(SyncBusyError);
    } finally {
      other.close();
      lease.release();
    }
  });

  it('is taken over once it has expired', () => {
    plantLease(process.pid, 'another-host', Date.now() - 1);
    const lease = acquireLease(sandbox.store, 'acme', ignore);
    expect(sandbox.store.db.prepare('SELECT holder FROM lease').pluck().get()).toBe(lease.holder);
    lease.release();
  });

  it('is taken over at once when its holder on this host is a process that no longer exists', () => {
    plantLease(deadPid(), hostname(), Date.now() + 60_000);
    acquireLease(sandbox.store, 'acme', ignore).release();
  });

  it('is taken over at once when its holder is a killed process not reaped yet (a zombie)', async () => {
    const { pid, parent } = await zombie();
    try {
      expect(() => process.kill(pid, 0)).not.toThrow();
      plantLease(pid, hostname(), Date.now() + 60_000);
      acquireLease(sandbox.store, 'acme', ignore).release();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('is taken over by the same owner (the job that came back) from a holder on another host', () => {
    plantLease(process.pid, 'crashed-container', Date.now() + 60_000, 'job-42/0b1c');

    expect(() => acquireLease(sandbox.store, 'acme', ignore, { ...DEFAULT_LEASE, owner: 'job-4' })).toThrow(
      SyncBusyError,
    );
    const lease = acquireLease(sandbox.store, 'acme', ignore, { ...DEFAULT_LEASE, owner: 'job-42' });
    expect(sandbox.store.db.prepare('SELECT holder, host FROM lease').get()).toEqual({
      holder: lease.holder,
      host: hostname(),
    });
    expect(lease.holder).toMatch(/^job-42\//);
    lease.release();
  });

  it('still blocks when the holder is alive elsewhere and the lease has not expired', () => {
    plantLease(deadPid(), 'another-host', Date.now() + 60_000);
    expect(() => acquireLease(sandbox.store, 'acme', ignore)).toThrow(
      /pid \d+ on host another-host, since 2024-05-01T10:00:00.000Z/,
    );
  });

  it('tells its holder when another process took it over after it stalled', () => {
    const lease = acquireLease(sandbox.store, 'acme', ignore, { ttlMs: 60_000, renewEveryMs: 60_000 });
    sandbox.store.db.prepare("UPDATE lease SET holder = 'taken-over'").run();
    expect(() => lease.assertHeld()).toThrow(/lost its lease to another process/);
    lease.release();
    expect(sandbox.store.db.prepare('SELECT holder FROM lease').pluck().get()).toBe('taken-over');
  });

  it('renews itself while held', () => {
    const lease = acquireLease(sandbox.store, 'acme', ignore, { ttlMs: 1_000, renewEveryMs: 60_000 });
    const before = sandbox.store.db.prepare('SELECT expires_at FROM lease').pluck().get() as number;
    sandbox.store.db.prepare('UPDATE lease SET expires_at = ?').run(before - 500);
    lease.assertHeld();
    expect(sandbox.store.db.prepare('SELECT expires_at FROM lease').pluck().get()).toBeGreaterThanOrEqual(
      before,
    );
    lease.release();
  });
});
