/**
 * One typed config: flag > TEXTWIRE_* env > default. This is the only module that reads env.
 * Every option, its default and its unit live in OPTIONS; `--help` and the options table of docs/operations.md follow it.
 */
import { IpRangeList } from "./lib/ip-ranges";
import { parseReplicaUrl } from "./domain/replica-url";
import { parseDomains } from "./domain/public-names";

/** What `--trust-proxy` (or `true`) trusts when no addresses are given: this machine. */
export const LOOPBACK_PROXIES = ["127.0.0.0/8", "::1"];

export type OptionType = "string" | "int" | "bool";

export interface OptionSpec {
  flag: string; // without the leading --
  type: OptionType;
  default?: string | number | boolean;
  help: string;
  /** Options read by every command (--db); the rest belong to `serve`. */
  global?: boolean;
  min?: number;
  max?: number;
  /** What the flag means given bare (`--trust-proxy`), for an option that otherwise takes a value. */
  bare?: string;
}

export const DEFAULT_DB_PATH = "./data/textwire.db";
export const DEFAULT_PORT = 8080;
/** With HTTPS and no --port: HTTPS here, and DEFAULT_PORT redirects to it (src/cli/serve.ts). */
export const DEFAULT_TLS_PORT = 8443;
/** With --domain: plain HTTP (ACME's HTTP-01 check, and 308 to HTTPS) and HTTPS on the standard ports. */
export const DOMAIN_PLAIN_PORT = 80;
export const DOMAIN_HTTPS_PORT = 443;
/** Per-form webhook token bucket: capacity and refill per minute (docs/operations.md, "Limits": 100 per minute per form). */
export const DEFAULT_WEBHOOK_LIMIT_PER_MINUTE = 100;
/** Per-account device send rate (docs/operations.md, "Limits": 50 messages per minute per account). */
export const DEFAULT_SEND_RATE_PER_MINUTE = 50;
/** Leases that may expire with no report before a message fails with "no-report". */
export const DEFAULT_MAX_LEASE_ATTEMPTS = 3;
/** A phone that holds leases and makes no request for this long is offline: its leases are released. */
export const DEFAULT_DEVICE_OFFLINE_AFTER = "2m";
/** Requests per minute per phone (SMSGate routes, and next/status with a key): its own limiter. */
export const DEFAULT_DEVICE_LIMIT_PER_MINUTE = 600;
/** Due messages with no device asking for work this long: the queue is stuck (the queue.stuck event; /health). */
export const DEFAULT_STUCK_AFTER = "10m";
/** After a text (or e-mail) to someone on the team, the next waits this long; what arrives meanwhile is told in one. */
export const DEFAULT_TEAM_NOTICE_GAP = "2m";
/** Days outbound events and their delivery log are kept. */
export const DEFAULT_EVENT_RETENTION_DAYS = 30;
/** Failed authentications (a key presented and refused) allowed per client IP per minute. */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 20;
/**
 * The server connection's SQLite page cache, in MiB (SQLite's own default is 2 MiB). It holds the
 * hot pages of the webhook path — the right-hand leaves of every index a message insert touches and
 * the contacts' phone index a lookup walks (8 MiB holds that index for ~150,000 contacts) — so a
 * batch reads little back from the OS. Sized against the 150 MB RSS target: the server peaks at
 * ~135–140 MB under the webhook benchmark with SQLite's default, and the cache is paid in full
 * under load (measured: 32 MiB put the peak at ~152 MB). Short-lived connections (CLI, backup and
 * checkpoint workers) keep the default.
 */
export const DEFAULT_SQLITE_CACHE_MB = 8;

