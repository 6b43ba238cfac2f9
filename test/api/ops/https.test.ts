import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { defaultServeConfig, type ServeConfig } from "../../../src/config";
import { startServer, type RunningServer } from "../../../src/server";
import type { Logger } from "../../../src/lib/log";
import { formBody, tempDir } from "../../helpers/server";

let dir: string;
let cert: string;
let key: string;

beforeAll(() => {
  dir = tempDir("textwire-tls-");
  cert = join(dir, "c.pem");
  key = join(dir, "k.pem");
  const p = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-days", "1", "-keyout", key, "-out", cert]);
  if (p.exitCode !== 0) throw new Error("openssl failed: " + p.stderr.toString());
});
const dbDirs: string[] = [];
afterAll(() => {
  for (const d of [dir, ...dbDirs]) rmSync(d, { recursive: true, force: true });
});

interface Started {
  running: RunningServer;
  adminKey: string;
  lines: Array<Record<string, unknown>>;
}

async function start(overrides: Partial<ServeConfig>): Promise<Started> {
  const lines: Array<Record<string, unknown>> = [];
  const logger: Logger = { info: (msg, f) => lines.push({ msg, ...f }), warn() {}, error() {} };
  let adminKey = "";
  const dbDir = tempDir("textwire-tls-db-");
  dbDirs.push(dbDir);
  const running = await startServer(defaultServeConfig({ port: 0, host: "127.0.0.1", db: join(dbDir, "t.db"), ...overrides }), {
    logger,
    onFirstKey: (k) => (adminKey = k.apiKey),
  });
  return { running, adminKey, lines };
}

const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

describe("own TLS (--tls-cert/--tls-key)", () => {
  let s: Started;
  beforeAll(async () => {
    s = await start({ tlsCert: cert, tlsKey: key, redirectPort: 0 });
  });
  afterAll(() => s.running.stop());

  test("the API speaks HTTPS and prints an https URL", async () => {
    expect(s.running.url).toBe(`https://127.0.0.1:${s.running.port}`);
    const res = await fetch(`https://127.0.0.1:${s.running.port}/health`, insecure);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("ok");
    const forms = await fetch(`https://127.0.0.1:${s.running.port}/v1/forms`, { ...insecure, headers: { Authorization: `Bearer ${s.adminKey}` } });
    expect(forms.status).toBe(200);
  });

  test("webhookUrl built from an HTTPS request is https", async () => {
    const res = await fetch(`https://127.0.0.1:${s.running.port}/v1/forms`, {
      ...insecure,
      method: "POST",
      headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" },
      body: JSON.stringify(formBody()),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as any).data.form.webhookUrl).toStartWith(`https://127.0.0.1:${s.running.port}/v1/forms/`);
  });

  test("plain HTTP on the TLS port is not served", async () => {
    let failed = false;
    try {
      const r = await fetch(`http://127.0.0.1:${s.running.port}/health`);
      failed = r.status >= 400;
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
  });

  test("the redirect listener answers every plain-HTTP request with 308 to the same path on HTTPS", async () => {
    const rp = s.running.redirectServer!.port;
    for (const [method, path] of [["GET", "/v1/forms?page=2&limit=5"], ["POST", "/v1/forms/abc/webhook"], ["GET", "/health"]]) {
      const res = await fetch(`http://127.0.0.1:${rp}${path}`, { method, redirect: "manual" });
      expect(res.status).toBe(308);
      expect(res.headers.get("location")).toBe(`https://127.0.0.1:${s.running.port}${path}`);
    }
    // Following it lands on the HTTPS API.
    const followed = await fetch(`http://127.0.0.1:${rp}/health`, insecure);
    expect(followed.status).toBe(200);
    expect(followed.url).toStartWith("https://");
  });
});

describe("--trust-proxy (behind Caddy/nginx)", () => {
  let s: Started;
  let base: string;
  beforeAll(async () => {
    s = await start({ trustProxy: true });
    base = `http://127.0.0.1:${s.running.port}`;
  });
  afterAll(() => s.running.stop());

  test("forwarded proto http → 308 to https on the forwarded host, same path and query", async () => {
    const res = await fetch(`${base}/v1/forms?page=1`, {
      redirect: "manual",
      headers: { "X-Forwarded-Proto": "http", "X-Forwarded-Host": "sms.example.com", Authorization: `Bearer ${s.adminKey}` },
    });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe("https://sms.example.com/v1/forms?page=1");
  });

  test("forwarded proto https and host build the public webhookUrl; the client IP is the proxy's last X-Forwarded-For entry", async () => {
    const res = await fetch(`${base}/v1/forms`, {
      method: "POST",
      headers: {
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "sms.example.com",
        "X-Forwarded-For": "6.6.6.6, 203.0.113.7",
        Authorization: `Bearer ${s.adminKey}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify(formBody()),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as any).data.form.webhookUrl).toStartWith("https://sms.example.com/v1/forms/");
    const line = s.lines.find((l) => l.msg === "request" && l.method === "POST" && l.status === 201);
    expect(line?.ip).toBe("203.0.113.7");
  });

  test("a direct request with no forwarded proto (a local health check) is answered, not redirected", async () => {
    const res = await fetch(`${base}/health`, { redirect: "manual" });
    expect(res.status).toBe(200);
  });
});

describe("without --trust-proxy the forwarded headers are ignored", () => {
  let s: Started;
  let base: string;
  beforeAll(async () => {
    s = await start({ trustProxy: false });
    base = `http://127.0.0.1:${s.running.port}`;
  });
  afterAll(() => s.running.stop());

  test("no redirect, no forwarded host or IP", async () => {
    const headers = { "X-Forwarded-Proto": "http", "X-Forwarded-Host": "evil.example", "X-Forwarded-For": "6.6.6.6", Authorization: `Bearer ${s.adminKey}` };
    const list = await fetch(`${base}/v1/forms`, { redirect: "manual", headers });
    expect(list.status).toBe(200);
    const res = await fetch(`${base}/v1/forms`, { method: "POST", headers: { ...headers, "X-Forwarded-Proto": "https", "Content-Type": "application/json" }, body: JSON.stringify(formBody()) });
    expect(res.status).toBe(201);
    expect(((await res.json()) as any).data.form.webhookUrl).toStartWith(`http://127.0.0.1:${s.running.port}/`);
    const line = s.lines.find((l) => l.msg === "request" && l.method === "POST");
    expect(line?.ip).toBe("127.0.0.1");
  });
});
