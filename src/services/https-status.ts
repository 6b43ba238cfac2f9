/**
 * Whether the server speaks HTTPS, on which ports, and when its certificate expires (Settings →
 * Server, operator). Read from the running configuration: HTTPS is turned on where the server is
 * started (`textwire tls init`, or --tls-cert/--tls-key), not from the dashboard.
 */
import { existsSync, readFileSync } from "node:fs";
import type { ServeConfig } from "../config";
import { tlsExpiry, tlsPathsFor } from "../tls/local-ca";

export interface HttpsStatus {
  on: boolean;
  /** local-ca: `textwire tls init`'s certificate; certificate: one given with --tls-cert; null when off. */
  certificate: "local-ca" | "certificate" | "public" | null;
  certificateExpiresAt: string | null;
  daysLeft: number | null;
  /** The port plain HTTP is redirected from (the old address keeps working); null when none. */
  redirectPort: number | null;
  port: number | null;
  /** --trust-proxy: HTTPS may be done by a reverse proxy in front. */
  behindProxy: boolean;
}

export class HttpsStatusService {
  private pem: string | undefined;
  /** The ports actually bound (set by server.ts once listening). */
  listening: { port: number; redirectPort?: number; tls?: { cert: string } } | undefined;
  /** The public certificate's PEM when that is what HTTPS serves (set by server.ts). */
  publicCertPem: () => string | undefined = () => undefined;

  constructor(
    private readonly config: ServeConfig,
    private readonly clock: () => number,
  ) {
    try {
      this.pem = config.tlsCert && config.tlsKey ? readFileSync(config.tlsCert, "utf8") : undefined;
    } catch {}
  }

  get(): HttpsStatus {
    // What the listeners serve now (a public certificate may have arrived while running), else the configuration.
    const live = this.listening;
    const on = live ? Boolean(live.tls) : Boolean(this.config.tlsCert && this.config.tlsKey);
    const pub = on && live?.tls && live.tls.cert === this.publicCertPem();
    if (live?.tls) this.pem = live.tls.cert;
    let local = false;
    try {
      local = on && this.config.db !== ":memory:" && existsSync(tlsPathsFor(this.config.db).serverCert) && tlsPathsFor(this.config.db).serverCert === this.config.tlsCert;
    } catch {}
    let expiry: { certificateExpiresAt: string; daysLeft: number } | null = null;
    try {
      expiry = this.pem ? tlsExpiry(this.pem, this.clock()) : null;
    } catch {}
    return {
      on,
      certificate: on ? (pub ? "public" : local ? "local-ca" : "certificate") : null,
      certificateExpiresAt: expiry?.certificateExpiresAt ?? null,
      daysLeft: expiry?.daysLeft ?? null,
      port: this.listening?.port ?? (this.config.port || null),
      redirectPort: on ? (this.listening?.redirectPort ?? this.config.redirectPort ?? null) : null,
      behindProxy: this.config.trustProxy ?? false,
    };
  }
}