export const OPTIONS: OptionSpec[] = [
  { flag: "db", type: "string", default: DEFAULT_DB_PATH, help: "SQLite database file (its folder is created)", global: true },
  { flag: "port", type: "int", default: DEFAULT_PORT, min: 0, max: 65535, help: "listen port (0 = any free port; the chosen port is printed)" },
  { flag: "host", type: "string", default: "0.0.0.0", help: "listen address" },
  { flag: "public-url", type: "string", help: "origin used to build webhookUrl, e.g. https://sms.example.com (default: from the request)" },
  { flag: "tls-cert", type: "string", help: "PEM certificate file; with --tls-key the API speaks HTTPS (default: <db folder>/tls/server.crt once `textwire tls init` made it)" },
  { flag: "tls-key", type: "string", help: "PEM private key file" },
  { flag: "redirect-port", type: "int", min: 0, max: 65535, help: "with TLS: plain-HTTP listener answering every request with 308 to HTTPS and serving /ca.crt (default 8080 when --port is not given; HTTPS then listens on 8443)" },
  { flag: "smsgate-local-port", type: "int", min: 0, max: 65535, help: "also listen (plain HTTP) on this port with the SMSGate app's local-server API at the root, for tools that take only a host and port, such as Home Assistant (docs/phones.md) [default: off]" },
  { flag: "trust-proxy", type: "string", bare: "true", help: "reverse proxies whose X-Forwarded-For/-Proto/-Host are honoured, when the connection comes from one of them: addresses or CIDR ranges, comma-separated (IPv4 and IPv6), or true for this machine only (127.0.0.0/8, ::1); forwarded http is redirected (308) to https [default: off]" },
  { flag: "webhook-limit-per-minute", type: "int", default: DEFAULT_WEBHOOK_LIMIT_PER_MINUTE, min: 1, help: "per-form webhook limit (requests per minute)" },
  { flag: "send-rate-per-minute", type: "int", default: DEFAULT_SEND_RATE_PER_MINUTE, min: 1, help: "per-account device send rate (messages per minute), for estimates and `next`" },
  { flag: "max-lease-attempts", type: "int", default: DEFAULT_MAX_LEASE_ATTEMPTS, min: 1, max: 100, help: "lease expiries with no report before a message fails with no-report" },
  { flag: "device-offline-after", type: "string", default: DEFAULT_DEVICE_OFFLINE_AFTER, help: "a phone holding leases with no request for this long is offline and its leases go back at once (e.g. 2m, 90s)" },
  { flag: "stuck-after", type: "string", default: DEFAULT_STUCK_AFTER, help: "messages due and no phone asking for work for this long = the queue is stuck: /health says so and a queue.stuck event goes out (e.g. 10m)" },
  { flag: "device-limit-per-minute", type: "int", default: DEFAULT_DEVICE_LIMIT_PER_MINUTE, min: 1, help: "requests per minute per phone (replaces the key's API limit for phone traffic; status reports are never refused)" },
  { flag: "auth-failures-per-minute", type: "int", default: DEFAULT_AUTH_FAILURES_PER_MINUTE, min: 1, help: "refused API keys allowed per client IP per minute; then every key from that IP gets 429 until the bucket refills" },
  { flag: "log-format", type: "string", help: "access log format: pretty | json (default: pretty on a TTY, else json)" },
  { flag: "backup-dir", type: "string", help: "folder for scheduled backups (with --backup-every)" },
  { flag: "smtp-url", type: "string", help: "SMTP server for the team's e-mail notifications, e.g. smtps://user:password@mail.example.com:465 or smtp://mail.example.com:587 (STARTTLS when offered) [default: none: no e-mail]" },
  { flag: "team-notice-gap", type: "string", default: DEFAULT_TEAM_NOTICE_GAP, help: "after a text or e-mail telling someone on the team of new requests or replies, the next waits this long and tells everything that arrived meanwhile at once (e.g. 2m, 30s)" },
  { flag: "smtp-from", type: "string", help: "the From address of notification e-mails, e.g. Textwire <textwire@example.com> (default: textwire@<the SMTP server's domain>)" },
  { flag: "backup-every", type: "string", help: "scheduled backup interval, e.g. 24h, 30m, 7d (default 24h when --backup-dir is set)" },
  { flag: "backup-keep", type: "int", default: 7, min: 1, help: "scheduled backups to keep" },
  { flag: "captcha-verify-url-turnstile", type: "string", help: "siteverify URL for Turnstile (default Cloudflare's; for tests or a proxy)" },
  { flag: "captcha-verify-url-hcaptcha", type: "string", help: "siteverify URL for hCaptcha (default hCaptcha's)" },
  { flag: "captcha-verify-url-recaptcha", type: "string", help: "siteverify URL for reCAPTCHA (default Google's)" },
  { flag: "metrics", type: "bool", default: true, help: "serve GET /metrics (admin key required); --metrics=false disables it" },
  { flag: "allow-private-webhook-urls", type: "bool", default: false, help: "let event endpoints point at loopback (this machine) or link-local addresses; LAN addresses are always allowed" },
  { flag: "event-retention-days", type: "int", default: DEFAULT_EVENT_RETENTION_DAYS, min: 1, help: "days outbound events and their delivery log are kept" },
  { flag: "sqlite-cache-mb", type: "int", default: DEFAULT_SQLITE_CACHE_MB, min: 0, max: 4096, help: "SQLite page cache of the server's connection, in MiB (0 = SQLite's default of 2 MiB)" },
  { flag: "sqlite-temp-store", type: "string", default: "memory", help: "where SQLite keeps statement and savepoint journals: memory | file" },
  { flag: "checkpoint", type: "string", default: "background", help: "WAL checkpoints: background (own thread and connection, off the request path) | inline (SQLite's automatic ones, inside a commit)" },
  { flag: "checkpoint-idle-ms", type: "int", min: 1_000, max: 86_400_000, help: "with --checkpoint background: how long the server writes nothing before the -wal file is folded into the database and emptied, in ms (shorter: more bytes to the disk at a quiet shop's rate) [default: 300000, 5 minutes]" },
  { flag: "commit-sync", type: "string", default: "background", help: "how a commit reaches the disk: background (the fsync runs off the main thread, the write lock is free meanwhile; answers still wait for it) | inline (inside the commit, synchronous=FULL)" },
  { flag: "replicate", type: "string", help: "stream every change to a replica with Litestream: file:///folder, sftp://user@host/folder or s3://bucket/folder (?endpoint= for S3-compatible stores; keys from LITESTREAM_ACCESS_KEY_ID/LITESTREAM_SECRET_ACCESS_KEY or AWS_*); wins over the dashboard setting" },
  { flag: "replica-checkpoints", type: "string", default: "litestream", help: "with replication on: litestream (Textwire's checkpoints follow Litestream's: PASSIVE only, Litestream restarts the WAL) | own (Textwire's usual TRUNCATE/RESTART; for measurement only)" },
  { flag: "domain", type: "string", help: "public name(s) of this server, comma-separated, e.g. sms.example.com: gets and renews a certificate every browser trusts from an ACME CA (Let's Encrypt), HTTPS on --https-port, plain HTTP on --port answers 308 to it; wins over the dashboard's setting [default: off]" },
  { flag: "acme-email", type: "string", help: "with --domain: e-mail address the certificate authority writes to about the certificate (optional)" },
  { flag: "acme-directory", type: "string", help: "with --domain: the ACME CA's directory URL (another CA, or Let's Encrypt's staging https://acme-staging-v02.api.letsencrypt.org/directory) [default: Let's Encrypt]" },
  { flag: "acme-ca-file", type: "string", help: "with --domain: PEM file of a CA to trust for the ACME server's own HTTPS (a test CA such as Pebble's)" },
  { flag: "https-port", type: "int", min: 0, max: 65535, help: "with HTTPS on: the HTTPS port, while --port answers plain HTTP with 308 to it (default 443 with --domain, else 8443)" },
  { flag: "stage-timing", type: "bool", default: false, help: "time each stage of the webhook path and show the sums in /metrics (for the benchmark; costs a little per request)" },
];

