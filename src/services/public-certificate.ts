/**
 * The public certificate (docs/api-decisions.md, "Online on its own"): which names it is for
 * (--domain, else the operator's dashboard setting), getting it from the ACME CA, keeping it and the
 * account key in the database (server_settings: so every backup and replica carries them), and
 * renewing it RENEW_BEFORE_DAYS before expiry on a timer, without a restart. A failure is kept in
 * words an owner can act on; the server goes on serving its previous certificate, or plain HTTP,
 * and tries again later.
 *
 * The listeners are server.ts's: it reads `current()` at start and is told of each new certificate
 * through `onIssued`.
 */
import type { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { ConfigError, DOMAIN_HTTPS_PORT, DOMAIN_PLAIN_PORT, type ServeConfig } from "../config";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import type { Lifecycle } from "../lib/lifecycle";
import type { Logger } from "../lib/log";
import { deleteServerSetting, findServerSettingJson, upsertServerSetting } from "../db/server-settings";
import {
  certificateCurrent,
  certificateUsable,
  explainAcmeFailure,
  LETS_ENCRYPT_DIRECTORY,
  newAccountKey,
  obtainCertificate,
  parseDomains,
  RENEW_BEFORE_DAYS,
  type ChallengeTokens,
  type IssuedCertificate,
  type ObtainOptions,
} from "../tls/acme";

/** The dashboard's setting: JSON {domains, email}. --domain wins over it. */
export const ACME_SETTINGS_KEY = "acme.settings";
/** The ACME account key per CA directory: JSON {directoryUrl, keyPem}. */
export const ACME_ACCOUNT_KEY = "acme.account";
/** The certificate in use and its private key: JSON IssuedCertificate. */
export const ACME_CERTIFICATE_KEY = "acme.certificate";

/** How often the certificate's age is checked (renewal itself is due RENEW_BEFORE_DAYS before expiry). */
export const RENEW_CHECK_MS = 12 * 3_600_000;
/** Waits after a failed attempt: soon for a typo just fixed, then sparing the CA's rate limits (5 failures an hour at Let's Encrypt). */
export const RETRY_AFTER_MS = [5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000];

export interface PublicCertificateOptions {
  /** --domain: wins over the dashboard setting. */
  flagDomains?: string[];
  flagEmail?: string;
  directoryUrl?: string;
  /** --acme-ca-file's content: trust for the CA's own HTTPS (a test CA). */
  caPem?: string;
  /** Where HTTP-01 is answered and HTTPS listens (for the words shown; server.ts binds them). */
  plainPort: number;
  httpsPort: number;
  /** Tests: get the certificate by other means (default: acme-client against directoryUrl). */
  obtain?: (o: ObtainOptions) => Promise<IssuedCertificate>;
}

export interface PublicCertificateView {
  /** flag: --domain; setting: the dashboard's; null: no public certificate wanted. */
  source: "flag" | "setting" | null;
  domains: string[];
  email: string | null;
  state: "off" | "waiting" | "obtaining" | "valid" | "failed";
  certificate: { domains: string[]; notAfter: string; issuedAt: string; daysLeft: number } | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  plainPort: number;
  httpsPort: number;
  directoryUrl: string;
}

const DAY_MS = 86_400_000;

export class PublicCertificateService {
  /** HTTP-01 answers on offer, read by every plain-HTTP listener. */
  readonly tokens: ChallengeTokens = new Map();
  /** Set by server.ts: serve this certificate now (start HTTPS, or swap the one in use). */
  onIssued?: (c: IssuedCertificate) => void | Promise<void>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private failures = 0;
  private lastError: string | null = null;
  private lastAttemptAt: number | null = null;
  private nextAttemptAt: number | null = null;
  private stopped = true;
  readonly directoryUrl: string;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly o: PublicCertificateOptions,
  ) {
    this.directoryUrl = o.directoryUrl ?? LETS_ENCRYPT_DIRECTORY;
  }

  /** Rows read once (forms listings ask for the public address): cleared on each write here. */
  private cache = new Map<string, unknown>();

  private readJson<T>(key: string): T | null {
    if (!this.cache.has(key)) this.cache.set(key, findServerSettingJson(this.sqlite, key)?.value ?? null);
    // What was written under this key is a T (writeJson's callers); the cache holds it untyped.
    return (this.cache.get(key) ?? null) as T | null;
  }

  private writeJson(key: string, value: unknown): void {
    upsertServerSetting(this.sqlite, { key, value: JSON.stringify(value), updatedAt: iso(this.clock()) });
    this.cache.delete(key);
  }

  /** https://<first name>[:port] once its certificate is served: the address forms and phones are given (--public-url wins). */
  publicUrl(): string | undefined {
    const c = this.current();
    const port = this.servingPort;
    if (!c || port === undefined) return undefined;
    return `https://${c.domains[0]}${port === 443 ? "" : ":" + port}`;
  }

  /** Set by server.ts: the port where HTTPS serves the public certificate now (undefined: it does not). */
  servingPort: number | undefined;

  private setting(): { domains: string[]; email: string | null } | null {
    return this.readJson<{ domains: string[]; email: string | null }>(ACME_SETTINGS_KEY);
  }

  /** The names wanted (flag > setting), or null when none. */
  wanted(): { domains: string[]; email: string | null; source: "flag" | "setting" } | null {
    if (this.o.flagDomains?.length) return { domains: this.o.flagDomains, email: this.o.flagEmail ?? null, source: "flag" };
    const s = this.setting();
    return s?.domains.length ? { domains: s.domains, email: s.email ?? this.o.flagEmail ?? null, source: "setting" } : null;
  }

  /** The stored certificate that can be served now for the wanted names, if any. */
  current(): IssuedCertificate | null {
    const w = this.wanted();
    const c = this.readJson<IssuedCertificate>(ACME_CERTIFICATE_KEY);
    return w && certificateUsable(c, w.domains, this.clock()) ? c : null;
  }

  /** Called by server.ts once its listeners are bound: the CA's check must find the plain port open. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  lifecycle(): Lifecycle {
    return {
      name: "public-certificate",
      // An attempt under way is not waited for (a CA can take minutes): it writes nothing once stopped.
      stop: () => {
        this.stopped = true;
        clearTimeout(this.timer);
      },
    };
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (this.stopped || !this.wanted()) {
      this.nextAttemptAt = null;
      return;
    }
    this.nextAttemptAt = this.clock() + ms;
    this.timer = setTimeout(() => void this.checkNow(), Math.min(ms, 2 ** 31 - 1));
    this.timer.unref?.();
  }

  /**
   * Gets a certificate when none is current for the wanted names (missing, other names, or within
   * RENEW_BEFORE_DAYS of expiry); then schedules the next check. One attempt at a time.
   */
  checkNow(): Promise<void> {
    this.inFlight ??= this.attempt().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async attempt(): Promise<void> {
    const w = this.wanted();
    if (!w) return;
    const now = this.clock();
    const stored = this.readJson<IssuedCertificate>(ACME_CERTIFICATE_KEY);
    if (certificateCurrent(stored, w.domains, now)) {
      this.failures = 0;
      // Next look: when renewal falls due, or the regular check, whichever is sooner.
      this.schedule(Math.max(1_000, Math.min(RENEW_CHECK_MS, Date.parse(stored!.notAfter) - RENEW_BEFORE_DAYS * DAY_MS - now)));
      return;
    }
    this.lastAttemptAt = now;
    this.logger.info(stored ? "renewing the public certificate" : "getting a public certificate", { domains: w.domains, ca: this.directoryUrl });
    try {
      const issued = await (this.o.obtain ?? obtainCertificate)({
        domains: w.domains,
        email: w.email ?? undefined,
        directoryUrl: this.directoryUrl,
        caPem: this.o.caPem,
        ...(await this.account()),
        tokens: this.tokens,
        now,
      });
      if (this.stopped) return;
      const { accountUrl, ...kept } = issued;
      const account = this.readJson<{ directoryUrl: string; keyPem: string; accountUrl?: string }>(ACME_ACCOUNT_KEY);
      if (account && accountUrl && account.accountUrl !== accountUrl) this.writeJson(ACME_ACCOUNT_KEY, { ...account, accountUrl });
      this.writeJson(ACME_CERTIFICATE_KEY, kept);
      this.failures = 0;
      this.lastError = null;
      try {
        await this.onIssued?.(issued);
      } catch (err) {
        // Kept, and served from the next start; the owner learns why HTTPS did not start now.
        this.lastError = `The certificate for ${issued.domains.join(", ")} was obtained, but HTTPS could not start on port ${this.o.httpsPort}: ${(err as Error)?.message ?? err}. Free the port (or give this program permission to use it, as \`textwire service install\` does) and restart.`;
        this.logger.error(this.lastError, {});
        this.schedule(RENEW_CHECK_MS);
        return;
      }
      this.logger.info("public certificate in use", { domains: issued.domains, validUntil: issued.notAfter });
      this.schedule(Math.max(1_000, Math.min(RENEW_CHECK_MS, Date.parse(issued.notAfter) - RENEW_BEFORE_DAYS * DAY_MS - this.clock())));
    } catch (err) {
      this.lastError = explainAcmeFailure(err, w.domains, this.o.plainPort);
      const wait = RETRY_AFTER_MS[Math.min(this.failures, RETRY_AFTER_MS.length - 1)];
      this.failures++;
      this.logger.error(`${this.lastError}${this.current() ? " Meanwhile the previous certificate is served." : " Meanwhile the server answers on plain HTTP."}`, {
        domains: w.domains,
        retryInMinutes: Math.round(wait / 60_000),
        error: String((err as Error)?.message ?? err).slice(0, 500),
      });
      this.schedule(wait);
    }
  }

  /** The account key for this CA (and its URL once registered), made once and kept in the database. */
  private async account(): Promise<{ accountKeyPem: string; accountUrl?: string }> {
    const stored = this.readJson<{ directoryUrl: string; keyPem: string; accountUrl?: string }>(ACME_ACCOUNT_KEY);
    if (stored && stored.directoryUrl === this.directoryUrl) return { accountKeyPem: stored.keyPem, accountUrl: stored.accountUrl };
    const keyPem = await newAccountKey();
    if (this.stopped) throw new Error("stopped");
    this.writeJson(ACME_ACCOUNT_KEY, { directoryUrl: this.directoryUrl, keyPem });
    return { accountKeyPem: keyPem };
  }

  view(): PublicCertificateView {
    const w = this.wanted();
    const c = this.current();
    const now = this.clock();
    const state = !w ? "off" : this.inFlight ? "obtaining" : this.lastError ? "failed" : c ? "valid" : "waiting";
    return {
      source: w?.source ?? null,
      domains: w?.domains ?? [],
      email: w?.email ?? null,
      state,
      certificate: c ? { domains: c.domains, notAfter: c.notAfter, issuedAt: c.issuedAt, daysLeft: Math.floor((Date.parse(c.notAfter) - now) / DAY_MS) } : null,
      lastError: this.lastError,
      lastAttemptAt: this.lastAttemptAt === null ? null : iso(this.lastAttemptAt),
      nextAttemptAt: this.nextAttemptAt === null ? null : iso(this.nextAttemptAt),
      plainPort: this.o.plainPort,
      httpsPort: this.o.httpsPort,
      directoryUrl: this.directoryUrl,
    };
  }

  /**
   * The dashboard's "Get a certificate": saves the names (and e-mail) and starts at once; null
   * names turn it off (the certificate in use stays until the next restart). Refused while
   * --domain is in force.
   */
  set(input: { domains: string | null; email?: string | null }): PublicCertificateView {
    if (this.o.flagDomains?.length) {
      throw new AppError("INVALID_STATE", {
        message: "The server was started with --domain (or TEXTWIRE_DOMAIN), which wins over this setting: change it where the server is started.",
        details: { flag: "--domain" },
      });
    }
    const text = input.domains?.trim() ?? "";
    if (text === "") {
      deleteServerSetting(this.sqlite, ACME_SETTINGS_KEY);
      this.cache.delete(ACME_SETTINGS_KEY);
      this.lastError = null;
      this.schedule(0);
      return this.view();
    }
    const parsed = parseDomains(text);
    if (!parsed.ok) throw validationError([{ field: "domains", message: parsed.message, requirement: "host names, comma-separated", provided: text.slice(0, 300) }]);
    const email = input.email?.trim() || null;
    if (email !== null && (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))) {
      throw validationError([{ field: "email", message: "Give an e-mail address such as you@example.com (the certificate authority writes to it before a certificate expires), or leave it empty.", requirement: "e-mail address", provided: email.slice(0, 300) }]);
    }
    this.writeJson(ACME_SETTINGS_KEY, { domains: parsed.domains, email });
    this.lastError = null;
    this.failures = 0;
    this.schedule(0);
    return this.view();
  }
}

