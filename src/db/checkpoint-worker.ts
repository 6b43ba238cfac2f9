/**
 * Worker entry point of the WAL checkpointer (src/db/checkpointer.ts): its own connection, its own
 * thread, so copying WAL pages into the database file and the fsync that follows never run inside a
 * request's commit. Listed as an entry point in scripts/build.ts so the compiled binary carries it.
 *
 * Every tick: PASSIVE (copies what no reader still needs; never waits, never blocks the writer).
 * When the WAL holds more than the limit: closes the write gate (src/db/write-gate.ts) and ticks
 * every few milliseconds until PASSIVE has copied every frame, then opens it — the writer's next
 * transaction starts the WAL over. Only when that cannot happen (a reader keeps an old snapshot,
 * writers that cannot wait keep writing) and the WAL reaches FORCE_FACTOR × the limit: RESTART
 * (new writers wait, at most the busy timeout below). When the WAL is fully copied and nothing was
 * written since the last tick (idle): asks the writer's thread to TRUNCATE it (see checkpointer.ts).
 */
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync } from "node:fs";
import type { CheckpointReply, CheckpointRequest, CheckpointStats } from "./checkpointer";
import { FORCE_FACTOR } from "./write-gate";

declare const self: Worker;

/** How long a TRUNCATE waits for readers and the writer before it gives up until the next tick. */
const TRUNCATE_BUSY_MS = 250;

/** Tick while the gate is closed: writers are waiting for this thread. */
const GATE_TICK_MS = 2;
/** A closed gate opens after this even when PASSIVE could not catch up (a reader holds old frames). */
const GATE_GIVE_UP_MS = 500;
/** After a gate that did not restart the WAL, this long before closing it again. */
const GATE_BACK_OFF_MS = 1_000;
/** While Litestream replicates: how long a closed gate waits for its checkpoint (it looks every LITESTREAM_MONITOR_MS). */
const REPLICA_GATE_GIVE_UP_MS = 1_500;

let sqlite: Database | undefined;
/** The -shm file (the WAL index), read for the WAL's frame counts without a checkpoint. */
let shmPath = "";
let shmFd = -1;
const shmHeader = new Uint8Array(136);
/** mxFrame at the last look, and when it last moved (performance.now()). */
let seenFrames = -1;
let framesMovedAt = 0;

/**
 * The WAL index header (https://sqlite.org/walformat.html, "The WAL-Index Header"): mxFrame (the
 * frames in the WAL) at byte 16 and nBackfill (the frames copied) at byte 96, in the machine's own
 * byte order. Null when it cannot be read (then every tick passes, as before).
 */
function walIndex(): { frames: number; copied: number } | null {
  try {
    if (shmFd < 0) shmFd = openSync(shmPath, "r");
    if (readSync(shmFd, shmHeader, 0, 136, 0) < 136) return null;
    const v = new DataView(shmHeader.buffer);
    return { frames: v.getUint32(16, true), copied: v.getUint32(96, true) };
  } catch {
    return null;
  }
}

/** Whether this tick runs a pass (checkpointer.ts, CHECKPOINT_AFTER_PAGES): the gate is closed, enough frames wait, or the writers went quiet. */
function passDue(m: { limitPages: number; afterPages: number; idleMs: number }): boolean {
  if (closedAt >= 0) return true;
  const w = walIndex();
  if (w === null) return true;
  const now = performance.now();
  if (w.frames !== seenFrames) {
    seenFrames = w.frames;
    framesMovedAt = now;
  }
  if (w.frames === 0) return false;
  return w.frames > m.limitPages || w.frames - w.copied >= Math.min(m.afterPages, m.limitPages) || now - framesMovedAt >= m.idleMs;
}
let gate: Int32Array | undefined;
/** When the gate was closed (ms, performance.now()), or -1 while open. */
let closedAt = -1;
/** No new close before this (performance.now()). */
let quietUntil = 0;
/** Frames copied by the last pass while the gate is closed. */
let gateProgress = 0;
/** The WAL's frames at the last pass while the gate is closed. */
let gateLog = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let lastLog = -1;
/** Litestream replicates the database: PASSIVE only, and Litestream restarts the WAL (see checkpointer.ts). */
let replicating = false;
const stats: CheckpointStats = { passive: 0, truncate: 0, restartedByOther: 0, gated: 0, gatedMs: 0, forced: 0, busy: 0, largestWalPages: 0 };

type Row = { busy: number; log: number; checkpointed: number };

function openGate(caughtUp: boolean) {
  const now = performance.now();
  stats.gatedMs += now - closedAt;
  if (caughtUp) stats.gated++;
  else {
    stats.busy++;
    quietUntil = now + GATE_BACK_OFF_MS;
  }
  closedAt = -1;
  Atomics.store(gate!, 0, 0);
  self.postMessage({ op: "open" } satisfies CheckpointReply);
}