export class ConfigError extends Error {}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
  /** Every value of a flag given more than once (`--ip A --ip B`); `flags` keeps the last. */
  repeated?: Map<string, Array<string | true>>;
}

/** `--name value`, `--name=value`, bare `--flag` (true). Everything after `--` is positional. */
export function parseArgs(argv: string[], booleanFlags: Set<string> = new Set()): ParsedArgs {
  const positionals: string[] = [];
  const seen = new Map<string, string | true>();
  const repeated = new Map<string, Array<string | true>>();
  const flags = {
    set(name: string, value: string | true) {
      repeated.set(name, [...(repeated.get(name) ?? []), value]);
      seen.set(name, value);
    },
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
      else {
        const name = a.slice(2);
        const next = argv[i + 1];
        if (!booleanFlags.has(name) && next !== undefined && !next.startsWith("--")) {
          flags.set(name, next);
          i++;
        } else flags.set(name, true);
      }
    } else if (a === "-h") flags.set("help", true);
    else if (a === "-v") flags.set("version", true);
    else positionals.push(a);
  }
  return { positionals, flags: seen, repeated };
}

export const envName = (flag: string) => "TEXTWIRE_" + flag.toUpperCase().replace(/-/g, "_");

function coerce(spec: OptionSpec, given: string | true, origin: string): string | number | boolean {
  const raw = given === true && spec.bare !== undefined ? spec.bare : given;
  if (spec.type === "bool") {
    if (raw === true) return true;
    const v = raw.toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
    throw new ConfigError(`${origin}: expected true or false, got "${raw}"`);
  }
  if (raw === true) throw new ConfigError(`${origin}: needs a value`);
  if (spec.type === "int") {
    if (!/^-?\d+$/.test(raw)) throw new ConfigError(`${origin}: expected a whole number, got "${raw}"`);
    const n = Number(raw);
    if (spec.min !== undefined && n < spec.min) throw new ConfigError(`${origin}: must be at least ${spec.min}`);
    if (spec.max !== undefined && n > spec.max) throw new ConfigError(`${origin}: must be at most ${spec.max}`);
    return n;
  }
  return raw;
}

