/**
 * Let's Encrypt's test CA, Pebble (Debian's `pebble` package: .ci/run installs it), started on
 * loopback ports for one test file. Its own HTTPS uses a certificate from Textwire's local CA (so
 * the test passes that CA with --acme-ca-file); it checks HTTP-01 for real by connecting to
 * `localhost:<httpPort>`, the server's plain port. `null` when Pebble is not installed.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { initLocalCa, tlsPathsFor } from "../../src/tls/local-ca";

export interface Pebble {
  directoryUrl: string;
  /** The CA file to trust for Pebble's own HTTPS (--acme-ca-file). */
  caFile: string;
  /** The root that signs the certificates Pebble issues (PEM). */
  issuingRoot(): Promise<string>;
  stop(): void;
}

export const PEBBLE_MISSING = "Pebble is not installed (apt-get install pebble; .ci/run does): the ACME tests are skipped";

export function pebbleInstalled(): boolean {
  return Boolean(Bun.which("pebble"));
}

/** A free TCP port on 127.0.0.1 (closed again; taken by whoever binds it next). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

export async function startPebble(dir: string, opts: { httpPort: number; validitySeconds?: number; alwaysValid?: boolean }): Promise<Pebble | null> {
  if (!pebbleInstalled()) return null;
  const tlsDir = join(dir, "pebble");
  mkdirSync(tlsDir, { recursive: true });
  const fakeDb = join(tlsDir, "x.db");
  initLocalCa(fakeDb, { ips: ["127.0.0.1"], names: ["localhost"] }, Date.now(), []);
  const p = tlsPathsFor(fakeDb);
  const listen = freePort();
  const management = freePort();
  const config = join(tlsDir, "pebble.json");
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${listen}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: p.serverCert,
        privateKey: p.serverKey,
        httpPort: opts.httpPort,
        tlsPort: freePort(),
        ocspResponderURL: "",
        externalAccountBindingRequired: false,
        ...(opts.validitySeconds ? { certificateValidityPeriod: opts.validitySeconds } : {}),
      },
    }),
  );
  const proc = Bun.spawn(["pebble", "-config", config], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0", ...(opts.alwaysValid ? { PEBBLE_VA_ALWAYS_VALID: "1" } : {}) },
    stdout: "ignore",
    stderr: "ignore",
  });
  const ca = await Bun.file(p.caCert).text();
  const directoryUrl = `https://127.0.0.1:${listen}/dir`;
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(directoryUrl, { tls: { ca } } as RequestInit);
      if (r.ok) break;
    } catch {}
    await Bun.sleep(50);
  }
  return {
    directoryUrl,
    caFile: p.caCert,
    async issuingRoot() {
      return (await fetch(`https://127.0.0.1:${management}/roots/0`, { tls: { ca } } as RequestInit)).text();
    },
    stop() {
      proc.kill();
    },
  };
}
