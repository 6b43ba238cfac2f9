/**
 * Where continuous replication sends the database (docs/api-decisions.md, "Continuous replication
 * with Litestream"): one URL an operator types, checked here with plain errors, turned into
 * Litestream's replica settings, and shown back with any secret taken out. Pure: no I/O.
 *
 *   file:///mnt/usb/textwire              a folder (another disk, a NAS mount)
 *   sftp://user@host:22/backups/textwire  an SSH server (?key=/path/to/private-key; a password in
 *                                         the URL works but is better kept out of it)
 *   s3://bucket/path                      Amazon S3; ?endpoint=https://… for R2, B2, MinIO, Wasabi…
 *                                         (?region=, ?force-path-style=true); keys come from the
 *                                         environment as Litestream reads them:
 *                                         LITESTREAM_ACCESS_KEY_ID / LITESTREAM_SECRET_ACCESS_KEY
 *                                         or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
 */

export type ReplicaTarget =
  | { type: "file"; path: string }
  | { type: "sftp"; host: string; port: number; user: string; password?: string; path: string; keyPath?: string }
  | { type: "s3"; bucket: string; path: string; endpoint?: string; region?: string; forcePathStyle?: boolean };

export class ReplicaUrlError extends Error {}

/** Longest replica URL accepted (a path, a host and a few options fit well within it). */
export const REPLICA_URL_MAX_CHARS = 1_024;

const FORMS = "file:///folder, sftp://user@host/folder or s3://bucket/folder";
const S3_OPTIONS = ["endpoint", "region", "force-path-style"];
const SFTP_OPTIONS = ["key"];

function fail(message: string): never {
  throw new ReplicaUrlError(message);
}

/** Decoded path of a URL, refusing what would make a bad folder name. */
function cleanPath(raw: string, what: string): string {
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    fail(`The ${what} in the replica address is not valid (a stray % sign?).`);
  }
  if (/[\u0000-\u001f\u007f]/.test(path)) fail(`The ${what} in the replica address contains a control character.`);
  if (path.split("/").includes("..")) fail(`The ${what} in the replica address may not contain "..".`);
  return path;
}

function options(u: URL, allowed: string[], scheme: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of u.searchParams) {
    if (!allowed.includes(k)) fail(allowed.length ? `A ${scheme}:// replica address takes only these options: ${allowed.join(", ")} (not "${k}").` : `A ${scheme}:// replica address takes no options (not "${k}").`);
    if (out.has(k)) fail(`The option "${k}" is given twice in the replica address.`);
    out.set(k, v);
  }
  return out;
}