export type Env = Record<string, string | undefined>;

/** Resolves the named options: flag > env > default. Unknown flags are refused. */
export function resolveOptions(
  parsed: ParsedArgs,
  specs: OptionSpec[],
  env: Env,
  extraFlags: string[] = [],
): Record<string, string | number | boolean | undefined> {
  const known = new Set([...specs.map((s) => s.flag), ...extraFlags, "help"]);
  for (const name of parsed.flags.keys()) {
    if (!known.has(name)) throw new ConfigError(`unknown option --${name}`);
  }
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const spec of specs) {
    const flag = parsed.flags.get(spec.flag);
    const fromEnv = env[envName(spec.flag)];
    if (flag !== undefined) out[spec.flag] = coerce(spec, flag, `--${spec.flag}`);
    else if (fromEnv !== undefined && fromEnv !== "") out[spec.flag] = coerce(spec, fromEnv, envName(spec.flag));
    else out[spec.flag] = spec.default;
  }
  return out;
}

export interface ServeConfig {
  db: string;
  port: number;
  host: string;
  publicUrl?: string;
  /** SMTP for the team's e-mail notifications (a secret: never logged); unset: no e-mail. */
  smtpUrl?: string;
  smtpFrom?: string;
  /** --team-notice-gap in ms. */
  teamNoticeGapMs: number;
  tlsCert?: string;
  tlsKey?: string;
  redirectPort?: number;
  /** The SMSGate app's local-server API on its own port (src/http/smsgate-local.ts); off when unset. */
  smsgateLocalPort?: number;
  /** Forwarded headers are honoured (from the proxies in trustedProxies only). */
  trustProxy: boolean;
  /** Addresses and CIDR ranges of the trusted proxies; unset with trustProxy = this machine (loopback). */
  trustedProxies?: string[];
  webhookLimitPerMinute: number;
  sendRatePerMinute: number;
  maxLeaseAttempts: number;
  deviceOfflineAfterMs: number;
  stuckAfterMs: number;
  deviceLimitPerMinute: number;
  authFailuresPerMinute: number;
  logFormat: "json" | "pretty";
  backupDir?: string;
  backupEveryMs?: number;
  backupKeep: number;
  metrics: boolean;
  allowPrivateWebhookUrls: boolean;
  eventRetentionDays: number;
  /** Waits between event delivery attempts; unset = the production schedule (tests shorten it). */
  eventRetryScheduleMs?: number[];
  /** SQLite page cache of the server connection (MiB; 0 = SQLite's default). */
  sqliteCacheMb: number;
  sqliteTempStore: "memory" | "file";
  /** "background": the checkpoint thread; "inline": SQLite's automatic checkpoints in the commit. */
  checkpoint: "background" | "inline";
  /** --checkpoint-idle-ms: unset = CHECKPOINT_IDLE_MS (src/db/checkpointer.ts). */
  checkpointIdleMs?: number;
  /** "background": the group commit's fsync on a pool thread (answers wait for it); "inline": inside COMMIT. */
  commitSync: "background" | "inline";
  /** Per-stage sums of the webhook path in /metrics (read once at start). */
  stageTiming: boolean;
  /** --replicate: the replica address (checked at start); wins over the dashboard setting. */
  replicate?: string;
  /** With replication on, whose checkpoint rules apply (docs/api-decisions.md, "Continuous replication with Litestream"). */
  replicaCheckpoints: "litestream" | "own";
  /** --domain: names for a public certificate from an ACME CA (src/services/public-certificate.ts). */
  domains?: string[];
  acmeEmail?: string;
  acmeDirectory?: string;
  acmeCaFile?: string;
  /** --https-port as given (the port HTTPS takes when it starts while running; see withHttpsPorts). */
  httpsPort?: number;
  /** tlsCert/tlsKey are `textwire tls init`'s, filled in by serve: a kept public certificate wins over them. */
  tlsLocalCa?: boolean;
  /** Overrides of the captcha providers' siteverify URLs (unset: the provider's own). */
  captchaVerifyUrls: { turnstile?: string; hcaptcha?: string; recaptcha?: string };
}

