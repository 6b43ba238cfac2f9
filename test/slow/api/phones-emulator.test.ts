/**
 * The SMSGate emulator (test/helpers/smsgate-emulator.ts, written from the app's protocol) against
 * a real `textwire serve` process over HTTPS with the certificate `textwire tls init` made, trusting only its CA.
 */
import { tlsPathsFor } from "../../../src/tls/local-ca";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir, UNBOUNDED_SENDING_LIMITS } from "../../helpers/server";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";

const ROOT = join(import.meta.dir, "../../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const OFFLINE_AFTER_MS = 2_000;

let dir: string;
let ca: string;
let proc: ReturnType<typeof Bun.spawn>;
let origin: string;
let adminKey: string;

beforeAll(async () => {
  dir = tempDir("textwire-phones-");
  // The owner's set-up: `textwire tls init` makes a local CA and a server certificate it signs;
  // the phone trusts only that CA.
  const init = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "tls", "init", "--db", join(dir, "t.db"), "--ip", "127.0.0.1"], { cwd: ROOT });
  if (init.exitCode !== 0) throw new Error("tls init failed: " + init.stderr.toString() + init.stdout.toString());
  ca = readFileSync(tlsPathsFor(join(dir, "t.db")).caCert, "utf8");
  // A headless install: the account and its admin key from the command line (serve itself prints
  // a setup link on an empty database, not a key).
  const create = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "accounts", "create", "--name", "Phone shop", "--json", "--db", join(dir, "t.db")], { cwd: ROOT });
  if (create.exitCode !== 0) throw new Error("accounts create failed: " + create.stderr.toString());
  adminKey = (JSON.parse(create.stdout.toString()) as { apiKey: string }).apiKey;
  proc = Bun.spawn(
    [BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", join(dir, "t.db"), "--log-format", "json",
      "--device-offline-after", `${OFFLINE_AFTER_MS / 1000}s`, "--send-rate-per-minute", "1000"],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, TEXTWIRE_PORT: "", TEXTWIRE_DB: "" } },
  );
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  const dec = new TextDecoder();
  while (!/Textwire listening on \S+/.test(out)) {
    const { done, value } = await reader.read();
    if (done) throw new Error("serve exited early: " + out);
    out += dec.decode(value);
  }
  origin = /Textwire listening on (https:\/\/[^\s"]+)/.exec(out)![1];
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
});