/** Parses and checks a replica URL; throws ReplicaUrlError with a sentence a person can act on. */
export function parseReplicaUrl(text: string): ReplicaTarget {
  const raw = text.trim();
  if (raw === "") fail(`Give the replica's address, such as ${FORMS}.`);
  if (raw.length > REPLICA_URL_MAX_CHARS) fail(`The replica address is longer than ${REPLICA_URL_MAX_CHARS} characters.`);
  if (/[\u0000-\u001f\u007f]/.test(raw)) fail("The replica address contains a control character (a line break?).");
  if (raw.startsWith("/")) fail(`Write a folder as a file URL: file://${raw}`);
  // Checked on the text: URL parsing would quietly fold "a/../b" into "b".
  if (/\/(?:\.|%2e){2}(?:[/?#]|$)/i.test(raw)) fail('The folder in the replica address may not contain "..".');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    fail(`"${redactReplicaText(raw)}" is not an address Textwire can replicate to; use ${FORMS}.`);
  }
  const scheme = u.protocol.replace(/:$/, "").toLowerCase();
  if (scheme === "file") {
    if (u.host !== "") fail(`A folder address has three slashes: file:///folder (the folder "${u.host}${u.pathname}" is read as a host name).`);
    if (u.search) fail("A file:// replica address takes no options.");
    const path = cleanPath(u.pathname, "folder").replace(/\/+$/, "");
    if (path === "") fail("Choose a folder for the replica, not the root of the disk: file:///mnt/backup/textwire.");
    return { type: "file", path };
  }
  if (scheme === "sftp") {
    if (!u.hostname) fail("An sftp:// replica address needs a host: sftp://user@host/folder.");
    if (!u.username) fail("An sftp:// replica address needs a user name: sftp://user@host/folder.");
    const path = cleanPath(u.pathname, "folder").replace(/\/+$/, "");
    if (path === "") fail("An sftp:// replica address needs a folder on the server: sftp://user@host/backups/textwire.");
    const opts = options(u, SFTP_OPTIONS, "sftp");
    const keyPath = opts.get("key");
    if (keyPath !== undefined && !keyPath.startsWith("/")) fail('The sftp "key" option is the full path of a private key file, e.g. ?key=/home/me/.ssh/id_ed25519.');
    const target: ReplicaTarget = { type: "sftp", host: u.hostname, port: u.port ? Number(u.port) : 22, user: cleanPath(u.username, "user name"), path };
    if (u.password) target.password = cleanPath(u.password, "password");
    if (keyPath) target.keyPath = keyPath;
    return target;
  }
  if (scheme === "s3") {
    if (u.username || u.password) {
      fail("Keep S3 keys out of the address: set LITESTREAM_ACCESS_KEY_ID and LITESTREAM_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) in the server's environment.");
    }
    const bucket = u.hostname;
    if (!bucket) fail("An s3:// replica address needs a bucket: s3://bucket/folder.");
    if (u.port) fail("Put an S3-compatible store's address in ?endpoint=, not after the bucket name.");
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) fail(`"${bucket}" is not a bucket name: 3 to 63 lower-case letters, digits, dots and dashes.`);
    const path = cleanPath(u.pathname, "folder").replace(/^\/+|\/+$/g, "");
    const opts = options(u, S3_OPTIONS, "s3");
    const target: ReplicaTarget = { type: "s3", bucket, path };
    const endpoint = opts.get("endpoint");
    if (endpoint !== undefined) {
      let e: URL | undefined;
      try {
        e = new URL(endpoint);
      } catch {}
      if (!e || (e.protocol !== "https:" && e.protocol !== "http:") || !e.hostname) fail(`The S3 endpoint must be an http(s) address, e.g. ?endpoint=https://<account>.r2.cloudflarestorage.com (got "${endpoint}").`);
      if (e.username || e.password) fail("Keep S3 keys out of the endpoint: set them in the server's environment.");
      target.endpoint = endpoint.replace(/\/+$/, "");
    }
    const region = opts.get("region");
    if (region !== undefined) {
      if (!/^[a-z0-9-]{1,32}$/.test(region)) fail(`"${region}" is not an S3 region (e.g. us-east-1, auto).`);
      target.region = region;
    }
    const fps = opts.get("force-path-style");
    if (fps !== undefined) {
      if (fps !== "true" && fps !== "false") fail('force-path-style is "true" or "false".');
      target.forcePathStyle = fps === "true";
    }
    return target;
  }
  fail(`Textwire replicates to ${FORMS} — not to ${scheme}:// addresses.`);
}

/** The target as a URL again, with any password left out: what logs, /health and the dashboard show. */
export function displayReplica(t: ReplicaTarget): string {
  const enc = (p: string) => p.split("/").map(encodeURIComponent).join("/");
  if (t.type === "file") return `file://${enc(t.path)}`;
  if (t.type === "sftp") {
    const q = t.keyPath ? `?key=${encodeURIComponent(t.keyPath)}` : "";
    return `sftp://${encodeURIComponent(t.user)}${t.password ? ":***" : ""}@${t.host}${t.port === 22 ? "" : `:${t.port}`}${enc(t.path)}${q}`;
  }
  const q = new URLSearchParams();
  if (t.endpoint) q.set("endpoint", t.endpoint);
  if (t.region) q.set("region", t.region);
  if (t.forcePathStyle !== undefined) q.set("force-path-style", String(t.forcePathStyle));
  const qs = q.toString();
  return `s3://${t.bucket}${t.path ? "/" + enc(t.path) : ""}${qs ? "?" + qs : ""}`;
}

/** Any text that may be a replica URL, with a user:password part masked (for error messages about a URL that did not parse). */
export function redactReplicaText(text: string): string {
  return text.replace(/^([a-z0-9+.-]+:\/\/)([^@/?#]*)@/i, (_, scheme: string, userinfo: string) => `${scheme}${userinfo.includes(":") ? userinfo.split(":")[0] + ":***" : userinfo}@`);
}

/** The replica as the `display` form of whatever was typed: parsed when it parses, masked otherwise. */
export function redactReplicaUrl(text: string): string {
  try {
    return displayReplica(parseReplicaUrl(text));
  } catch {
    return redactReplicaText(text.trim());
  }
}

export interface LitestreamTimings {
  /** How often Litestream looks at the WAL for new frames (ms). */
  monitorMs: number;
  /** Least time between two uploads to the replica (ms). */
  syncMs: number;
  /** A fresh full snapshot this often (ms): bounds how much WAL a restore replays. */
  snapshotMs: number;
  /** Snapshots and WAL kept this long (ms): how far back a restore can go. */
  retentionMs: number;
  /** Pages after which Litestream forces a RESTART checkpoint itself (its last resort). */
  maxCheckpointPages: number;
}

const dur = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
/** A YAML double-quoted scalar: JSON's string syntax is valid YAML, so nothing typed can break out of it. */
const q = (s: string) => JSON.stringify(s);

/**
 * Litestream's configuration for one database and one replica (Litestream v0.3's format). Every
 * value is quoted, and Litestream is started with -no-expand-env, so a "$" in a path or password
 * is taken literally; S3 keys are not written here at all: Litestream reads them from its
 * environment.
 */
export function litestreamConfig(opts: { dbPath: string; target: ReplicaTarget; metricsAddr?: string; timings: LitestreamTimings }): string {
  const t = opts.target;
  const r: string[] = [];
  if (t.type === "file") r.push(`type: file`, `path: ${q(t.path)}`);
  else if (t.type === "sftp") {
    r.push(`type: sftp`, `host: ${q(`${t.host}:${t.port}`)}`, `user: ${q(t.user)}`, `path: ${q(t.path)}`);
    if (t.password) r.push(`password: ${q(t.password)}`);
    if (t.keyPath) r.push(`key-path: ${q(t.keyPath)}`);
  } else {
    r.push(`type: s3`, `bucket: ${q(t.bucket)}`, `path: ${q(t.path)}`);
    if (t.endpoint) r.push(`endpoint: ${q(t.endpoint)}`);
    if (t.region) r.push(`region: ${q(t.region)}`);
    if (t.forcePathStyle !== undefined) r.push(`force-path-style: ${t.forcePathStyle}`);
  }
  r.push(`sync-interval: ${dur(opts.timings.syncMs)}`, `snapshot-interval: ${dur(opts.timings.snapshotMs)}`, `retention: ${dur(opts.timings.retentionMs)}`);
  const lines: string[] = [];
  if (opts.metricsAddr) lines.push(`addr: ${q(opts.metricsAddr)}`);
  lines.push(
    "dbs:",
    `  - path: ${q(opts.dbPath)}`,
    `    monitor-interval: ${dur(opts.timings.monitorMs)}`,
    `    max-checkpoint-page-count: ${opts.timings.maxCheckpointPages}`,
    "    replicas:",
    ...r.map((line, i) => (i === 0 ? `      - ${line}` : `        ${line}`)),
  );
  return lines.join("\n") + "\n";
}