export function parseDuration(text: string): number {
  const m = /^(\d+)\s*(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new ConfigError(`invalid duration "${text}" (use e.g. 30m, 24h, 7d)`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "ms"];
  const ms = Number(m[1]) * unit;
  if (ms < 1_000) throw new ConfigError(`duration "${text}" is too short`);
  return ms;
}

function durationFlag(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new ConfigError(`--${flag}: ${(err as Error).message}`);
  }
}

/**
 * `--trust-proxy`: off (absent, empty, false), this machine only (true, or the bare flag), or a
 * comma-separated list of addresses and CIDR ranges. A value that is none of these stops the
 * start: trusting the wrong hosts silently would let any client name its own address.
 */
export function parseTrustProxy(value: string | undefined): Pick<ServeConfig, "trustProxy" | "trustedProxies"> {
  const v = value?.trim() ?? "";
  const word = v.toLowerCase();
  if (v === "" || ["0", "false", "no", "off"].includes(word)) return { trustProxy: false };
  if (["1", "true", "yes", "on"].includes(word)) return { trustProxy: true, trustedProxies: [...LOOPBACK_PROXIES] };
  const entries = v.split(",").map((e) => e.trim());
  if (entries.some((e) => e === "")) throw new ConfigError(`--trust-proxy: an empty entry in "${v.slice(0, 200)}"; list addresses or ranges separated by commas, e.g. 10.0.0.1,fd00::/8`);
  try {
    IpRangeList.parse(entries);
  } catch (err) {
    throw new ConfigError(`--trust-proxy: ${(err as Error).message}; or true for this machine only, or false`);
  }
  return { trustProxy: true, trustedProxies: entries };
}

/**
 * The ports once HTTPS is on (--domain, `tls init`'s certificate, --tls-cert): docs/api-decisions.md,
 * "Online on its own". --port stays the plain-HTTP port it was before — it answers 308 to HTTPS,
 * serves /ca.crt and the ACME check — and HTTPS listens on --https-port (443 with --domain, else
 * 8443). The older form, --redirect-port given, keeps its meaning: HTTPS on --port (8443 when not
 * given), plain HTTP on --redirect-port. Returns the config as server.ts binds it: the app on
 * `port`, the forwarder on `redirectPort`.
 */
