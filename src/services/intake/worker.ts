/**
 * Worker entry point of the intake applier: its own connection, the only writer
 * of what the webhook intake derives. Told "wake" after each intake commit, it applies batches
 * until the intake is empty and reports each batch's high-water mark to the main thread.
 */
import type { Database } from "bun:sqlite";
import { openApplierConnection } from "../../db/stores/intake-applier";
import { EventOutbox, registerOutbox } from "../events";
import { APPLY_BATCH_MAX, IntakeApplier, type BatchResult } from "./applier";
import { SLOT_APPLIED, SLOT_APPLIER_HOLDS, SLOT_DURABLE, SLOT_MAIN_WANTS } from "./applier-lock";
import { GATE_MAX_WAIT_MS } from "../../db/write-gate";
import { chunkDue, INDEX_CHUNK_ROWS, PendingSearchIndex } from "../../db/stores/contacts/search-pending";

declare const self: Worker;

export type ApplierCommand =
  | { op: "open"; dbPath: string; cacheMb: number; applied: SharedArrayBuffer; gate?: SharedArrayBuffer }
  /** New intake rows are on disk: applied within APPLY_DELAY_MS, together with the ones that follow. */
  | { op: "wake" }
  /** A reader waits at the read barrier for `seq` (or a resubmission for its last one): apply up to it now, without the delay. */
  | { op: "flush"; seq: number }
  | { op: "stop" }
  /** Test hooks (SubmissionIntake.wedgeApplierForTest / crashApplierForTest): a stuck thread, a dead one. */
  | { op: "wedge"; ms: number }
  | { op: "crash" };
export type ApplierReport =
  | { op: "ready"; seq: number }
  | { op: "batch"; result: BatchResult; emitted: boolean; ms: number }
  | { op: "error"; message: string }
  | { op: "stopped"; seq: number };

/** Pause before retrying after a failed batch (a lock held past busy_timeout, a full disk). */
const RETRY_MS = 200;
/**
 * How often an idle applier looks for contacts to index (a count of contacts_fts_pending; new
 * contacts of the API and the import are written on the main thread, which does not wake it).
 */
const INDEX_POLL_MS = 250;
/**
 * Pending contacts are indexed when no other connection has committed for this long (an import
 * commits a slice every ~10 ms: its contacts are indexed once it ends, and its slices — which
 * block the main thread while they wait for the applier's turn — do not wait for the index;
 * 50 ms let chunks in while the import stalled on a loaded machine: /health p99 during the 50 MiB
 * import 177-285 ms against 65-161 ms on main). Under webhook load, a chunk follows each intake
 * batch instead (see drain).
 */
const INDEX_QUIET_MS = 200;

let connection: Database | undefined;
let applier: IntakeApplier | undefined;
/** The search index's pending contacts (src/db/stores/contacts/search-pending.ts), indexed when the intake is idle. */
let search: PendingSearchIndex | undefined;
let indexTimer: ReturnType<typeof setTimeout> | undefined;
/** PRAGMA data_version at the last look: it moves when another connection commits. */
let seenVersion = -1;
let outbox: EventOutbox | undefined;
/** [0] the high-water mark (the main thread's synchronous barrier reads it); [1] 1 while the main thread's group commit wants the write lock. */
let shared: BigInt64Array | undefined;
/** The write gate (src/db/write-gate.ts): [0] is 1 while the checkpoint thread wants writers to hold off. */
let gate: Int32Array | undefined;
let busy = false;
let again = false;
/** The delayed drain after a "wake" (see APPLY_DELAY_MS). */
let applyTimer: ReturnType<typeof setTimeout> | undefined;
let stopping = false;

/**
 * How long the applier lets new intake rows gather before it applies them (ms). Each applier
 * transaction writes every b-tree it touches once however many rows it carries, so at a shop's
 * rate (a submission every few ms to seconds) rows applied one commit each cost tens of pages
 * apiece, and a few hundred ms of grouping cuts that several-fold (docs/api-decisions.md, "A
 * submission costs kilobytes, not a quarter megabyte: cut what each write puts on the disk").
 * A reader at the read barrier, a phone asking for work and the stop do not wait for it
 * ("flush"); the rows are on disk already. 800 ms keeps the lag's p99 at a shop's rate near
 * 810 ms (the 1 s it may take, less a batch and a search chunk) while a batch gathers ~40 rows;
 * 500 ms had been chosen from lag figures taken under strace, which stops the applier at every
 * write (docs/api-decisions.md, "Disk bytes, round four").
 */
export const APPLY_DELAY_MS = 800;

/**
 * Rows a delayed batch aims to gather. Past this a batch saves little more (the pages every batch
 * writes are shared already), so at a high rate the delay shrinks to what gathers them: the
 * applier's lag then stays near what it was without a delay.
 */
