import { Worker } from 'node:worker_threads';
import { SQLITE_MODULE } from './sqlite-module.js';

/**
 * A second connection to a store, held in a thread of its own while a sync writes the store on the main
 * thread, to take SQLite's fsyncs off the event loop. A store in WAL mode costs four: the first write
 * after the WAL was emptied syncs the WAL's header and, the WAL being a new file, its folder; the last
 * connection to close checkpoints the WAL into the store, syncing both. The keeper makes that first
 * write (an unchanged `user_version`, in a transaction of its own) before the sync's first, and closes
 * after the sync's connection, so it is the last: the sync's own writes and close then sync nothing.
 * A thousand small syncs spent 15 ms each blocked in those fsyncs on the event loop, which serialised a
 * worker's 32 syncs at once behind them.
 *
 * Only where the fsyncs happen changes, never whether: SQLite still makes every one of them, on the
 * keeper's connection. Priming is best-effort (a store another process is writing, or one not in WAL
 * mode, is left alone: the sync's connection then syncs as it always did).
 */
export interface StoreKeeper {
  /** Closes the keeper's connection: call it once the sync's own connection is closed. */
  letGo(): Promise<void>;
}

/**
 * Threads holding keepers: a store's fsyncs wait for its thread, so two let a fleet's syncs overlap theirs
 * (each costs about 8 MiB of memory).
 */
const KEEPER_THREADS = 2;

/**
 * The threads' code, as evaluated CommonJS (as in verify.ts: the same text runs from the sources, from
 * dist/ and from the bundle). `hold` opens the store and primes its WAL; `letGo` closes it.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const held = new Map();
function prime(db) {
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') return false;
  db.transaction(() => db.pragma('user_version = ' + db.pragma('user_version', { simple: true }))).immediate();
  return true;
}
function answer(id, run) {
  try {
    parentPort.postMessage({ id, value: run() });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: String(error && error.message), code: String((error && error.code) || '') } });
  }
}
parentPort.on('message', ({ id, op, file }) => answer(id, () => {
  if (op === 'letGo') {
    const db = held.get(id);
    held.delete(id);
    db.close();
    return true;
  }
  const db = new Database(file, { fileMustExist: true });
  let primed;
  try {
    db.pragma('synchronous = NORMAL');
    // Not waiting: a store another process is writing is left to the sync's own first write.
    db.pragma('busy_timeout = 0');
    primed = prime(db);
  } catch (error) {
    primed = String(error && error.code);
  }
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  held.set(id, db);
  return primed;
}));
`;

/** How long the keeper's close waits for another connection's lock, as a sync's own connection would. */
const BUSY_TIMEOUT_MS = 10_000;

interface Answer {
  readonly id: number;
  readonly value?: unknown;
  readonly error?: { readonly message: string; readonly code: string };
}

/** One keeper thread: its pending requests keep the process alive, and only they. */
class KeeperThread {
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (e: Error) => void }
  >();
  private broken: Error | undefined;

  constructor() {
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { module: SQLITE_MODULE, busyTimeoutMs: BUSY_TIMEOUT_MS },
      // The thread's JavaScript only passes messages: a small heap saves a little memory.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
    });
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => this.settle(answer));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the store keeper thread exited (code ${code})`)));
  }

  ask(id: number, op: 'hold' | 'letGo', file: string): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, file });
    });
  }

  private settle(answer: Answer): void {
    const waiting = this.pending.get(answer.id);
    this.pending.delete(answer.id);
    if (this.pending.size === 0) this.worker.unref();
    if (answer.error) {
      waiting?.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
    } else waiting?.resolve(answer.value);
  }

  private fail(error: Error): void {
    this.broken = error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

const threads: KeeperThread[] = [];
let lastId = 0;

/** Threads started as syncs need them, then reused round-robin. */
function nextThread(id: number): KeeperThread {
  const index = id % KEEPER_THREADS;
  threads[index] ??= new KeeperThread();
  return threads[index];
}

/**
 * Holds `file` (an existing store) in a keeper thread and primes its WAL; resolves once the prime is
 * done, before the sync's first write. A store the keeper cannot open is left to the sync's own
 * connection, which reports what is wrong with it: the keeper then does nothing.
 */
export async function keepStore(file: string): Promise<StoreKeeper> {
  lastId += 1;
  const id = lastId;
  const thread = nextThread(id);
  try {
    await thread.ask(id, 'hold', file);
  } catch {
    return { letGo: async () => undefined };
  }
  return { letGo: async () => void (await thread.ask(id, 'letGo', file)) };
}
