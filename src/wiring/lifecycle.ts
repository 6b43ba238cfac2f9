/**
 * The one start and stop order of the server's parts (docs/architecture.md, "Wiring"): started
 * top to bottom, stopped bottom to top. The order is what keeps a stop or a crash safe; each
 * entry says why it stands where it does.
 */
import type { Lifecycle } from "../lib/lifecycle";
import { IDEMPOTENCY_SWEEP_MS } from "../services/submissions";
import { queueSync } from "../services/queue-sync";
import type { Core } from "./core";
import type { Addresses } from "./addresses";
import type { Accounts } from "./accounts";
import type { Messaging } from "./messaging";
import type { Smsgate } from "./smsgate";
import type { Operations } from "./operations";
import type { DeviceService } from "../services/devices";
import type { Database } from "bun:sqlite";

export function startStopOrder(sqlite: Database, core: Core, a: Accounts, addresses: Addresses, m: Messaging, smsgate: Smsgate, devices: DeviceService, ops: Operations): Lifecycle[] {
  const parts: Array<Lifecycle | null> = [
    // First: started before the writer takes requests, stopped after its last flush.
    ops.checkpointer,
    // Stopped after every other part has written its last, so Litestream's final sync has all of it.
    ops.replication,
    // The queue is rebuilt from SQLite before anything reads it or leases from it.
    queueSync(sqlite, core.queue),
    // Before the writer: stopped after it, so it applies the writer's last flush.
    core.intake,
    core.writer,
    idempotencySweep(m),
    addresses.plainHttpPosts.lifecycle(),
    m.teamNotices.lifecycle(),
    addresses.publicCertificate.lifecycle(),
    // The queue (rebuilt above) is whole before leases are reloaded and the lease sweeper starts.
    core.leases.lifecycle(),
    devices.lifecycle(),
    smsgate.thirdParty.lifecycle(),
    // After the writer (it records results through it), so it stops before the writer does.
    ops.dispatcher,
    ops.queueWatch,
    // After the writer: stopped before it, so the last honeypot counts are written.
    core.spam.lifecycle(),
    // Broadcasts a stop interrupted carry on once the queue is whole.
    { name: "broadcasts", start: () => m.broadcasts.resume(), stop: () => m.broadcasts.stop() },
    // Runs a stop left unfinished (the inbox, marked stops, start jobs) carry on once the queue is whole.
    m.automations.lifecycle(),
    // The password thread (services/password-hasher.ts) starts on first use and ends with the server.
    { name: "passwords", start: () => {}, stop: () => a.people.passwords.stop() },
    // Last: a backup runs while everything else is up, and is stopped first.
    ops.backups,
  ];
  return parts.filter((p): p is Lifecycle => p !== null);
}

function idempotencySweep(m: Messaging): Lifecycle {
  let sweep: ReturnType<typeof setInterval> | undefined;
  return {
    name: "idempotency-sweep",
    start() {
      m.submissions.sweepIdempotencyKeys();
      sweep = setInterval(() => m.submissions.sweepIdempotencyKeys(), IDEMPOTENCY_SWEEP_MS);
      sweep.unref?.();
    },
    stop() {
      clearInterval(sweep);
    },
  };
}