/** One checkpoint pass; returns when the next one is due (ms). */
function tick(limitPages: number, everyMs: number): number {
  const db = sqlite!;
  const r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get() as Row;
  stats.passive++;
  if (r.log > stats.largestWalPages) stats.largestWalPages = r.log;
  const caughtUp = r.checkpointed === r.log;
  if (closedAt >= 0) {
    // Writers are holding off: open once every frame is in the database file and none came in
    // since the last pass (a PASSIVE reports the WAL as it found it; a commit may land during it).
    // No progress at all: a reader (a backup's snapshot) keeps the frames it needs; holding the
    // writers longer would not help, so they go on and the WAL grows until that reader ends.
    const settled = caughtUp && r.log === gateLog;
    // Started over while the writers waited: Litestream's checkpoint (its INSERT after a PASSIVE
    // that copied every frame) restarted the WAL. A PASSIVE that found the checkpoint lock taken
    // (Litestream checkpointing at that moment) reports -1: no news, not a restart.
    if (r.log < 0) {
      if (performance.now() - closedAt > (replicating ? REPLICA_GATE_GIVE_UP_MS : GATE_GIVE_UP_MS)) openGate(false);
      return closedAt >= 0 ? GATE_TICK_MS : everyMs;
    }
    const restarted = r.log < gateLog;
    const stuck = !caughtUp && r.log === gateLog && r.checkpointed <= gateProgress;
    if (restarted) stats.restartedByOther++;
    if (settled || restarted) openGate(true);
    // With Litestream, "no progress" is its read transaction, which it lifts at its own checkpoint.
    else if (replicating ? performance.now() - closedAt > REPLICA_GATE_GIVE_UP_MS : stuck || performance.now() - closedAt > GATE_GIVE_UP_MS) openGate(false);
    else {
      gateProgress = r.checkpointed;
      gateLog = r.log;
      return GATE_TICK_MS;
    }
    lastLog = r.log;
    return everyMs;
  }
  const idle = r.log > 0 && caughtUp && r.log === lastLog;
  lastLog = r.log;
  if (replicating) {
    // Never TRUNCATE nor RESTART under Litestream: either makes it start a new generation.
    if (r.log > limitPages && gate && performance.now() >= quietUntil) {
      closedAt = performance.now();
      gateProgress = r.checkpointed;
      gateLog = r.log;
      Atomics.store(gate, 0, 1);
      return GATE_TICK_MS;
    }
    return everyMs;
  }
  if (r.log > limitPages * FORCE_FACTOR) {
    // Never TRUNCATE from this connection: that rewrites the WAL header under the writer, and a
    // writer transaction that had read before it and writes after it would fail with
    // SQLITE_BUSY_SNAPSHOT. RESTART makes the writer's next commit start the WAL over itself.
    const t = db.query("PRAGMA wal_checkpoint(RESTART)").get() as Row;
    if (t.busy) stats.busy++;
    else stats.forced++;
    lastLog = 0;
  } else if (r.log > limitPages && gate && performance.now() >= quietUntil) {
    closedAt = performance.now();
    gateProgress = r.checkpointed;
    gateLog = r.log;
    Atomics.store(gate, 0, 1);
    return GATE_TICK_MS;
  } else if (idle) {
    self.postMessage({ op: "truncate" } satisfies CheckpointReply);
    lastLog = 0;
  }
  return everyMs;
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const m = event.data;
  if (m.op === "start") {
    try {
      sqlite = new Database(m.dbPath, { readwrite: true, create: false });
      shmPath = `${m.dbPath}-shm`;
      gate = m.gate ? new Int32Array(m.gate) : undefined;
      sqlite.exec(`PRAGMA busy_timeout = ${TRUNCATE_BUSY_MS}`);
      // Its own checkpoints only: this connection writes nothing.
      sqlite.exec("PRAGMA wal_autocheckpoint = 0");
    } catch (err) {
      self.postMessage({ op: "failed", message: String((err as Error)?.message ?? err) } satisfies CheckpointReply);
      return;
    }
    const loop = () => {
      let next = m.everyMs;
      try {
        if (passDue(m)) next = tick(m.limitPages, m.everyMs);
      } catch (err) {
        // SQLITE_BUSY and the like: try again next tick.
        stats.busy++;
        if (closedAt >= 0) openGate(false);
      }
      timer = setTimeout(loop, next);
    };
    timer = setTimeout(loop, m.everyMs);
    self.postMessage({ op: "started" } satisfies CheckpointReply);
  } else if (m.op === "replication") {
    replicating = m.on;
    lastLog = -1;
  } else if (m.op === "stats") {
    self.postMessage({ op: "stats", stats: { ...stats } } satisfies CheckpointReply);
  } else if (m.op === "stop") {
    clearTimeout(timer);
    if (closedAt >= 0) openGate(false);
    try {
      sqlite?.close();
    } catch {}
    sqlite = undefined;
    if (shmFd >= 0) closeSync(shmFd);
    shmFd = -1;
    self.postMessage({ op: "stopped", stats: { ...stats } } satisfies CheckpointReply);
  }
};