/** The service for a server's configuration: --domain and its ACME flags; HTTPS on --https-port (443) with a name. */
export function publicCertificateFor(sqlite: Database, clock: Clock, logger: Logger, config: ServeConfig): PublicCertificateService {
  let caPem: string | undefined;
  if (config.acmeCaFile) {
    try {
      caPem = readFileSync(config.acmeCaFile, "utf8");
    } catch (err) {
      throw new ConfigError(`--acme-ca-file: cannot read ${config.acmeCaFile}: ${(err as Error).message}`);
    }
  }
  const domainMode = Boolean(config.domains?.length);
  return new PublicCertificateService(sqlite, clock, logger, {
    flagDomains: config.domains,
    flagEmail: config.acmeEmail,
    directoryUrl: config.acmeDirectory,
    caPem,
    // With --domain, serve.ts put HTTPS on `port` and plain HTTP on `redirectPort` (withHttpsPorts);
    // from the dashboard, the server's plain port answers the CA and HTTPS starts on --https-port (443).
    plainPort: domainMode ? (config.redirectPort ?? DOMAIN_PLAIN_PORT) : config.tlsCert ? (config.redirectPort ?? config.port) : config.port,
    httpsPort: domainMode ? config.port : (config.httpsPort ?? DOMAIN_HTTPS_PORT),
  });
}
