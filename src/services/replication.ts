/**
 * Continuous replication (docs/api-decisions.md, "Continuous replication with Litestream"): the
 * server runs `litestream replicate` as a child process with a configuration it writes itself,
 * starts it again (with a growing pause) when it dies, turns its log into Textwire log lines, and
 * stops it last on shutdown — after every write — with SIGTERM, on which Litestream makes its
 * final sync. When the server dies instead (SIGKILL, a crash), Litestream still gets SIGTERM
 * (setpriv's parent-death signal) and finishes that sync on its own: its log goes to a file next
 * to its configuration, never to a pipe that would die with the server (a Go program writing to a
 * closed pipe is killed by SIGPIPE before it syncs); the next start waits for such a Litestream to
 * finish before it starts its own (docs/api-decisions.md, "Nothing the phone reports is lost, and
 * nobody takes the dashboard: hardening round three").
 *
 * Where to: the --replicate flag (TEXTWIRE_REPLICATE) when given, else the address an operator
 * saved from the dashboard (server_settings "replication.url"). Changing the saved address
 * restarts Litestream on the new one; the flag cannot be overridden from the dashboard.
 *
 * How far behind: Litestream keeps a "shadow WAL" in a folder next to the database — everything it
 * has taken from the database's WAL — whose end Textwire reads (shadowPosition, with the index
 * from Litestream's Prometheus endpoint, bound to 127.0.0.1 on a free port); its log says where
 * each upload to the replica ended (replicaWrote). Both work for every replica type alike, as the
 * shadow WAL is always local. Each poll remembers when
 * each shadow position was first seen; the replica holds everything Litestream had at the moment
 * of the latest such observation its position covers — `lastSyncAt` — and `lagSeconds` is the
 * time since then while the replica is behind (0 when it holds all). Litestream sees a commit
 * within its monitor interval (LITESTREAM_MONITOR_MS), which comes on top.
 *
 * The child process, its generation, the shadow-WAL position and the lag it yields are one
 * supervisor's state, kept here; the files Litestream leaves next to the database (its log, its
 * pid file) are read and cleaned up by ./litestream-files.ts.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { iso, type Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { displayReplica, parseReplicaUrl, type ReplicaTarget } from "../domain/replica-url";
import { REPLICATION_FAIL_AFTER_S, REPLICATION_WARN_AFTER_S, replicationMetricsLines, type ReplicationHealth, type ReplicationState, type StalledNotice } from "./replication-health";
import { clearPid, finishOrphan, LogTail, STOP_GRACE_MS, writePid } from "./litestream-files";
import { findLitestream, LitestreamMissingError, litestreamSyncErrors, parseLitestreamLine, writeLitestreamConfig } from "./litestream";

/** How often Litestream's figures are read (the lag's resolution). */
export const REPLICATION_POLL_MS = 200;
/** How often Litestream's metrics endpoint is read (its sync error count). */
const METRICS_EVERY_MS = 2_000;
/** Pauses before starting a Litestream that died again (ms): 1 s, 2 s, 5 s, 10 s, then every 30 s. */
export const RESTART_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
/** A Litestream that ran this long before dying starts the backoff over. */
const BACKOFF_RESET_AFTER_MS = 60_000;
/** Litestream's nice level (0 = the server's own priority); see launch(). */
export const LITESTREAM_NICE = 10;

/** Litestream lines that report each routine upload (several a second under load): not logged. */
const ROUTINE = new Set(["write wal segment", "wal segment written", "write snapshot", "snapshot written", "checkpoint"]);

export interface ReplicationOptions {
  dbPath: string;
  /** --replicate (flag or env): wins over the saved setting. */
  flagUrl?: string;
  /** The saved setting (read at start and after each save). */
  savedUrl: () => string | null;
  logger: Logger;
  clock: Clock;
  /** A stall began (one call per spell). */
  onStalled?: (notice: StalledNotice) => void;
  /** Litestream's own RESTART threshold (pages): see the checkpointer. */
  maxCheckpointPages: number;
  /**
   * A tiny write, made once each new Litestream has made its first sync: its upload is how a new Litestream process
   * learns — and says in its log — where the replica ends; an idle database would otherwise give
   * it nothing to upload, and the replica could not be confirmed current until the next write.
   */
  heartbeat?: () => void;
  /**
   * Told when replication is turned on or off, so the checkpointer follows Litestream's rules. Not
   * when Litestream merely restarts: an idle TRUNCATE in that pause would make the restarted
   * Litestream begin a new generation (a full snapshot).
   */
  onActive?: (active: boolean) => void;
}

