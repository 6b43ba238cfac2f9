/**
 * Where the server is reached (docs/architecture.md, "Wiring"): the public certificate, the
 * address forms and phones are given, HTTPS status and the plain-HTTP posts still coming in. Built
 * before the services that put the address in what they send (team notices, phones' settings).
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { publicCertificateFor } from "../services/public-certificate";
import { ServerAddressService } from "../services/server-address";
import { PlainHttpPosts } from "../services/plain-http-posts";
import { HttpsStatusService } from "../services/https-status";

export type Addresses = ReturnType<typeof buildAddresses>;

export function buildAddresses(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger) {
  const publicCertificate = publicCertificateFor(sqlite, clock, logger, config);
  return {
    publicCertificate,
    serverAddress: new ServerAddressService(sqlite, clock, config.publicUrl, () => publicCertificate.publicUrl()),
    plainHttpPosts: new PlainHttpPosts(sqlite, clock, logger),
    httpsStatus: new HttpsStatusService(config, clock),
  };
}