export function withHttpsPorts(config: ServeConfig, given: (flag: string) => boolean): ServeConfig {
  const https = Boolean(config.tlsCert || config.domains?.length);
  if (!https) return config;
  if (given("redirect-port")) return given("port") ? config : { ...config, port: DEFAULT_TLS_PORT };
  const domain = Boolean(config.domains?.length);
  const plainPort = given("port") ? config.port : domain ? DOMAIN_PLAIN_PORT : DEFAULT_PORT;
  const httpsPort = config.httpsPort ?? (domain ? DOMAIN_HTTPS_PORT : DEFAULT_TLS_PORT);
  if (httpsPort === plainPort && httpsPort !== 0) throw new ConfigError(`--https-port and --port are both ${httpsPort}: HTTPS and the plain-HTTP forwarder need a port each`);
  return { ...config, port: httpsPort, redirectPort: plainPort, httpsPort };
}

export function buildServeConfig(parsed: ParsedArgs, env: Env, isTTY: boolean): ServeConfig {
  const o = resolveOptions(parsed, OPTIONS, env);
  const logFormat = (o["log-format"] as string | undefined) ?? (isTTY ? "pretty" : "json");
  if (logFormat !== "json" && logFormat !== "pretty") throw new ConfigError(`--log-format: expected pretty or json, got "${logFormat}"`);
  const publicUrl = o["public-url"] as string | undefined;
  if (publicUrl !== undefined) {
    let u: URL;
    try {
      u = new URL(publicUrl);
    } catch {
      throw new ConfigError(`--public-url: not a URL: "${publicUrl}"`);
    }
    if (u.protocol !== "https:" && u.protocol !== "http:") throw new ConfigError("--public-url must be http(s)");
  }
  const tlsCert = o["tls-cert"] as string | undefined;
  const tlsKey = o["tls-key"] as string | undefined;
  if (Boolean(tlsCert) !== Boolean(tlsKey)) throw new ConfigError("--tls-cert and --tls-key go together");
  const domainText = (o.domain as string | undefined)?.trim() || undefined;
  let domains: string[] | undefined;
  if (domainText !== undefined) {
    const r = parseDomains(domainText);
    if (!r.ok) throw new ConfigError(`--domain: ${r.message}`);
    domains = r.domains;
    if (tlsCert) throw new ConfigError("--domain and --tls-cert both give the certificate: choose one");
  }
  const acmeDirectory = o["acme-directory"] as string | undefined;
  if (acmeDirectory !== undefined && !/^https?:\/\/\S+$/.test(acmeDirectory)) throw new ConfigError(`--acme-directory: not an http(s) URL: "${acmeDirectory}"`);
  if (o["redirect-port"] !== undefined && !tlsCert && !domains) throw new ConfigError("--redirect-port needs --tls-cert and --tls-key (or --domain)");
  const captchaVerifyUrls: ServeConfig["captchaVerifyUrls"] = {};
  for (const provider of ["turnstile", "hcaptcha", "recaptcha"] as const) {
    const v = o[`captcha-verify-url-${provider}`] as string | undefined;
    if (v === undefined) continue;
    let u: URL | undefined;
    try {
      u = new URL(v);
    } catch {}
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:")) throw new ConfigError(`--captcha-verify-url-${provider}: not an http(s) URL: "${v}"`);
    captchaVerifyUrls[provider] = v;
  }
  const backupEvery = o["backup-every"] as string | undefined;
  const sqliteTempStore = o["sqlite-temp-store"] as string;
  if (sqliteTempStore !== "memory" && sqliteTempStore !== "file") throw new ConfigError(`--sqlite-temp-store: expected memory or file, got "${sqliteTempStore}"`);
  const checkpoint = o.checkpoint as string;
  if (checkpoint !== "background" && checkpoint !== "inline") throw new ConfigError(`--checkpoint: expected background or inline, got "${checkpoint}"`);
  const commitSync = o["commit-sync"] as string;
  if (commitSync !== "background" && commitSync !== "inline") throw new ConfigError(`--commit-sync: expected background or inline, got "${commitSync}"`);
  if (backupEvery && !o["backup-dir"]) throw new ConfigError("--backup-every needs --backup-dir");
  const replicate = (o.replicate as string | undefined)?.trim() || undefined;
  if (replicate !== undefined) {
    try {
      parseReplicaUrl(replicate);
    } catch (err) {
      throw new ConfigError(`--replicate: ${(err as Error).message}`);
    }
  }
  const smtpUrl = (o["smtp-url"] as string | undefined)?.trim() || undefined;
  if (smtpUrl !== undefined) {
    let u: URL | null = null;
    try {
      u = new URL(smtpUrl);
    } catch {}
    // The URL holds a password: the error never repeats it.
    if (!u || (u.protocol !== "smtp:" && u.protocol !== "smtps:") || !u.hostname) throw new ConfigError("--smtp-url: expected smtp://host[:port] or smtps://host[:port], with user:password@ when the server asks for them");
  }
  const replicaCheckpoints = o["replica-checkpoints"] as string;
  if (replicaCheckpoints !== "litestream" && replicaCheckpoints !== "own") throw new ConfigError(`--replica-checkpoints: expected litestream or own, got "${replicaCheckpoints}"`);
  return {
    db: o.db as string,
    port: o.port as number,
    host: o.host as string,
    publicUrl: publicUrl?.replace(/\/+$/, ""),
    smtpUrl,
    smtpFrom: (o["smtp-from"] as string | undefined)?.trim() || undefined,
    teamNoticeGapMs: durationFlag("team-notice-gap", o["team-notice-gap"] as string),
    tlsCert,
    tlsKey,
    redirectPort: o["redirect-port"] as number | undefined,
    smsgateLocalPort: o["smsgate-local-port"] as number | undefined,
    ...parseTrustProxy(o["trust-proxy"] as string | undefined),
    webhookLimitPerMinute: o["webhook-limit-per-minute"] as number,
    sendRatePerMinute: o["send-rate-per-minute"] as number,
    maxLeaseAttempts: o["max-lease-attempts"] as number,
    deviceOfflineAfterMs: durationFlag("device-offline-after", o["device-offline-after"] as string),
    stuckAfterMs: durationFlag("stuck-after", o["stuck-after"] as string),
    deviceLimitPerMinute: o["device-limit-per-minute"] as number,
    authFailuresPerMinute: o["auth-failures-per-minute"] as number,
    logFormat,
    backupDir: o["backup-dir"] as string | undefined,
    backupEveryMs: backupEvery ? parseDuration(backupEvery) : undefined,
    backupKeep: o["backup-keep"] as number,
    metrics: o.metrics as boolean,
    allowPrivateWebhookUrls: o["allow-private-webhook-urls"] as boolean,
    eventRetentionDays: o["event-retention-days"] as number,
    sqliteCacheMb: o["sqlite-cache-mb"] as number,
    sqliteTempStore,
    checkpoint,
    checkpointIdleMs: o["checkpoint-idle-ms"] as number | undefined,
    commitSync,
    stageTiming: o["stage-timing"] as boolean,
    replicate,
    replicaCheckpoints,
    captchaVerifyUrls,
    domains,
    acmeEmail: (o["acme-email"] as string | undefined)?.trim() || undefined,
    acmeDirectory,
    acmeCaFile: o["acme-ca-file"] as string | undefined,
    httpsPort: o["https-port"] as number | undefined,
  };
}

/** A config for tests and embedding: defaults with overrides. */
export function defaultServeConfig(overrides: Partial<ServeConfig> = {}): ServeConfig {
  return { ...buildServeConfig({ positionals: [], flags: new Map() }, {}, false), ...overrides };
}