type Pos = [index: number, offset: number];
const le = (a: Pos, b: Pos) => a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1]);

export class ReplicationSupervisor {
  readonly name = "replication";
  private target: ReplicaTarget | undefined;
  private source: "flag" | "setting" | null = null;
  private child: Subprocess | undefined;
  /** Litestream's log file, read from `offset` at every poll. */
  private log: LogTail | undefined;
  private configRemove: (() => void) | undefined;
  private metricsUrl: string | undefined;
  private stopping = false;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private polling = false;
  private attempt = 0;
  private childStartedAt = 0;
  /** When replication to the current target began (the lag counts from here before the first sync). */
  private since = 0;
  private lastSync: number | null = null;
  private behind = false;
  private observed: Array<{ t: number; pos: Pos }> = [];
  private lastError: string | null = null;
  private stalled = false;
  private generation = 0;
  /** Litestream restarts after it died, and errors it reported (lines at ERROR, failed syncs). */
  readonly counters = { restarts: 0, errors: 0, syncErrorsSeen: 0 };
  private syncErrorBase = 0;
  /** The replica's end position in the current generation (see replicaWrote). */
  private replicaPos: Pos | undefined;
  private replicaGeneration = "";
  private shadowGeneration = "";
  private metricsReadAt = 0;

  private ready = false;

  constructor(private readonly o: ReplicationOptions) {}

  /** The address in force and where it comes from (the flag wins), or an error for a saved address that no longer parses. */
  private resolveTarget(): { target?: ReplicaTarget; source: "flag" | "setting" | null } {
    if (this.o.flagUrl) return { target: parseReplicaUrl(this.o.flagUrl), source: "flag" };
    const saved = this.o.savedUrl();
    if (!saved) return { source: null };
    try {
      return { target: parseReplicaUrl(saved), source: "setting" };
    } catch (err) {
      this.o.logger.error("the saved replica address is not valid; replication is off until it is changed", { error: (err as Error).message });
      return { source: null };
    }
  }

  async start(): Promise<void> {
    if (this.o.dbPath === ":memory:") return;
    // A Litestream a killed server left finishing its last sync finishes it before we serve.
    await finishOrphan(this.o.dbPath, this.o.logger);
    const { target, source } = this.resolveTarget();
    this.begin(target, source);
  }

  /** The dashboard saved a new address (or none): Litestream is restarted on it. */
  async reload(): Promise<void> {
    if (this.o.flagUrl || this.o.dbPath === ":memory:") return;
    await this.halt();
    const { target, source } = this.resolveTarget();
    this.begin(target, source);
  }

  get flagInForce(): boolean {
    return Boolean(this.o.flagUrl);
  }

  private begin(target: ReplicaTarget | undefined, source: "flag" | "setting" | null) {
    this.target = target;
    this.source = target ? source : null;
    this.stopping = false;
    this.attempt = 0;
    this.since = this.o.clock();
    this.lastSync = null;
    this.behind = true;
    this.observed = [];
    this.lastError = null;
    this.stalled = false;
    this.replicaPos = undefined;
    this.replicaGeneration = "";
    this.shadowGeneration = "";
    this.generation++;
    this.o.onActive?.(Boolean(target));
    if (!target) return;
    this.o.logger.info("replicating the database", { to: displayReplica(target), source });
    if (target.type === "file" && sameDisk(this.o.dbPath, target.path)) {
      this.o.logger.warn("the replica folder is on the same disk as the database: a disk that dies takes both; choose a folder on another disk, a NAS, SFTP or S3", { to: displayReplica(target) });
    }
    this.pollTimer = setInterval(() => void this.poll(), REPLICATION_POLL_MS);
    this.pollTimer.unref?.();
    void this.launch(this.generation);
  }

