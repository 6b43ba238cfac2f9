/**
 * The Litestream program (docs/api-decisions.md, "Continuous replication with Litestream"): where
 * it is found, the private configuration file Textwire writes for it, and one-shot runs of its
 * commands (restore, generations, wal). The long-running `litestream replicate` is supervised by
 * src/services/replication.ts.
 *
 * Found, in order: next to the running executable (one put there by hand wins); the one carried
 * inside the compiled executable (src/services/litestream-binary.ts); the npm dependency
 * @flydotio/litestream's binary for this platform (a source checkout after `npm install`);
 * `litestream` on PATH.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { embeddedLitestream } from "./litestream-binary";
import { litestreamConfig, type LitestreamTimings, type ReplicaTarget } from "../domain/replica-url";

export class LitestreamMissingError extends Error {
  constructor() {
    super(
      "Litestream, the program that copies the database to the replica, was not found: put the `litestream` program next to the textwire program or on PATH " +
        "(from a source checkout, `npm install` brings it).",
    );
  }
}

/**
 * Timings Textwire gives Litestream. Lag: Litestream sees a commit within MONITOR and sends it
 * within SYNC, so a commit is on the replica within about their sum (measured: see the decisions
 * section). Remote replicas sync less often: each sync is a paid request to S3-like stores.
 */
export const LITESTREAM_MONITOR_MS = 200;
export const LITESTREAM_SYNC_MS_FILE = 200;
export const LITESTREAM_SYNC_MS_REMOTE = 500;
/** A new full snapshot once a day, so a restore replays at most a day of WAL. */
export const LITESTREAM_SNAPSHOT_MS = 24 * 3_600_000;
/** Restore to any moment of the last three days (a long weekend noticed on Monday). */
export const LITESTREAM_RETENTION_MS = 72 * 3_600_000;

export function litestreamTimings(target: ReplicaTarget, maxCheckpointPages: number): LitestreamTimings {
  return {
    monitorMs: LITESTREAM_MONITOR_MS,
    syncMs: target.type === "file" ? LITESTREAM_SYNC_MS_FILE : LITESTREAM_SYNC_MS_REMOTE,
    snapshotMs: LITESTREAM_SNAPSHOT_MS,
    retentionMs: LITESTREAM_RETENTION_MS,
    maxCheckpointPages,
  };
}

/** The path of the litestream program, or undefined when there is none. */
export function findLitestream(): string | undefined {
  const exe = process.platform === "win32" ? "litestream.exe" : "litestream";
  // A compiled textwire: the program it was shipped with (scripts/build.ts copies it next to it).
  if (!process.execPath.endsWith("/bun") && !process.execPath.endsWith("\\bun.exe")) {
    const beside = join(dirname(process.execPath), exe);
    if (existsSync(beside)) return beside;
    const inside = embeddedLitestream();
    if (inside) return inside;
  }
  try {
    // From source: the platform package of the npm dependency (it has no install script; npm
    // picks the package for this os/cpu among its optional dependencies).
    const pkg = require.resolve(`@flydotio/litestream-${process.platform}-${process.arch}/package.json`);
    const bin = join(dirname(pkg), exe);
    if (existsSync(bin)) return bin;
  } catch {}
  return Bun.which("litestream") ?? undefined;
}

export function requireLitestream(): string {
  const bin = findLitestream();
  if (!bin) throw new LitestreamMissingError();
  return bin;
}

/**
 * Writes Litestream's configuration into a new private folder (0700, the file 0600: it may hold
 * an SFTP password). Returns the file and a function that removes the folder.
 */
export function writeLitestreamConfig(opts: { dbPath: string; target: ReplicaTarget; metricsAddr?: string; maxCheckpointPages: number }): { file: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "textwire-litestream-"));
  chmodSync(dir, 0o700);
  const file = join(dir, "litestream.yml");
  writeFileSync(file, litestreamConfig({ dbPath: opts.dbPath, target: opts.target, metricsAddr: opts.metricsAddr, timings: litestreamTimings(opts.target, opts.maxCheckpointPages) }), { mode: 0o600 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `litestream <args>` to completion (a restore may take minutes on a big database). */
export async function runLitestream(args: string[], opts: { timeoutMs?: number } = {}): Promise<RunResult> {
  const proc = Bun.spawn([requireLitestream(), ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = opts.timeoutMs ? setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs) : undefined;
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Litestream's log line (`time=… level=ERROR msg="…" key=value …`) as a message and fields. */
export function parseLitestreamLine(line: string): { level: "info" | "warn" | "error"; msg: string; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  const re = /([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g;
  let m: RegExpExecArray | null;
  let found = false;
  while ((m = re.exec(line))) {
    found = true;
    let v = m[2];
    if (v.startsWith('"')) {
      try {
        v = JSON.parse(v);
      } catch {
        v = v.slice(1, -1);
      }
    }
    fields[m[1]] = v;
  }
  if (!found || fields.msg === undefined) {
    // Older or unstructured output: the whole line is the message.
    const lower = line.toLowerCase();
    return { level: /error|fail|cannot|denied/.test(lower) ? "error" : "info", msg: line.trim(), fields: {} };
  }
  const lvl = (fields.level ?? "INFO").toUpperCase();
  const { time: _t, level: _l, msg, ...rest } = fields;
  const level = lvl === "ERROR" ? "error" : lvl === "WARN" ? "warn" : "info";
  // Litestream reports some failures at INFO with an "error" field.
  return { level: rest.error || rest.err ? (level === "info" ? "error" : level) : level, msg, fields: rest };
}

/**
 * Litestream's count of failed syncs from its Prometheus endpoint (undefined before its first
 * sync). Its position gauges are not used: see src/services/replication.ts on why they cannot
 * tell the replica's lag.
 */
export function litestreamSyncErrors(text: string): number | undefined {
  const m = /^litestream_sync_error_count(?:\{[^}]*\})? ([0-9.eE+-]+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}
