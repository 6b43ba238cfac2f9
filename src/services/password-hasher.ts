/**
 * Every password hash and check of the server (sign-in, setup, invitations, password changes)
 * goes through one PasswordHasher: a single Worker thread (src/services/password-worker.ts) below
 * the server's CPU priority (nice 10), one argon2id call at a time, at most PASSWORD_QUEUE_MAX waiting. So
 * however fast someone guesses, password work uses at most one core, and only what the request
 * path leaves (docs/api-decisions.md, "Nothing the phone reports is lost, and nobody takes the
 * dashboard: hardening round three"). The CLI, which answers no requests, hashes directly.
 */
import { AppError } from "../errors";
import type { PasswordJob, PasswordReply, PasswordWork } from "./password-worker";

/** Password jobs that may wait for the thread; one more is refused 503 with Retry-After. */
export const PASSWORD_QUEUE_MAX = 32;

/** In the compiled binary the worker is found by its path from src/ (scripts/build.ts lists it). */
const WORKER_ENTRY = import.meta.url.includes("/$bunfs/") ? "./services/password-worker.ts" : new URL("./password-worker.ts", import.meta.url).href;

type Pending = { resolve: (r: PasswordReply) => void; reject: (e: Error) => void };

export class PasswordHasher {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  hash(password: string): Promise<string> {
    return this.run({ op: "hash", password }).then((r) => (r as { hash: string }).hash);
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.run({ op: "verify", password, hash }).then((r) => (r as { match: boolean }).match === true);
  }

  /** Password jobs sent and not yet answered. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Ends the thread (jobs in flight are refused); the next job starts a new one. */
  stop(): void {
    const w = this.worker;
    this.worker = null;
    w?.terminate();
    this.failAll(new Error("password thread stopped"));
  }

  private run(job: PasswordWork): Promise<PasswordReply> {
    if (this.pending.size >= PASSWORD_QUEUE_MAX) {
      return Promise.reject(
        new AppError("SERVICE_UNAVAILABLE", {
          message: "The server is busy checking passwords; retry in a moment",
          details: { retryAfter: 1 },
          extra: { retryAfter: 1 },
          headers: { "Retry-After": "1" },
        }),
      );
    }
    const id = this.nextId++;
    return new Promise<PasswordReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.thread().postMessage({ ...job, id } as PasswordJob);
    }).then((r) => {
      if (!r.ok) throw new Error(`password ${job.op} failed: ${r.message}`);
      return r;
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_ENTRY);
    w.onmessage = (event: MessageEvent<PasswordReply>) => {
      const p = this.pending.get(event.data.id);
      if (!p) return;
      this.pending.delete(event.data.id);
      p.resolve(event.data);
    };
    w.onerror = (event: ErrorEvent) => {
      // The thread died: what it held is refused, the next job starts a new one.
      if (this.worker === w) this.worker = null;
      w.terminate();
      this.failAll(new Error(`password thread failed: ${event.message}`));
    };
    // An idle password thread never keeps the process alive.
    w.unref();
    this.worker = w;
    return w;
  }

  private failAll(err: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }
}