  private async launch(generation: number): Promise<void> {
    if (this.stopping || generation !== this.generation || !this.target) return;
    const bin = findLitestream();
    if (!bin) {
      const err = new LitestreamMissingError();
      if (this.lastError !== err.message) this.o.logger.error(err.message);
      this.lastError = err.message;
      return this.scheduleRestart(generation);
    }
    await finishOrphan(this.o.dbPath, this.o.logger);
    const port = await freePort();
    if (this.stopping || generation !== this.generation) return;
    const cfg = writeLitestreamConfig({ dbPath: resolve(this.o.dbPath), target: this.target, metricsAddr: `127.0.0.1:${port}`, maxCheckpointPages: this.o.maxCheckpointPages });
    this.configRemove = cfg.remove;
    this.metricsUrl = `http://127.0.0.1:${port}/metrics`;
    // With setpriv, Litestream gets SIGTERM (its clean stop, with a last sync) should this process
    // die without stopping it; a Litestream left over anyway is stopped by the next start (finishOrphan).
    const setpriv = process.platform === "linux" ? Bun.which("setpriv") : null;
    // Below the server's priority: on a busy small machine the server's answers come first and
    // Litestream catches up in the quieter moments (docs/api-decisions.md, the benchmark there).
    const nice = LITESTREAM_NICE > 0 ? Bun.which("nice") : null;
    const argv = [...(nice ? [nice, "-n", String(LITESTREAM_NICE)] : []), bin, "replicate", "-no-expand-env", "-config", cfg.file];
    // Its log goes to a file (appended, so emptying it is safe): it outlives this process.
    const logPath = join(dirname(cfg.file), "litestream.log");
    let child: Subprocess;
    let fd: number | undefined;
    try {
      fd = openSync(logPath, "a", 0o600);
      child = Bun.spawn(setpriv ? [setpriv, "--pdeathsig", "TERM", ...argv] : argv, { stdin: "ignore", stdout: fd, stderr: fd });
    } catch (err) {
      this.lastError = `Litestream could not be started: ${(err as Error).message}`;
      this.o.logger.error(this.lastError);
      cfg.remove();
      return this.scheduleRestart(generation);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    this.child = child;
    this.log = new LogTail(logPath);
    this.childStartedAt = this.o.clock();
    this.syncErrorBase = this.counters.syncErrorsSeen;
    writePid(this.o.dbPath, child.pid, cfg.file);
    this.ready = false;
    void child.exited.then((code) => this.exited(child, code, generation));
  }

  /** Reads what Litestream logged since the last look, line by line (every poll, and when it exits). */
  private readLog(): void {
    this.log?.read((line) => this.line(line));
  }

  private line(text: string) {
    if (!text.trim()) return;
    const { level, msg, fields } = parseLitestreamLine(this.redact(text));
    if (msg === "wal segment written" || msg === "snapshot written") this.replicaWrote(msg, fields);
    if (level === "info" && ROUTINE.has(msg)) return;
    if (level === "error") {
      this.counters.errors++;
      this.lastError = fields.error ? `${msg}: ${fields.error}` : msg;
    }
    this.o.logger[level](`litestream: ${msg}`, fields);
  }

  /**
   * What the replica holds, from Litestream's own report of each upload ("wal segment written
   * position=<generation>/<index hex>:<offset> sz=<bytes>", "snapshot written position=…"): the
   * same lines for every replica type. Its Prometheus gauge for the replica's offset gives where
   * the last upload began, not where it ended, so it cannot tell "caught up" from "one upload behind".
   */
  private replicaWrote(msg: string, fields: Record<string, string>) {
    const m = /^([0-9a-f]+)\/([0-9a-f]+):(\d+)$/.exec(fields.position ?? "");
    if (!m) return;
    const end: Pos = [parseInt(m[2], 16), Number(m[3]) + (msg === "wal segment written" ? Number(fields.sz ?? 0) : 0)];
    if (m[1] !== this.replicaGeneration) {
      this.replicaGeneration = m[1];
      this.replicaPos = end;
    } else if (!this.replicaPos || le(this.replicaPos, end)) this.replicaPos = end;
    this.settle();
  }

  /** An SFTP password never reaches the log, whatever Litestream prints. */
  private redact(text: string): string {
    const t = this.target;
    if (t?.type === "sftp" && t.password) return text.split(t.password).join("***");
    return text;
  }

  private exited(child: Subprocess, code: number | null, generation: number) {
    if (this.child === child) {
      this.child = undefined;
      // Its last words (the last upload, an error) before the folder goes.
      this.readLog();
      const last = this.log?.rest();
      if (last?.trim()) this.line(last);
      this.log = undefined;
    }
    this.configRemove?.();
    this.configRemove = undefined;
    clearPid(this.o.dbPath, child.pid);
    if (this.stopping || generation !== this.generation) return;
    this.counters.restarts++;
    if (this.o.clock() - this.childStartedAt > BACKOFF_RESET_AFTER_MS) this.attempt = 0;
    const wait = RESTART_BACKOFF_MS[Math.min(this.attempt, RESTART_BACKOFF_MS.length - 1)];
    this.lastError ??= `Litestream stopped (exit code ${code})`;
    this.o.logger.warn("litestream stopped unexpectedly; starting it again", { exitCode: code, inSeconds: wait / 1000 });
    this.scheduleRestart(generation);
  }

  private scheduleRestart(generation: number) {
    const wait = RESTART_BACKOFF_MS[Math.min(this.attempt, RESTART_BACKOFF_MS.length - 1)];
    this.attempt++;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.launch(generation), wait);
    this.restartTimer.unref?.();
  }

