import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { tlsPathsFor } from "../../../src/tls/local-ca";
import { formBody, startTestServer, tempDir, type TestServer } from "../../helpers/server";
import { newAccount, operatorKey } from "../../helpers/accounts";

/**
 * HTTPS on (`textwire tls init`'s local CA, a real TLS server on free ports): the old plain-HTTP
 * address keeps working for what was published.
 */
let s: TestServer;
let ca: string;
let https: string;
let plain: string;
const tls = () => ({ tls: { ca } }) as RequestInit;

beforeAll(async () => {
  const dir = tempDir("textwire-https-forms-");
  const db = join(dir, "textwire.db");
  const quiet = { out() {}, err() {}, env: {}, isTTY: false, cwd: dir } as any;
  expect(await runCli(["tls", "init", "--db", db], quiet)).toBe(0);
  const p = tlsPathsFor(db);
  ca = readFileSync(p.caCert, "utf8");
  s = await startTestServer({ db, tlsCert: p.serverCert, tlsKey: p.serverKey, redirectPort: 0 }, { dir });
  https = `https://127.0.0.1:${s.running.port}`;
  plain = `http://127.0.0.1:${s.running.redirectServer!.port}`;
});
afterAll(() => s.stop());

const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  fetch(`${https}/v1${path}`, {
    ...tls(),
    ...init,
    headers: { Authorization: `Bearer ${s.adminKey}`, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}), ...(init.headers as Record<string, string>) },
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });

describe("HTTPS without breaking published forms", () => {
  test("a POST to the old HTTP address is answered 308 to HTTPS, and the repeated POST queues the text", async () => {
    const form = ((await (await api("/forms", { method: "POST", json: formBody() })).json()) as any).data.form;
    const oldAddress = `${plain}/v1/forms/${form.id}/webhook?src=site`;
    const first = await fetch(oldAddress, { method: "POST", redirect: "manual", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550101" }) });
    expect(first.status).toBe(308);
    expect(first.headers.get("location")).toBe(`${https}/v1/forms/${form.id}/webhook?src=site`);
    // A client following the 308 repeats the POST with its body.
    const followed = await fetch(oldAddress, { ...tls(), method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550102", firstName: "Ann" }) });
    expect(followed.status).toBe(200);
    expect(followed.url).toStartWith("https://");
    const id = ((await followed.json()) as any).data.messageId;
    const msg = ((await (await api(`/messages/${id}`)).json()) as any).data.message;
    expect(msg).toMatchObject({ status: "queued", webhookData: { phoneNumber: "+14155550102", firstName: "Ann" } });
  });

  test("/ca.crt is served over plain HTTP (a phone fetches it before it trusts HTTPS)", async () => {
    const r = await fetch(`${plain}/ca.crt`, { redirect: "manual" });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(ca);
  });

  test("forms posted over plain HTTP are listed for their own account only; a GET or another path is not counted", async () => {
    const posted = ((await (await api("/forms", { method: "POST", json: formBody({ name: "Quote request" }) })).json()) as any).data.form;
    const quiet = ((await (await api("/forms", { method: "POST", json: formBody({ name: "Newsletter" }) })).json()) as any).data.form;
    await fetch(`${plain}/v1/forms/${posted.id}/webhook`, { method: "POST", redirect: "manual", body: "phoneNumber=%2B14155550103", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    await fetch(`${plain}/v1/forms/${quiet.id}/webhook`, { method: "GET", redirect: "manual" });
    await fetch(`${plain}/v1/forms/${quiet.id}`, { method: "POST", redirect: "manual" });
    await fetch(`${plain}/v1/forms/no-such-form/webhook`, { method: "POST", redirect: "manual" });
    const list = ((await (await api("/forms-over-http")).json()) as any).data as Array<{ id: string; name: string; lastPlainHttpPostAt: string }>;
    expect(list.map((f) => f.name)).toContain("Quote request");
    expect(list.map((f) => f.id)).not.toContain(quiet.id);
    expect(Date.parse(list.find((f) => f.id === posted.id)!.lastPlainHttpPostAt)).toBeGreaterThan(Date.now() - 60_000);
    const other = newAccount(s, { name: "Other" });
    const theirs = await fetch(`${https}/v1/forms-over-http`, { ...tls(), headers: { Authorization: `Bearer ${other.apiKey}` } });
    expect(((await theirs.json()) as any).data).toEqual([]);
  });

  test("a post older than 30 days is no longer listed", async () => {
    const form = ((await (await api("/forms", { method: "POST", json: formBody({ name: "Old site" }) })).json()) as any).data.form;
    // arrange: a plain-HTTP post 31 days ago (a post is stamped with the server's clock, which this test does not fake)
    s.running.deps.sqlite.query("UPDATE forms SET plain_http_post_at = ? WHERE id = ?").run(new Date(Date.now() - 31 * 86_400_000).toISOString(), form.id);
    const list = ((await (await api("/forms-over-http")).json()) as any).data as Array<{ id: string }>;
    expect(list.map((f) => f.id)).not.toContain(form.id);
  });

  test("HTTPS status for operators: on, the local CA, its expiry and both ports", async () => {
    const r = ((await (await api("/admin/https")).json()) as any).data;
    expect(r).toMatchObject({ on: true, certificate: "local-ca", port: s.running.port, redirectPort: s.running.redirectServer!.port, behindProxy: false });
    expect(r.daysLeft).toBeGreaterThan(30);
    expect(Date.parse(r.certificateExpiresAt)).toBeGreaterThan(Date.now());
    const std = operatorKey(s, s.accountId, "admin_access").apiKey;
    expect((await fetch(`${https}/v1/admin/https`, { ...tls(), headers: { Authorization: `Bearer ${std}` } })).status).toBe(403);
  });
});

describe("behind a reverse proxy (--trust-proxy)", () => {
  test("a post the proxy marks as plain HTTP is answered 308 and its form is listed", async () => {
    const p = await startTestServer({ trustProxy: true });
    try {
      const form = (await (await p.api("/forms", { method: "POST", json: formBody({ name: "Via proxy" }) })).json() as any).data.form;
      const r = await fetch(`${p.base}/forms/${form.id}/webhook`, {
        method: "POST",
        redirect: "manual",
        headers: { "X-Forwarded-Proto": "http", "X-Forwarded-Host": "sms.example.com", "Content-Type": "application/json" },
        body: JSON.stringify({ phoneNumber: "+14155550109" }),
      });
      expect(r.status).toBe(308);
      expect(r.headers.get("location")).toBe(`https://sms.example.com/v1/forms/${form.id}/webhook`);
      const list = (await (await p.api("/forms-over-http")).json() as any).data as Array<{ id: string }>;
      expect(list.map((f) => f.id)).toEqual([form.id]);
    } finally {
      await p.stop();
    }
  });
});