export const BATCH_TARGET_ROWS = 128;
/** Intake rows per ms, as the last drains found them (0: not known yet). */
let rowsPerMs = 0;
/** performance.now() when the last drain that applied rows started. */
let lastDrainAt = 0;

/** The delay before the next drain: APPLY_DELAY_MS, or less when BATCH_TARGET_ROWS come in sooner. */
function applyDelayMs(): number {
  if (rowsPerMs <= 0) return APPLY_DELAY_MS;
  return Math.max(0, Math.min(APPLY_DELAY_MS, BATCH_TARGET_ROWS / rowsPerMs));
}

/** A drain that started at `t0` applied `rows`: the rate they came in at since the one before. */
function noteDrain(t0: number, rows: number): void {
  if (rows === 0) return;
  if (lastDrainAt > 0) rowsPerMs = rows / Math.max(1, t0 - lastDrainAt);
  lastDrainAt = t0;
}

/** A "wake": drain after the delay (applyDelayMs), unless a drain is already due. */
function scheduleDrain(): void {
  if (applyTimer !== undefined || stopping) return;
  applyTimer = setTimeout(() => {
    applyTimer = undefined;
    drain();
  }, applyDelayMs());
}

/**
 * Fewer rows than this waiting after a batch end the drain (they wait for the next delay, with
 * the rows that follow them); more mean a backlog (saturation), and the drain goes on at once.
 */
const BACKLOG_ROWS = 64;

/** The highest seq a "flush" asked for: a drain goes on until it has applied it, however small its batches. */
let flushUpTo = 0;

/**
 * "flush": the delay is dropped and the rows up to `seq` are applied now. Only those: rows that
 * came in since wait for the delay as usual (what follows an applied submission, such as an
 * automation's run on the main thread, sees it as it was, not merged with the next one).
 */
function drainNow(seq: number): void {
  if (applyTimer !== undefined) clearTimeout(applyTimer);
  applyTimer = undefined;
  flushUpTo = Math.max(flushUpTo, seq);
  drain();
}

const mainWantsLock = () => Atomics.load(shared!, SLOT_MAIN_WANTS) !== 0n;

/** Waits until no main-thread transaction runs, then marks the applier's turn (re-checked: the main thread may have just asked). */
function takeTurn(): void {
  for (;;) {
    while (mainWantsLock()) Atomics.wait(shared!, SLOT_MAIN_WANTS, 1n, 50);
    Atomics.store(shared!, SLOT_APPLIER_HOLDS, 1n);
    if (!mainWantsLock()) return;
    endTurn();
  }
}

/** While the checkpoint thread has the write gate closed, no batch starts (at most GATE_MAX_WAIT_MS). */
function waitForGate(): void {
  if (!gate || Atomics.load(gate, 0) === 0) return;
  const end = performance.now() + GATE_MAX_WAIT_MS;
  while (Atomics.load(gate, 0) === 1) {
    const left = end - performance.now();
    if (left <= 0) return;
    Atomics.wait(gate, 0, 1, Math.min(left, 50));
  }
}

function endTurn(): void {
  Atomics.store(shared!, SLOT_APPLIER_HOLDS, 0n);
  Atomics.notify(shared!, SLOT_APPLIER_HOLDS);
}

function post(r: ApplierReport) {
  self.postMessage(r);
}

function drain(): void {
  if (applier === undefined) return;
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  const started = performance.now();
  let rows = 0;
  try {
    do {
      again = false;
      for (;;) {
        const t0 = performance.now();
        outbox!.needsFanout = false;
        // The main thread's transactions go first (it blocks while it waits; see holdApplierOff).
        waitForGate();
        takeTurn();
        let result: BatchResult;
        try {
          result = applier.applyBatch(APPLY_BATCH_MAX, mainWantsLock);
        } finally {
          endTurn();
        }
        if (result.applied === 0) break;
        rows += result.applied;
        Atomics.store(shared!, SLOT_APPLIED, BigInt(result.seq));
        Atomics.notify(shared!, SLOT_APPLIED);
        post({ op: "batch", result, emitted: outbox!.needsFanout, ms: performance.now() - t0 });
        // Between batches, one chunk of the search index, so it keeps pace with the new contacts
        // of a steady webhook load (whose commits never leave the quiet gap indexStep waits for):
        // once a whole chunk waits, or the oldest waited long enough (chunkDue). FTS5 writes a
        // segment per transaction and merges them, so a few contacts indexed at a time cost
        // pages by the dozen; searches read the pending contacts directly meanwhile (exact).
        try {
          if (searchIndexDue()) indexChunk();
        } catch (err) {
          post({ op: "error", message: `search index: ${String((err as Error)?.message ?? err)}` });
        }
        // Rows on disk past this batch (intake seqs are dense): a backlog is applied at once; a
        // few wait for the delay, with the rows that follow them.
        const waiting = Number(Atomics.load(shared!, SLOT_DURABLE)) - result.seq;
        if (waiting < BACKLOG_ROWS && result.seq >= flushUpTo && !stopping) {
          if (waiting > 0) scheduleDrain();
          break;
        }
      }
    } while (again);
  } catch (err) {
    post({ op: "error", message: String((err as Error)?.message ?? err) });
    if (!stopping) setTimeout(drain, RETRY_MS);
  } finally {
    busy = false;
    noteDrain(started, rows);
  }
  scheduleIndexing(0);
}