  /**
   * One look at the shadow WAL's end (local files: it does not wait on a busy Litestream), its sync
   * error count from the metrics endpoint (when it answers in time), then the stall check.
   */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      if (this.child) {
        this.readLog();
        this.observe();
        const url = this.metricsUrl;
        if (url && this.o.clock() - this.metricsReadAt >= METRICS_EVERY_MS) {
          this.metricsReadAt = this.o.clock();
          try {
            const errors = litestreamSyncErrors(await (await fetch(url, { signal: AbortSignal.timeout(2_000) })).text());
            if (errors !== undefined && errors + this.syncErrorBase > this.counters.syncErrorsSeen) this.counters.syncErrorsSeen = errors + this.syncErrorBase;
          } catch {
            // Not listening yet (starting), or too busy to answer: next time.
          }
        }
      }
      this.checkStall();
    } finally {
      this.polling = false;
    }
  }

  /**
   * Where Litestream's shadow WAL ends: its current generation (the "generation" file in its
   * working folder next to the database), its newest index (the highest <index>.wal there) and that
   * file's size — the shadow WAL is written uncompressed, so the size is the position.
   */
  private shadowPosition(): { generation: string; pos: Pos } | undefined {
    const db = resolve(this.o.dbPath);
    const meta = join(dirname(db), `.${basename(db)}-litestream`);
    try {
      const generation = readFileSync(join(meta, "generation"), "utf8").trim();
      const dir = join(meta, "generations", generation, "wal");
      let index = -1;
      for (const f of readdirSync(dir)) {
        const m = /^([0-9a-f]{8})\.wal$/.exec(f);
        if (m) index = Math.max(index, parseInt(m[1], 16));
      }
      if (index < 0) return undefined;
      return { generation, pos: [index, statSync(join(dir, `${index.toString(16).padStart(8, "0")}.wal`)).size] };
    } catch {
      return undefined;
    }
  }

  private observe() {
    const found = this.shadowPosition();
    if (!found) return;
    if (!this.ready) {
      // Litestream's first sync is done (it has its shadow WAL and holds its read transaction):
      // the start-up write now gives it something to upload.
      this.ready = true;
      if (!this.replicaPos) {
        try {
          this.o.heartbeat?.();
        } catch (err) {
          this.o.logger.warn("replication: the start-up write failed; the replica is confirmed at the next write", { error: String((err as Error)?.message ?? err) });
        }
      }
    }
    const shadow = found.pos;
    const last = this.observed[this.observed.length - 1];
    // A new generation starts the positions over: earlier observations no longer compare.
    if (found.generation !== this.shadowGeneration || (last && !le(last.pos, shadow))) this.observed = [];
    this.shadowGeneration = found.generation;
    if (!last || last.pos[0] !== shadow[0] || last.pos[1] !== shadow[1] || this.observed.length === 0) this.observed.push({ t: this.o.clock(), pos: shadow });
    this.settle();
  }

  /**
   * Observations of the shadow WAL the replica now covers: the replica held everything Litestream
   * had at the latest of them. Run on each look at the shadow and on each upload Litestream reports.
   */
  private settle() {
    const replica = this.replicaPos;
    if (!replica || this.replicaGeneration !== this.shadowGeneration) {
      this.behind = true; // nothing of this generation on the replica yet
      return;
    }
    let covered = -1;
    for (let i = 0; i < this.observed.length; i++) if (le(this.observed[i].pos, replica)) covered = i;
    if (covered < 0) {
      this.behind = true;
      return;
    }
    const newest = covered === this.observed.length - 1;
    const t = this.observed[covered].t;
    // All of the newest observation is on the replica: current as of now, until the shadow moves.
    this.lastSync = Math.max(this.lastSync ?? 0, newest ? this.o.clock() : t);
    this.behind = !newest;
    if (newest) this.lastError = null;
    this.observed = this.observed.slice(covered + (newest ? 0 : 1));
  }

  private lagMs(now: number): number | null {
    if (!this.target) return null;
    if (!this.behind && this.child) return 0;
    return Math.max(0, now - (this.lastSync ?? this.since));
  }

  private checkStall() {
    const h = this.health();
    if (h.state === "stalled" && !this.stalled) {
      this.stalled = true;
      this.o.logger.error("replication has stalled: the replica is more than a minute behind", { to: h.target, lagSeconds: h.lagSeconds, lastError: h.lastError });
      this.o.onStalled?.({ target: h.target!, lagSeconds: h.lagSeconds!, lastSyncAt: h.lastSyncAt, lastError: h.lastError });
    } else if (h.state === "ok" && this.stalled) {
      this.stalled = false;
      this.o.logger.info("replication caught up again", { to: h.target });
    }
  }

  health(): ReplicationHealth {
    if (!this.target) return { state: "off", lagSeconds: null, lastSyncAt: null, target: null, source: null, running: false, lastError: this.lastError };
    const now = this.o.clock();
    const lag = (this.lagMs(now) ?? 0) / 1000;
    const state: ReplicationState =
      lag > REPLICATION_FAIL_AFTER_S ? "stalled" : lag > REPLICATION_WARN_AFTER_S ? "behind" : this.lastSync === null ? "starting" : "ok";
    return {
      state,
      lagSeconds: Math.round(lag * 10) / 10,
      lastSyncAt: this.lastSync === null ? null : iso(this.lastSync),
      target: displayReplica(this.target),
      source: this.source,
      running: this.child !== undefined,
      lastError: this.lastError,
    };
  }

  /** The running Litestream's process id (tests stop it to see it restarted). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  metricsLines(): string[] {
    return replicationMetricsLines(this.health(), this.counters);
  }

  /** Stops Litestream with SIGTERM (its last sync) and waits for it; killed after STOP_GRACE_MS. */
  private async halt(): Promise<void> {
    this.stopping = true;
    this.generation++;
    clearTimeout(this.restartTimer);
    clearInterval(this.pollTimer);
    const child = this.child;
    if (child) {
      child.kill("SIGTERM");
      const killed = await Promise.race([child.exited.then(() => false), Bun.sleep(STOP_GRACE_MS).then(() => true)]);
      if (killed) {
        this.o.logger.warn("litestream did not stop in time after its last sync; killed", { graceSeconds: STOP_GRACE_MS / 1000 });
        child.kill("SIGKILL");
        await child.exited;
      }
      // exited() has run (it was queued on the same promise before this await).
      await Bun.sleep(0);
    }
    this.configRemove?.();
    this.configRemove = undefined;
  }

  async stop(): Promise<void> {
    await this.halt();
  }
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Whether a file replica's folder (or its nearest existing parent) is on the database's device. */
function sameDisk(dbPath: string, folder: string): boolean {
  try {
    const dbDev = statSync(dirname(resolve(dbPath))).dev;
    let dir = resolve(folder);
    while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
    return statSync(dir).dev === dbDev;
  } catch {
    return false;
  }
}
