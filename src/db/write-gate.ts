/**
 * The write gate: how the checkpoint thread (src/db/checkpoint-worker.ts) asks the server's
 * writers to pause, without ever blocking the server's thread.
 *
 * Under steady writes the WAL never restarts on its own: SQLite starts it over only when a write
 * transaction begins while every frame is already copied into the database file, and with commits
 * every few milliseconds the background PASSIVE checkpoint is always a little behind. Making the
 * writers wait inside SQLite (a RESTART checkpoint) stalls the whole event loop in SQLite's busy
 * handler — `/health` and every other request with it. Instead, when the WAL outgrows its limit the
 * thread closes this gate (one shared integer); the writers that can wait without blocking — the
 * group commit and import slices — hold their next transaction, PASSIVE catches up in a few
 * milliseconds, the thread opens the gate, and the writer's next transaction starts the WAL over.
 * Requests keep being read and answered meanwhile; only writes wait, for one checkpoint pass.
 */

/** The WAL at this many times the checkpoint limit is restarted however the writers wait (the last resort; Litestream is given the same). */
export const FORCE_FACTOR = 4;

/** Longest a writer waits on a closed gate, whatever the thread says (it may have died). */
export const GATE_MAX_WAIT_MS = 2_000;

export class WriteGate {
  /** [0]: 1 while the checkpoint thread wants writers to hold off, 0 otherwise. */
  readonly shared = new SharedArrayBuffer(4);
  private readonly state = new Int32Array(this.shared);
  private waiters: Array<() => void> = [];
  /** Times a writer waited on the gate, and the total milliseconds (for /metrics and benches). */
  readonly stats = { holds: 0, heldMs: 0 };

  get closed(): boolean {
    return Atomics.load(this.state, 0) === 1;
  }

  /** Resolves once the gate is open (at once when it is), or after GATE_MAX_WAIT_MS. */
  wait(): Promise<void> {
    if (!this.closed) return Promise.resolve();
    const t0 = performance.now();
    this.stats.holds++;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stats.heldMs += performance.now() - t0;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        done();
      }, GATE_MAX_WAIT_MS);
      this.waiters.push(done);
    });
  }

  /** The thread opened the gate (or is gone): every waiting writer goes on. */
  opened(): void {
    Atomics.store(this.state, 0, 0);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
