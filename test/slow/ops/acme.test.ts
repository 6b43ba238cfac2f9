import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import tls from "node:tls";
import { defaultServeConfig } from "../../../src/config";
import { startServer, type RunningServer } from "../../../src/server";
import { runCli } from "../../../src/main";
import { ACME_ACCOUNT_KEY, ACME_CERTIFICATE_KEY } from "../../../src/services/public-certificate";
import { expectStatus, formBody, tempDir } from "../../helpers/server";
import { freePort, PEBBLE_MISSING, pebbleInstalled, startPebble, type Pebble } from "../../helpers/pebble";

/**
 * A public certificate from a real ACME CA (Pebble, Let's Encrypt's test server, on loopback): the
 * CA checks HTTP-01 on the server's plain port for real (no PEBBLE_VA_ALWAYS_VALID), the server
 * switches to HTTPS without a restart, forwards plain HTTP with 308, renews, keeps everything in
 * the database, and says in plain words what failed.
 */
const haveP = pebbleInstalled();
if (!haveP) console.warn(PEBBLE_MISSING);
const it = haveP ? test : test.skip;

const DAY = 86_400_000;
let dir: string;
let pebble: Pebble;
let plainPort: number;
let root: string;
let offset = 0;
const clock = () => Date.now() + offset;
let server: RunningServer | undefined;
let key = "";

async function until<T>(what: string, f: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** The certificate the HTTPS port presents to a client asking for `localhost`. */
function presented(port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const c = tls.connect({ host: "127.0.0.1", port, servername: "localhost", ca: root }, () => {
      resolve(new X509Certificate(c.getPeerX509Certificate()!.raw));
      c.end();
    });
    c.on("error", reject);
  });
}

async function start(db: string, overrides: Parameters<typeof defaultServeConfig>[0] = {}) {
  return startServer(
    defaultServeConfig({ db, host: "127.0.0.1", port: 0, redirectPort: plainPort, domains: ["localhost"], acmeDirectory: pebble.directoryUrl, acmeCaFile: pebble.caFile, ...overrides }),
    { clock, onFirstKey: (k) => (key = k.apiKey) },
  );
}

beforeAll(async () => {
  if (!haveP) return;
  dir = tempDir("textwire-acme-");
  plainPort = freePort();
  pebble = (await startPebble(dir, { httpPort: plainPort }))!;
  root = await pebble.issuingRoot();
});
afterAll(async () => {
  await server?.stop();
  pebble?.stop();
});

describe("serve --domain against a real ACME CA", () => {
  it("gets a certificate through HTTP-01 on the plain port, then serves HTTPS with it and forwards plain HTTP with 308 (a POST stays a POST)", async () => {
    const db = join(dir, "textwire.db");
    server = await start(db);
    const cert = server.deps.publicCertificate;
    await until("the certificate", () => cert.view().state === "valid");
    expect(server.url.startsWith("https://")).toBe(true);
    const peer = await presented(server.port);
    expect(peer.subjectAltName).toContain("DNS:localhost");
    expect(peer.issuer).toContain("Pebble");
    // The API answers over HTTPS, trusting only the CA's root.
    const https = `https://localhost:${server.port}`;
    const form = await expectStatus(
      await fetch(`${https}/v1/forms`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(formBody()), tls: { ca: root } } as RequestInit),
      201,
    );
    // The form's address follows the domain (as --public-url would).
    expect(form.data.form.webhookUrl).toBe(`https://localhost:${server.port}/v1/forms/${form.data.form.id}/webhook`);
    const r = await fetch(`http://localhost:${plainPort}/v1/forms/${form.data.form.id}/webhook?x=1`, { method: "POST", redirect: "manual", body: "{}" });
    expect(r.status).toBe(308);
    expect(r.headers.get("location")).toBe(`https://localhost:${server.port}/v1/forms/${form.data.form.id}/webhook?x=1`);
    const view = await expectStatus(await fetch(`${https}/v1/admin/certificate`, { headers: { Authorization: `Bearer ${key}` }, tls: { ca: root } } as RequestInit), 200);
    expect(view.data).toMatchObject({ source: "flag", domains: ["localhost"], state: "valid", lastError: null });
    // Renewal is due 30 days before expiry: the timer is set for then.
    expect(Math.abs(Date.parse(view.data.nextAttemptAt) - Math.min(Date.parse(view.data.certificate.notAfter) - 30 * DAY, Date.now() + 12 * 3_600_000))).toBeLessThan(60_000);
    const https2 = await expectStatus(await fetch(`${https}/v1/admin/https`, { headers: { Authorization: `Bearer ${key}` }, tls: { ca: root } } as RequestInit), 200);
    expect(https2.data).toMatchObject({ on: true, certificate: "public", port: server.port, redirectPort: plainPort });
  }, 90_000);

  it("renews 29 days before expiry without a restart: the same port presents the new certificate", async () => {
    const before = await presented(server!.port);
    const port = server!.port;
    offset = Date.parse(before.validTo) - 29 * DAY - Date.now();
    await server!.deps.publicCertificate.checkNow();
    offset = 0;
    expect(server!.deps.publicCertificate.view().lastError).toBeNull();
    expect(server!.port).toBe(port);
    const after = await presented(port);
    expect(after.serialNumber).not.toBe(before.serialNumber);
    offset = 0;
  }, 90_000);

  it("keeps the account key and the certificate in the database, so a backup carries them; a restart serves the kept certificate at once", async () => {
    const db = join(dir, "textwire.db");
    const out = join(dir, "copy.db");
    const io = { out() {}, err() {}, env: {}, isTTY: false };
    expect(await runCli(["backup", out, "--db", db], io)).toBe(0);
    const copy = new Database(out, { readonly: true });
    const rows = copy.query("SELECT key, value FROM server_settings WHERE key IN (?1, ?2)").all(ACME_ACCOUNT_KEY, ACME_CERTIFICATE_KEY) as Array<{ key: string; value: string }>;
    copy.close();
    expect(rows.map((r) => r.key).sort()).toEqual([ACME_ACCOUNT_KEY, ACME_CERTIFICATE_KEY].sort());
    const served = (await presented(server!.port)).serialNumber;
    await server!.stop();
    server = await start(db);
    // HTTPS from the first moment, with the same certificate: no new request to the CA.
    expect(server.url.startsWith("https://")).toBe(true);
    expect((await presented(server.port)).serialNumber).toBe(served);
    expect(server.deps.publicCertificate.view().lastAttemptAt).toBeNull();
  }, 90_000);
});

