import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import forge from "node-forge";
import { runCli } from "../../../src/main";
import type { Logger } from "../../../src/lib/log";
import { tlsPathsFor } from "../../../src/tls/local-ca";
import { startTestServer, tempDir } from "../../helpers/server";
import { cliIO } from "../../helpers/cli-io";

const ROOT = join(import.meta.dir, "../../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const DAY = 86_400_000;
const dirs: string[] = [];
const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDb(): string {
  const d = tempDir("textwire-ca-");
  dirs.push(d);
  return join(d, "textwire.db");
}

/** `textwire serve` as a child process on a free port; resolves with the port and the start line. */
async function spawnServe(db: string) {
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, TEXTWIRE_PORT: "", TEXTWIRE_DB: "", TEXTWIRE_TLS_CERT: "", TEXTWIRE_TLS_KEY: "" },
  });
  procs.push(proc);
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/Textwire listening on .*\n/.test(out)) {
    const { done, value } = await reader.read();
    if (done) throw new Error("serve exited early: " + out + (await new Response(proc.stderr).text()));
    out += new TextDecoder().decode(value);
  }
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  const line = /Textwire listening on .*/.exec(out)![0];
  return { proc, line, port: Number(/https?:\/\/[^:]+:(\d+)/.exec(line)![1]) };
}

const sansOf = (pem: string) => {
  const ext = forge.pki.certificateFromPem(pem).getExtension("subjectAltName") as { altNames: Array<{ type: number; value: string; ip?: string }> };
  return ext.altNames.map((a) => (a.type === 7 ? a.ip! : a.value));
};