function scheduleIndexing(ms: number): void {
  if (indexTimer !== undefined || stopping || search === undefined) return;
  indexTimer = setTimeout(indexStep, ms);
}

/**
 * On a timer: once a chunk is due (searchIndexDue), indexes it when no other connection has
 * committed since the last look (else looks again INDEX_QUIET_MS later), then gives the event loop
 * a turn (a "wake" for new intake entries goes first) before the next. A contact or two are not
 * indexed the moment the server goes quiet: each chunk is an FTS5 segment of its own and a commit
 * (~10 pages), which at a quiet shop's rate was one per new contact.
 */
function indexStep(): void {
  indexTimer = undefined;
  if (search === undefined || stopping || busy) return;
  let next = INDEX_POLL_MS;
  try {
    if (searchIndexDue()) {
      const version = search.dataVersion();
      if (version !== seenVersion || mainWantsLock()) {
        // Another connection wrote since the last look: wait for a quiet gap.
        seenVersion = version;
        next = INDEX_QUIET_MS;
      } else {
        // A pause of a quarter of the chunk's time: the index holds the write lock at most ~80%
        // of the time, so a main-thread statement waiting in SQLite's busy handler (which sleeps
        // up to 100 ms between tries) gets its turn well within busy_timeout.
        const t0 = performance.now();
        next = indexChunk() > 0 ? Math.ceil((performance.now() - t0) / 4) : INDEX_POLL_MS;
      }
    }
  } catch (err) {
    post({ op: "error", message: `search index: ${String((err as Error)?.message ?? err)}` });
    next = RETRY_MS;
  }
  scheduleIndexing(next);
}

/** When contacts were first seen waiting (performance.now(); -1: none). */
let pendingSince = -1;

/** Whether a chunk of the search index is due (chunkDue), with the wait counted from when this thread first saw contacts pending. */
function searchIndexDue(): boolean {
  if (search === undefined) return false;
  const n = search.pendingUpTo(INDEX_CHUNK_ROWS);
  if (n === 0) {
    pendingSince = -1;
    return false;
  }
  const now = performance.now();
  if (pendingSince < 0) pendingSince = now;
  return chunkDue(n, now - pendingSince);
}

/** One chunk of pending contacts indexed in the applier's turn; how many (0: none was pending). */
function indexChunk(): number {
  if (search === undefined || !search.hasPending()) return 0;
  waitForGate();
  takeTurn();
  try {
    return search.indexChunk();
  } finally {
    endTurn();
    // The rows left (an import's last partial chunk) wait from now.
    pendingSince = -1;
  }
}

self.onmessage = (event: MessageEvent<ApplierCommand>) => {
  const cmd = event.data;
  if (cmd.op === "open") {
    shared = new BigInt64Array(cmd.applied);
    gate = cmd.gate ? new Int32Array(cmd.gate) : undefined;
    const sqlite = (connection = openApplierConnection(cmd.dbPath, cmd.cacheMb));
    outbox = new EventOutbox(sqlite);
    registerOutbox(sqlite, outbox);
    applier = new IntakeApplier(sqlite);
    search = new PendingSearchIndex(sqlite);
    applier.durableSeq = () => Number(Atomics.load(shared!, SLOT_DURABLE));
    // Endpoints change on the main thread (every such change waits for the applier first):
    // read them afresh in each batch's transaction.
    applier.beforeBatch = () => outbox!.reload();
    applier.eventsWanted = (accountId, type) => outbox!.wants(accountId, type);
    post({ op: "ready", seq: applier.store.appliedSeq() });
    drain();
  } else if (cmd.op === "wake") {
    scheduleDrain();
  } else if (cmd.op === "flush") {
    drainNow(cmd.seq);
  } else if (cmd.op === "wedge") {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, cmd.ms);
  } else if (cmd.op === "crash") {
    process.exit(1);
  } else if (cmd.op === "stop") {
    stopping = true;
    clearTimeout(indexTimer);
    indexTimer = undefined;
    drainNow(Number.MAX_SAFE_INTEGER);
    const seq = applier?.store.appliedSeq() ?? 0;
    // Closed here, not when the thread is torn down: a late close (a checkpoint) would hold the
    // file while the next user (a CLI command after a stop) writes.
    applier = undefined;
    search = undefined;
    // close(true): the connection really closes now (a deferred close keeps its locks).
    try {
      connection?.close(true);
    } catch {
      connection?.close();
    }
    connection = undefined;
    post({ op: "stopped", seq });
  }
};