afterAll(async () => {
  proc?.kill("SIGTERM");
  await proc?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
  const res = await fetch(`${origin}/v1${path}`, {
    method: init.method ?? "GET",
    headers: { Authorization: `Bearer ${adminKey}`, "Content-Type": "application/json" },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    tls: { ca },
  } as RequestInit);
  const body = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
};

async function newPhone(behaviour: "deliver" | "hold", name: string) {
  const p = new SmsGateEmulator({ base: `${origin}/api/mobile/v1`, ca, behaviour, name, offsetMinutes: 60 });
  await p.register((await api("/devices/registration-tokens", { method: "POST", json: {} })).data.token);
  expect(await p.patchDevice()).toBe(204);
  await p.loadSettings();
  await p.connect();
  return p;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

const queue = (n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => api("/messages", { method: "POST", json: { phoneNumber: `+14155550${100 + i}`, content: `Hello ${i}` } })));

describe("an SMSGate phone over HTTPS", () => {
  test("a plain fetch without the CA is refused (the certificate is not publicly trusted)", async () => {
    await expect(fetch(`${origin}/health`)).rejects.toThrow();
  });

  test("register → PATCH device → SSE → MessageEnqueued → GET /message → Processed/Sent/Delivered → signed webhooks", async () => {
    const p = await newPhone("deliver", "Google/emulator-1");
    await until("the stream", () => p.events.length >= 0 && p.idle().then(() => true));
    const before = p.events.length;
    const t0 = performance.now();
    const { data } = await api("/messages", { method: "POST", json: { phoneNumber: "+14155550199", content: "Your table is ready" } });
    const ev = await until("MessageEnqueued", () => p.events.slice(before).find((e) => e.event === "MessageEnqueued"));
    // It came (the phone pulls on it); how fast is measured by scripts/bench/devices.ts, not asserted here.
    expect(ev.at).toBeGreaterThanOrEqual(t0);
    const m = await until("sent + delivered", async () => {
      const r = (await api(`/messages/${data.messageId}`)).data.message;
      return r.status === "sent" && r.metadata.deliveredAt ? r : undefined;
    });
    expect(p.taken).toContain(data.messageId);
    expect(Date.parse(m.sentAt)).toBeGreaterThan(Date.now() - 60_000);
    const ping = await p.webhook("system:ping", { health: { version: "1.68.0", releaseId: 1, status: "pass", checks: { "battery:level": { status: "pass", observedValue: 64, observedUnit: "percent", description: "" } } } });
    expect(ping.status).toBe(200);
    const received = await p.webhook("sms:received", { messageId: "in-1", sender: "+14155550199", recipient: null, simNumber: 1, message: "Thanks!", receivedAt: "2026-11-23T09:00:00.000+01:00" });
    expect(received.status).toBe(200);
    // The same text reported again under a new event id is stored once.
    await p.webhook("sms:received", { messageId: "in-1", sender: "+14155550199", recipient: null, simNumber: 1, message: "Thanks!", receivedAt: "2026-11-23T09:00:00.000+01:00" });
    const inbound = (await api("/inbound")).data;
    const mine = inbound.messages.filter((x: any) => x.body === "Thanks!");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ from: "+14155550199", deviceId: p.id });
    const bad = await p.webhook("system:ping", {}, { key: "not-the-key" });
    expect(bad.status).toBe(401);
    const dev = (await api("/devices")).data.devices.find((d: any) => d.id === p.id);
    expect(dev).toMatchObject({ name: "Google/emulator-1", kind: "smsgate", battery: 64, online: true, sentToday: 1 });
    p.disconnect();
  });

  test("two phones never share a leased message; MessageCancelled reaches the holder; a killed phone's leases go to the other within the offline window", async () => {
    // Not about pacing: the account's budget lets each phone take its share at once (docs/phones.md).
    await api("/account/settings", { method: "PUT", json: { sending: { limits: UNBOUNDED_SENDING_LIMITS } } });
    const a = await newPhone("hold", "phone-a");
    const b = await newPhone("hold", "phone-b");
    // Each phone may take at most 10 a minute, so both get some of the 20.
    for (const p of [a, b]) await api(`/devices/${p.id}`, { method: "PATCH", json: { sendRatePerMinute: 10 } });
    const ids = (await queue(20)).map((r) => r.data.messageId as string);
    await until("all 20 handed out", async () => {
      await Promise.all([a.pull(), b.pull()]);
      return a.taken.length + b.taken.length >= 20;
    });
    expect(a.taken.length).toBe(10);
    const sa = new Set(a.taken);
    expect(b.taken.filter((id) => sa.has(id))).toEqual([]);
    expect(new Set([...a.taken, ...b.taken])).toEqual(new Set(ids));
    // Cancel one of b's: b (and only b) hears about it.
    const victim = b.taken[0];
    await api(`/messages/${victim}/status`, { method: "PUT", json: { status: "cancelled" } });
    const cancelled = await until("MessageCancelled", () => b.events.find((e) => e.event === "MessageCancelled"));
    expect(JSON.parse(cancelled.data)).toEqual({ messageId: victim });
    expect(a.events.some((e) => e.event === "MessageCancelled")).toBe(false);
    // b may take more now (SettingsUpdated tells the app); then kill a: no stream, no requests.
    await api(`/devices/${b.id}`, { method: "PATCH", json: { sendRatePerMinute: 1000 } });
    await until("SettingsUpdated", () => b.events.find((e) => e.event === "SettingsUpdated"));
    // a's leases go to b once a has been silent for the window.
    const aHeld = [...a.taken];
    a.disconnect();
    const killedAt = Date.now();
    await until("a's messages reach b", () => aHeld.every((id) => b.taken.includes(id)), OFFLINE_AFTER_MS + 8_000);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(OFFLINE_AFTER_MS - 500);
    const list = (await api("/devices")).data.devices;
    expect(list.find((d: any) => d.id === a.id).online).toBe(false);
    expect(list.find((d: any) => d.id === b.id).online).toBe(true);
    const health = (await (await fetch(`${origin}/health`, { tls: { ca } } as RequestInit)).json()) as any;
    expect(health).toMatchObject({ status: "ok", queue: "ok" });
    expect(health.devicesOnline).toBeGreaterThanOrEqual(1);
    b.disconnect();
  }, 30_000);
});