describe("textwire tls init → serve over HTTPS trusting only the generated CA", () => {
  let db: string;
  let caPem: string;
  let server: Awaited<ReturnType<typeof spawnServe>>;

  beforeAll(async () => {
    db = freshDb();
    const r = cliIO();
    expect(await runCli(["tls", "init", "--ip", "192.168.1.50", "--ip", "10.9.8.7,192.168.1.51", "--name", "textwire.lan", "--db", db, "--json"], r.cli)).toBe(0);
    caPem = readFileSync(tlsPathsFor(db).caCert, "utf8");
    server = await spawnServe(db);
  }, 60_000);
  afterAll(async () => {
    server.proc.kill("SIGTERM");
    await server.proc.exited;
  });

  test("files in <db dir>/tls/: private keys 0600, server cert signed by the CA with serverAuth, the SANs and ≤ 825 days; CA 10 years", () => {
    const p = tlsPathsFor(db);
    expect(p.dir).toBe(join(db, "..", "tls"));
    expect(statSync(p.caKey).mode & 0o777).toBe(0o600);
    expect(statSync(p.serverKey).mode & 0o777).toBe(0o600);
    const serverPem = readFileSync(p.serverCert, "utf8");
    const srv = new X509Certificate(serverPem);
    const ca = new X509Certificate(caPem);
    expect(srv.verify(ca.publicKey)).toBe(true);
    expect(srv.checkIssued(ca)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(srv.ca).toBe(false);
    const f = forge.pki.certificateFromPem(serverPem);
    expect((f.getExtension("extKeyUsage") as any).serverAuth).toBe(true);
    const sans = sansOf(serverPem);
    for (const n of ["192.168.1.50", "10.9.8.7", "192.168.1.51", "textwire.lan", "localhost", "127.0.0.1"]) expect(sans).toContain(n);
    const days = (srv.validToDate.getTime() - srv.validFromDate.getTime()) / DAY;
    expect(days).toBeLessThanOrEqual(825);
    expect(days).toBeGreaterThan(800);
    expect((ca.validToDate.getTime() - Date.now()) / DAY).toBeGreaterThan(3_640);
  });

  test("serve uses them without --tls-cert and says so; a client trusting only that CA connects", async () => {
    expect(server.line).toStartWith(`Textwire listening on https://127.0.0.1:${server.port}`);
    expect(server.line).toContain("local CA");
    const res = await fetch(`https://127.0.0.1:${server.port}/health`, { tls: { ca: caPem } } as RequestInit);
    expect(res.status).toBe(200);
    const health = (await res.json()) as any;
    expect(health.tls.daysLeft).toBeGreaterThan(800);
    expect(new Date(health.tls.certificateExpiresAt).getTime()).toBe(new X509Certificate(readFileSync(tlsPathsFor(db).serverCert, "utf8")).validToDate.getTime());
    // By name too (localhost is in the certificate).
    expect((await fetch(`https://localhost:${server.port}/health`, { tls: { ca: caPem } } as RequestInit)).status).toBe(200);
  });

  test("a client trusting another CA is refused", async () => {
    const other = freshDb();
    expect(await runCli(["tls", "init", "--db", other], cliIO().cli)).toBe(0);
    const wrongCa = readFileSync(tlsPathsFor(other).caCert, "utf8");
    let failed = false;
    try {
      await fetch(`https://127.0.0.1:${server.port}/health`, { tls: { ca: wrongCa } } as RequestInit);
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
  });

  test("GET /ca.crt serves the CA certificate with no key", async () => {
    const res = await fetch(`https://127.0.0.1:${server.port}/ca.crt`, { tls: { ca: caPem } } as RequestInit);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-x509-ca-cert");
    expect(await res.text()).toBe(caPem);
  });

  test("tls init again refuses and keeps the CA; renew issues a new server cert from the same CA, keeping and adding SANs", async () => {
    const again = cliIO();
    expect(await runCli(["tls", "init", "--db", db], again.cli)).toBe(1);
    expect(again.err[0]).toContain("already exists");
    expect(readFileSync(tlsPathsFor(db).caCert, "utf8")).toBe(caPem);

    const before = readFileSync(tlsPathsFor(db).serverCert, "utf8");
    const r = cliIO();
    expect(await runCli(["tls", "renew", "--name", "shop.lan", "--db", db, "--json"], r.cli)).toBe(0);
    const after = readFileSync(tlsPathsFor(db).serverCert, "utf8");
    expect(after).not.toBe(before);
    expect(new X509Certificate(after).verify(new X509Certificate(caPem).publicKey)).toBe(true);
    const sans = sansOf(after);
    for (const n of ["192.168.1.50", "10.9.8.7", "textwire.lan", "shop.lan", "localhost", "127.0.0.1"]) expect(sans).toContain(n);
    expect(JSON.parse(r.out[0]).server.names).toContain("shop.lan");
    expect(statSync(tlsPathsFor(db).serverKey).mode & 0o777).toBe(0o600);
  });

  test("tls status shows expiry, human and --json", async () => {
    const j = cliIO();
    expect(await runCli(["tls", "status", "--json", "--db", db], j.cli)).toBe(0);
    const st = JSON.parse(j.out[0]);
    expect(st.server.daysLeft).toBeGreaterThan(800);
    expect(st.ca.daysLeft).toBeGreaterThan(3_640);
    expect(st.expiresSoon).toBe(false);
    const h = cliIO();
    expect(await runCli(["tls", "status", "--db", db], h.cli)).toBe(0);
    expect(h.out.join("\n")).toMatch(/server certificate\s+valid until \d{4}-\d\d-\d\d \(\d+ days left\)/);
  });
});

describe("tls errors and the no-CA cases", () => {
  test("bad --ip/--name are usage errors (exit 2) and create nothing; status and renew without a CA say to run init", async () => {
    const db = freshDb();
    for (const argv of [["--ip", "192.168.1.300"], ["--name", "bad name!"], ["--ip"]]) {
      const r = cliIO();
      expect(await runCli(["tls", "init", ...argv, "--db", db], r.cli)).toBe(2);
      expect(r.err.join("")).not.toBe("");
    }
    expect(existsSync(tlsPathsFor(db).dir)).toBe(false);
    for (const sub of ["status", "renew"]) {
      const r = cliIO();
      expect(await runCli(["tls", sub, "--db", db], r.cli)).toBe(1);
      expect(r.err.join("")).toContain("textwire tls init");
    }
  });

  test("GET /ca.crt without a local CA: 404 NOT_FOUND saying how to make one; no TLS field in /health", async () => {
    const s = await startTestServer();
    try {
      const res = await fetch(`${s.url}/ca.crt`);
      expect(res.status).toBe(404);
      const body = (await res.json()) as any;
      expect(body.code).toBe("NOT_FOUND");
      expect(body.message).toContain("textwire tls init");
      expect(((await (await fetch(`${s.url}/health`)).json()) as any).tls).toBeUndefined();
    } finally {
      await s.stop();
    }
  });

  test("a certificate within 30 days of expiry: a warning in the log, and /health shows the days left; the redirect listener serves /ca.crt", async () => {
    const db = freshDb();
    expect(await runCli(["tls", "init", "--db", db], cliIO().cli)).toBe(0);
    const p = tlsPathsFor(db);
    const warnings: Array<Record<string, unknown>> = [];
    const logger: Logger = { info() {}, error() {}, warn: (msg, f) => warnings.push({ msg, ...f }) };
    const later = Date.now() + 810 * DAY;
    const s = await startTestServer({ tlsCert: p.serverCert, tlsKey: p.serverKey, redirectPort: 0 }, { clock: () => later, logger, dir: join(db, "..") });
    try {
      expect(warnings.some((w) => String(w.msg).includes("expires soon") && typeof w.daysLeft === "number" && (w.daysLeft as number) < 30)).toBe(true);
      const ca = readFileSync(p.caCert, "utf8");
      const health = (await (await fetch(`https://127.0.0.1:${s.running.port}/health`, { tls: { ca } } as RequestInit)).json()) as any;
      expect(health.tls.daysLeft).toBeLessThan(30);
      expect(health.tls.daysLeft).toBeGreaterThanOrEqual(0);
      const plain = await fetch(`http://127.0.0.1:${s.running.redirectServer!.port}/ca.crt`);
      expect(plain.status).toBe(200);
      expect(await plain.text()).toBe(ca);
    } finally {
      await s.running.stop();
    }
  });
});
