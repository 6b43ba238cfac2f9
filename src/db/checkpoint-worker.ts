/**
 * Worker entry point of the WAL checkpointer (src/db/checkpointer.ts): its own connection, its own
 * thread, so copying WAL pages into the database file and the fsync that follows never run inside a
 * request's commit. Listed as an entry point in scripts/build.ts so the compiled binary carries it.
 *
 * Every tick: PASSIVE (copies what no reader still needs; never waits, never blocks the writer).
 * When the WAL holds more than the limit: RESTART (new writers wait — at most the busy timeout
 * below — until it is copied). When it is fully copied and nothing was written since the last tick
 * (idle): asks the writer's thread to TRUNCATE it (see checkpointer.ts).
 */
import { Database } from "bun:sqlite";
import type { CheckpointReply, CheckpointRequest, CheckpointStats } from "./checkpointer";

declare const self: Worker;

/** How long a TRUNCATE waits for readers and the writer before it gives up until the next tick. */
const TRUNCATE_BUSY_MS = 250;

let sqlite: Database | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
let lastLog = -1;
const stats: CheckpointStats = { passive: 0, truncate: 0, forced: 0, busy: 0, largestWalPages: 0 };

type Row = { busy: number; log: number; checkpointed: number };

function tick(limitPages: number) {
  const db = sqlite!;
  const r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get() as Row;
  stats.passive++;
  if (r.log > stats.largestWalPages) stats.largestWalPages = r.log;
  const idle = r.log > 0 && r.checkpointed === r.log && r.log === lastLog;
  const over = r.log > limitPages;
  lastLog = r.log;
  // Over the limit: RESTART here (copies the rest, then makes the writer's next commit start the
  // WAL from the beginning — the writer itself resets it, in its own transaction, and
  // journal_size_limit trims the file). Never TRUNCATE from this connection: that rewrites the WAL
  // header under the writer, and a writer transaction that had read before it and writes after it
  // fails at once with SQLITE_BUSY_SNAPSHOT. The idle TRUNCATE (file back to 0 bytes) is asked of
  // the writer's own thread instead (checkpointer.ts), where it costs a millisecond.
  if (over) {
    const t = db.query("PRAGMA wal_checkpoint(RESTART)").get() as Row;
    if (t.busy) stats.busy++;
    else stats.forced++;
    lastLog = 0;
  } else if (idle) {
    self.postMessage({ op: "truncate" } satisfies CheckpointReply);
    lastLog = 0;
  }
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const m = event.data;
  if (m.op === "start") {
    try {
      sqlite = new Database(m.dbPath, { readwrite: true, create: false });
      sqlite.exec(`PRAGMA busy_timeout = ${TRUNCATE_BUSY_MS}`);
      // Its own checkpoints only: this connection writes nothing.
      sqlite.exec("PRAGMA wal_autocheckpoint = 0");
    } catch (err) {
      self.postMessage({ op: "failed", message: String((err as Error)?.message ?? err) } satisfies CheckpointReply);
      return;
    }
    const loop = () => {
      try {
        tick(m.limitPages);
      } catch (err) {
        // SQLITE_BUSY and the like: try again next tick.
        stats.busy++;
      }
      timer = setTimeout(loop, m.everyMs);
    };
    timer = setTimeout(loop, m.everyMs);
    self.postMessage({ op: "started" } satisfies CheckpointReply);
  } else if (m.op === "stats") {
    self.postMessage({ op: "stats", stats: { ...stats } } satisfies CheckpointReply);
  } else if (m.op === "stop") {
    clearTimeout(timer);
    try {
      sqlite?.close();
    } catch {}
    sqlite = undefined;
    self.postMessage({ op: "stopped", stats: { ...stats } } satisfies CheckpointReply);
  }
};