describe("renewal on the timer", () => {
  it("a certificate that falls due (here: 30 days and 3 seconds long) is renewed by the timer alone, on the same port", async () => {
    const d = tempDir("textwire-acme-timer-");
    const plain = freePort();
    const ca = await startPebble(d, { httpPort: plain, validitySeconds: 30 * 86_400 + 3 });
    const s = await startServer(
      defaultServeConfig({ db: join(d, "t.db"), host: "127.0.0.1", port: 0, redirectPort: plain, domains: ["localhost"], acmeDirectory: ca!.directoryUrl, acmeCaFile: ca!.caFile }),
      { onFirstKey: () => {} },
    );
    try {
      const cert = s.deps.publicCertificate;
      await until("the first certificate", () => cert.view().state === "valid");
      root = await ca!.issuingRoot();
      const first = (await presented(s.port)).serialNumber;
      const port = s.port;
      let renewed: string | undefined;
      const end = Date.now() + 20_000;
      while (Date.now() < end && !renewed) {
        const now = (await presented(port)).serialNumber;
        if (now !== first) renewed = now;
        else await Bun.sleep(250);
      }
      expect(renewed).toBeDefined();
      expect(s.port).toBe(port);
    } finally {
      await s.stop();
      ca!.stop();
    }
  }, 90_000);
});

describe("textwire serve --domain, as an owner starts it", () => {
  it("the flags (and their TEXTWIRE_* variables) put plain HTTP on --port and HTTPS on --https-port; the start line says what happens", async () => {
    const d = tempDir("textwire-acme-cli-");
    const plain = freePort();
    const https = freePort();
    const ca = await startPebble(d, { httpPort: plain });
    const root = join(import.meta.dir, "..", "..", "..");
    const proc = Bun.spawn([join(root, "node_modules/.bin/bun"), "src/main.ts", "serve", "--db", join(d, "t.db"), "--host", "127.0.0.1", "--domain", "localhost", "--port", String(plain), "--log-format", "json"], {
      cwd: root,
      env: { ...process.env, TEXTWIRE_HTTPS_PORT: String(https), TEXTWIRE_ACME_DIRECTORY: ca!.directoryUrl, TEXTWIRE_ACME_CA_FILE: ca!.caFile, TEXTWIRE_ACME_EMAIL: "owner@example.com" },
      stdout: "pipe",
      stderr: "ignore",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!out.includes("Textwire listening on")) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`serve exited: ${out}`);
        out += new TextDecoder().decode(value);
      }
      expect(out).toContain(`plain HTTP until the certificate for localhost arrives (HTTPS then on port ${https}`);
      const issuing = await ca!.issuingRoot();
      const end = Date.now() + 30_000;
      let health: Response | undefined;
      while (Date.now() < end) {
        try {
          health = await fetch(`https://localhost:${https}/health`, { tls: { ca: issuing } } as RequestInit);
          break;
        } catch {
          await Bun.sleep(100);
        }
      }
      expect(health?.status).toBe(200);
      const r = await fetch(`http://127.0.0.1:${plain}/health`, { redirect: "manual" });
      expect(r.status).toBe(308);
      expect(r.headers.get("location")).toBe(`https://127.0.0.1:${https}/health`);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    } finally {
      proc.kill();
      ca!.stop();
    }
  }, 90_000);
});

