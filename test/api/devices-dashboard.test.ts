/**
 * What the dashboard's Devices page and Overview read: the addresses a registration
 * token answer offers, /health's backup block, and the live feed told of phones' reports.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectStatus, startTestServer, tempDir, withServer, type TestServer } from "../helpers/server";
import { insertMessage } from "../helpers/fixtures";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";
import { backupTimeOf, newestBackupAt } from "../../src/services/last-backup";
import type { MessageChange } from "../../src/services/message-feed";

const token = async (s: TestServer, headers: Record<string, string> = {}) =>
  (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {}, headers }), 201)).data;

describe("POST /v1/devices/registration-tokens: mobileApiUrls", () => {
  test("with --public-url: that address only, ending in /api/mobile/v1", async () => {
    await withServer(
      async (s) => {
        const t = await token(s);
        expect(t.mobileApiUrls).toEqual(["https://sms.example.com/api/mobile/v1"]);
        expect(t.token).toStartWith("txwire_reg_");
      },
      { publicUrl: "https://sms.example.com" },
    );
  });

  test("without: the request's own address unless it is loopback, then the machine's with the request's port", async () => {
    await withServer(async (s) => {
      const port = new URL(s.url).port;
      const viaLoopback = (await token(s)).mobileApiUrls as string[];
      expect(viaLoopback.some((u) => u.includes("127.0.0.1"))).toBe(false);
      for (const u of viaLoopback) expect(u).toMatch(new RegExp(`^http://[^/]+:${port}/api/mobile/v1$`));
      // The browser reached the server by a LAN name: that comes first.
      const viaName = (await token(s, { Host: `shop-box.lan:${port}` })).mobileApiUrls as string[];
      expect(viaName[0]).toBe(`http://shop-box.lan:${port}/api/mobile/v1`);
      expect(viaName.slice(1)).toEqual(viaLoopback);
    });
  });
});

describe("/health: backup", () => {
  test("no backup block without --backup-dir", async () => {
    await withServer(async (s) => {
      const h = await expectStatus(await fetch(`${s.url}/health`), 200);
      expect(h.backup).toBeUndefined();
    });
  });

  test("with --backup-dir: the newest scheduled backup by its name (other files ignored), its age, and the interval", async () => {
    const dir = join(tempDir(), "backups");
    mkdirSync(dir);
    writeFileSync(join(dir, "textwire-20261120T030000Z.db"), "");
    writeFileSync(join(dir, "textwire-20261122T030000123Z.db"), "");
    writeFileSync(join(dir, "textwire-29991231T000000Z.db.partial"), "");
    writeFileSync(join(dir, "notes.txt"), "");
    const now = Date.parse("2026-11-22T05:00:00.123Z");
    const s = await startTestServer({ backupDir: dir, backupEveryMs: 6 * 3_600_000 }, { clock: () => now });
    try {
      const h = await expectStatus(await fetch(`${s.url}/health`), 200);
      expect(h.backup).toEqual({ lastBackupAt: "2026-11-22T03:00:00.123Z", ageSeconds: 7200, everySeconds: 21600 });
    } finally {
      await s.stop();
    }
  });

  test("an empty or missing folder: null until the first backup", async () => {
    const dir = join(tempDir(), "not-yet");
    await withServer(
      async (s) => {
        const h = await expectStatus(await fetch(`${s.url}/health`), 200);
        expect(h.backup).toEqual({ lastBackupAt: null, ageSeconds: null, everySeconds: 86400 });
      },
      { backupDir: dir },
    );
  });

  test("backup names: only textwire-<UTC stamp>.db counts", () => {
    expect(backupTimeOf("textwire-20261122T030000Z.db")).toBe(Date.parse("2026-11-22T03:00:00Z"));
    expect(backupTimeOf("textwire-20261122T030000007Z.db")).toBe(Date.parse("2026-11-22T03:00:00.007Z"));
    expect(backupTimeOf("pre-upgrade-2026-11-22.db")).toBeNull();
    expect(backupTimeOf("textwire-20261122T030000Z.db-wal")).toBeNull();
    expect(newestBackupAt(join(tempDir(), "absent"))).toBeNull();
  });
});

describe("the dashboard's live feed hears phones' reports (mobile API)", () => {
  let s: TestServer;
  let phone: SmsGateEmulator;
  const heard: MessageChange["source"][] = [];
  beforeAll(async () => {
    s = await startTestServer();
    phone = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1` });
    await phone.register((await token(s)).token);
    s.running.deps.messageFeed.subscribe(s.accountId, (c) => heard.push(c.source)); // arrange: a listener on the change announcements, as the live feed is
  });
  afterAll(() => s.stop());

  const patch = async (body: unknown) =>
    expectStatus(
      await fetch(`${s.url}/api/mobile/v1/message`, { method: "PATCH", headers: { Authorization: `Bearer ${phone.token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) }),
      204,
    );
  const take = async () => (await expectStatus(await fetch(`${s.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}` } }), 200)) as Array<{ id: string }>;
  const deviceEvents = () => heard.filter((x) => x === "device").length;

  test("Sent, Failed and Delivered reports each publish once the change is committed; Processed, repeats and unknown ids do not", async () => {
    const a = insertMessage(s.running.deps, s.accountId);
    const b = insertMessage(s.running.deps, s.accountId);
    expect((await take()).map((m) => m.id).sort()).toEqual([a, b].sort());
    await patch([{ id: a, state: "Processed", recipients: [], states: {} }]);
    expect(deviceEvents()).toBe(0);
    // The subscriber reads the message back inside the publish: it must already be sent.
    let seen: string | undefined;
    // arrange: a listener that reads the text inside the announcement, as the live feed's subscriber does
    const off = s.running.deps.messageFeed.subscribe(s.accountId, () => (seen ??= s.running.deps.messages.findRow(s.accountId, a)?.status));
    await patch([{ id: a, state: "Sent", recipients: [], states: { Sent: new Date().toISOString() } }]);
    off(); // arrange: the listener removed
    expect(seen).toBe("sent");
    expect(deviceEvents()).toBe(1);
    await patch([{ id: a, state: "Sent", recipients: [], states: {} }]); // a repeat changes nothing
    await patch([{ id: crypto.randomUUID(), state: "Sent", recipients: [], states: {} }]);
    expect(deviceEvents()).toBe(1);
    await patch([{ id: b, state: "Failed", recipients: [{ error: "RESULT_ERROR_NO_SERVICE" }], states: {} }]);
    expect(deviceEvents()).toBe(2);
    await patch([{ id: a, state: "Delivered", recipients: [], states: { Delivered: new Date().toISOString() } }]);
    expect(deviceEvents()).toBe(3);
  });

  test("signed webhooks: sms:received (a reply) publishes; system:ping does not", async () => {
    await phone.loadSettings();
    // The app is always handed https addresses; this test server speaks plain HTTP.
    phone.webhooks = phone.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") }));
    const before = deviceEvents();
    expect((await phone.webhook("system:ping", { health: { checks: { "battery:level": { observedValue: 80 } } } })).status).toBeLessThan(300);
    expect(deviceEvents()).toBe(before);
    expect((await phone.webhook("sms:received", { messageId: "m1", message: "Yes please", sender: "+14155552671", receivedAt: new Date().toISOString() })).status).toBeLessThan(300);
    expect(deviceEvents()).toBe(before + 1);
  });
});
