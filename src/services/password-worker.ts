/**
 * Worker entry point for password hashing and checks (src/services/password-hasher.ts). argon2id
 * takes tens of milliseconds of CPU and 64 MiB per call; here it runs on one thread of its own
 * below the server's CPU priority, one call at a time, so a guesser never takes the CPU the form webhook
 * needs (docs/api-decisions.md, "Nothing the phone reports is lost, and nobody takes the
 * dashboard: hardening round three"). Listed as an entry point in scripts/build.ts.
 */
import { setPriority } from "node:os";

declare const self: Worker;

export type PasswordWork = { op: "hash"; password: string } | { op: "verify"; password: string; hash: string };
export type PasswordJob = PasswordWork & { id: number };
export type PasswordReply = { id: number; ok: true; hash?: string; match?: boolean } | { id: number; ok: false; message: string };

/**
 * Below the request path (on Linux a thread's nice value is its own), as Litestream is: on a busy
 * machine the webhook goes first, yet a sign-in still gets about a tenth of a contended core
 * (nice 19 would get under 2%, and a person signing in would wait on anyone's busy loop).
 */
export const PASSWORD_THREAD_NICE = 10;

try {
  setPriority(PASSWORD_THREAD_NICE);
} catch {
  // Not permitted or not supported: checks still run, at normal priority.
}

self.onmessage = (event: MessageEvent<PasswordJob>) => {
  const job = event.data;
  let reply: PasswordReply;
  try {
    reply =
      job.op === "hash"
        ? { id: job.id, ok: true, hash: Bun.password.hashSync(job.password, { algorithm: "argon2id" }) }
        : { id: job.id, ok: true, match: Bun.password.verifySync(job.password, job.hash) };
  } catch (err) {
    reply = { id: job.id, ok: false, message: (err as Error)?.message ?? String(err) };
  }
  self.postMessage(reply);
};