describe("failures in plain words, serving meanwhile", () => {
  it("when the CA cannot reach the plain port: says what to check, and serves plain HTTP meanwhile", async () => {
    const d = tempDir("textwire-acme-fail-");
    // A CA that checks a port nobody listens on.
    const elsewhere = await startPebble(d, { httpPort: freePort() });
    const s = await startServer(
      defaultServeConfig({ db: join(d, "t.db"), host: "127.0.0.1", port: 0, redirectPort: freePort(), domains: ["localhost"], acmeDirectory: elsewhere!.directoryUrl, acmeCaFile: elsewhere!.caFile }),
      { onFirstKey: () => {} },
    );
    try {
      await until("the failure", () => s.deps.publicCertificate.view().state === "failed", 60_000);
      const v = s.deps.publicCertificate.view();
      expect(v.lastError).toContain("could not reach this server at http://localhost/");
      expect(v.lastError).toContain("port 80");
      expect(v.nextAttemptAt).not.toBeNull();
      expect(s.url.startsWith("http://")).toBe(true);
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
    } finally {
      await s.stop();
      elsewhere!.stop();
    }
  }, 90_000);
});

describe("Settings → Get a certificate (operator), no --domain", () => {
  it("saves the names in the database, gets the certificate and starts HTTPS while running; plain HTTP then forwards", async () => {
    const d = tempDir("textwire-acme-setting-");
    const plain = freePort();
    const ca = await startPebble(d, { httpPort: plain });
    let k = "";
    const s = await startServer(defaultServeConfig({ db: join(d, "t.db"), host: "127.0.0.1", port: plain, httpsPort: 0, acmeDirectory: ca!.directoryUrl, acmeCaFile: ca!.caFile }), {
      onFirstKey: (x) => (k = x.apiKey),
    });
    const auth = { Authorization: `Bearer ${k}`, "Content-Type": "application/json" };
    try {
      const bad = await expectStatus(await fetch(`http://127.0.0.1:${plain}/v1/admin/certificate`, { method: "PUT", headers: auth, body: JSON.stringify({ domains: "192.168.1.20" }) }), 400);
      expect(bad.errors[0].field).toBe("domains");
      const put = await expectStatus(await fetch(`http://127.0.0.1:${plain}/v1/admin/certificate`, { method: "PUT", headers: auth, body: JSON.stringify({ domains: "localhost", email: "owner@example.com" }) }), 200);
      expect(put.data).toMatchObject({ source: "setting", domains: ["localhost"], email: "owner@example.com" });
      await until("the certificate", () => s.deps.publicCertificate.view().state === "valid", 30_000);
      const r = await fetch(`http://localhost:${plain}/v1/admin/certificate`, { redirect: "manual", headers: auth });
      expect(r.status).toBe(308);
      const httpsRoot = await ca!.issuingRoot();
      const v = await expectStatus(await fetch(r.headers.get("location")!, { headers: auth, tls: { ca: httpsRoot } } as RequestInit), 200);
      expect(v.data.state).toBe("valid");
      const addr = await expectStatus(await fetch(`https://localhost:${s.port}/v1/admin/server-address`, { headers: auth, tls: { ca: httpsRoot } } as RequestInit), 200);
      expect(addr.data.effective.url).toBe(`https://localhost:${s.port}`);
    } finally {
      await s.stop();
      ca!.stop();
    }
  }, 90_000);

  it("is refused while --domain is in force, and for an account without operator rights", async () => {
    const d = tempDir("textwire-acme-refused-");
    let k = "";
    const s = await startServer(defaultServeConfig({ db: join(d, "t.db"), host: "127.0.0.1", port: 0, redirectPort: 0, domains: ["sms.example.com"], acmeDirectory: "http://127.0.0.1:9/dir" }), {
      onFirstKey: (x) => (k = x.apiKey),
    });
    try {
      const r = await expectStatus(await fetch(`${s.url}/v1/admin/certificate`, { method: "PUT", headers: { Authorization: `Bearer ${k}`, "Content-Type": "application/json" }, body: JSON.stringify({ domains: "other.example.com" }) }), 409);
      expect(r.code).toBe("INVALID_STATE");
      const other = s.deps.accounts.createAccount({ name: "Shop" });
      await expectStatus(await fetch(`${s.url}/v1/admin/certificate`, { headers: { Authorization: `Bearer ${other.apiKey}` } }), 403);
    } finally {
      await s.stop();
    }
  }, 90_000);
});
