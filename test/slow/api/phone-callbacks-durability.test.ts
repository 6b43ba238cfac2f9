/**
 * The phone's signed webhooks across SIGKILLs (docs/api-decisions.md, "Nothing the phone reports
 * is lost, and nobody takes the dashboard: hardening round three"): an emulated SMSGate app sends
 * sms:received and sms:sent events, the server is killed at random moments, and the app sends
 * every event that got no answer again, to whichever server runs next. At the end every text the
 * phone received is stored once and every Sent report has taken effect once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir, UNBOUNDED_SENDING_LIMITS } from "../../helpers/server";
import { spawnServer } from "../../helpers/spawn-server";
import { APP_USER_AGENT, gsonDate, SmsGateEmulator } from "../../helpers/smsgate-emulator";

const dir = tempDir("textwire-callback-kill-");
const dbPath = join(dir, "textwire.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KILLS = 12;
const RECEIVED = 600;
const SENT_TARGET = 60;
const SENDERS = 12;

interface PendingEvent {
  id: string;
  event: "sms:received" | "sms:sent";
  payload: Record<string, unknown>;
}

describe("the phone's webhook events across kills", () => {
  test(`sms:received and sms:sent resent after ${KILLS} SIGKILLs: none lost, none applied twice`, async () => {
    let server = await spawnServer(dbPath, ["--device-limit-per-minute", "100000"]);
    const key = server.key!;
    const auth = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
    const api = (path: string, init: RequestInit = {}) => fetch(`${server.url}/v1${path}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });

    // Pacing is not what this test is about: the phone may take all its texts at once (docs/phones.md,
    // how fast a phone sends).
    expect((await api("/account/settings", { method: "PUT", body: JSON.stringify({ sending: { limits: UNBOUNDED_SENDING_LIMITS } }) })).status).toBe(200);
    // One phone, and texts for it to hold (leased to it before the kills start).
    const reg = await api("/devices/registration-tokens", { method: "POST", body: "{}" });
    expect(reg.status).toBe(201);
    const phone = new SmsGateEmulator({ base: `${server.url}/api/mobile/v1`, behaviour: "hold" });
    await phone.register(((await reg.json()) as any).data.token);
    await phone.loadSettings();
    const form = await api("/forms", { method: "POST", body: JSON.stringify({ name: "Kill test", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text", label: "First" }] }) });
    const formId = ((await form.json()) as any).data.form.id;
    for (let i = 0; i < SENT_TARGET; i++) {
      const r = await fetch(`${server.url}/v1/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1415555${String(2000 + i)}`, firstName: "K" }) });
      expect(r.status).toBe(200);
    }
    expect((await api("/forms")).status).toBe(200); // the read barrier: the messages exist now
    const leased: string[] = [];
    const deadline = Date.now() + 30_000;
    while (leased.length < SENT_TARGET && Date.now() < deadline) {
      const r = await fetch(`${server.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}`, "User-Agent": APP_USER_AGENT } });
      expect(r.status).toBe(200);
      const got = (await r.json()) as Array<{ id: string }>;
      leased.push(...got.map((m) => m.id));
      if (got.length === 0) await Bun.sleep(200);
    }
    expect(leased.length).toBe(SENT_TARGET);

    // Every event the app will send, in order; each stays pending until a server answers 200.
    const pending: PendingEvent[] = [];
    const now = Date.now();
    for (let i = 0; i < RECEIVED; i++) {
      pending.push({ id: `rcv-${i}`, event: "sms:received", payload: { messageId: `in-${i}`, message: `Thanks, see you at ${i}`, phoneNumber: `+1415555${String(3000 + (i % 50))}`, simNumber: 1, receivedAt: gsonDate(now + i) } });
      if (i % (RECEIVED / SENT_TARGET) === 0) {
        const m = leased[i / (RECEIVED / SENT_TARGET)];
        pending.push({ id: `snt-${m}`, event: "sms:sent", payload: { messageId: m, recipient: "+14155550000", simNumber: 1, partsCount: 1, sentAt: gsonDate(now + i) } });
      }
    }
    const total = pending.length;
    const answered = new Map<string, boolean>(); // event id → answered as a duplicate
    let statusErrors = 0;

    const send = async (url: string, e: PendingEvent): Promise<Response> => {
      const body = JSON.stringify({ id: e.id, webhookId: e.event, event: e.event, deviceId: phone.id, payload: e.payload });
      const ts = String(Math.floor(Date.now() / 1000));
      const sig = createHmac("sha256", phone.signingKey).update(body + ts).digest("hex");
      return fetch(`${url}/api/mobile/v1/webhooks/${phone.id}`, {
        method: "POST",
        headers: { "Content-Type": "application/json; charset=UTF-8", "User-Agent": APP_USER_AGENT, "X-Timestamp": ts, "X-Signature": sig },
        body,
      });
    };
    /** The app's webhook worker: takes the next unanswered event, sends it, keeps it on any failure. */
    // Each run between two kills may send only its share of the stream, at a pace, so a fast machine
    // does not answer everything before the kills: every kill lands mid-stream with events pending.
    let budget = Infinity;
    const sender = async (url: string, running: () => boolean) => {
      while (running() && pending.length > 0) {
        if (budget <= 0) {
          await Bun.sleep(20);
          continue;
        }
        budget--;
        const e = pending.shift()!;
        try {
          const res = await send(url, e);
          if (res.status === 200) {
            answered.set(e.id, ((await res.json()) as any).data.duplicate === true);
            if (budget !== Infinity) await Bun.sleep(Math.random() * 40);
            continue;
          }
          if (res.status < 500) statusErrors++;
          await res.body?.cancel();
        } catch {
          // The connection was cut by the kill.
        }
        pending.push(e);
        if (!running()) return;
        await Bun.sleep(20);
      }
    };

    let kills = 0;
    let duplicatesAnswered = 0;
    for (let k = 0; k < KILLS && pending.length > 0; k++) {
      if (k > 0) server = await spawnServer(dbPath, ["--device-limit-per-minute", "100000"]);
      let alive = true;
      budget = Math.ceil(total / (KILLS + 2));
      const senders = Array.from({ length: SENDERS }, () => sender(server.url, () => alive));
      // A random moment in the middle of the stream.
      await Bun.sleep(150 + Math.random() * 450);
      server.proc.kill(9);
      await server.proc.exited;
      alive = false;
      await Promise.all(senders);
      kills++;
    }
    // The last start: everything still unanswered is sent again until answered.
    server = await spawnServer(dbPath, ["--device-limit-per-minute", "100000"]);
    budget = Infinity;
    try {
      await Promise.all(Array.from({ length: SENDERS }, () => sender(server.url, () => true)));
      expect(pending).toHaveLength(0);
      expect(answered.size).toBe(total);
      expect(statusErrors).toBe(0);
      for (const dup of answered.values()) if (dup) duplicatesAnswered++;
      // The read barrier, then the file.
      expect((await api("/forms")).status).toBe(200);
      const db = new Database(dbPath, { readonly: true });
      try {
        const stored = db.query("SELECT external_id AS x, count(*) AS n FROM inbound_messages WHERE device_id = ?1 GROUP BY external_id").all(phone.id) as Array<{ x: string; n: number }>;
        const lost = Array.from({ length: RECEIVED }, (_, i) => `in-${i}`).filter((x) => !stored.some((s) => s.x === x));
        const twice = stored.filter((s) => s.n > 1);
        const sentRows = db.query(`SELECT id, status FROM messages WHERE id IN (${leased.map(() => "?").join(",")})`).all(...leased) as Array<{ id: string; status: string }>;
        const notSent = sentRows.filter((r) => r.status !== "sent");
        const counted = (db.query("SELECT coalesce(sum(sent), 0) AS n FROM device_daily_counts WHERE device_id = ?1").get(phone.id) as { n: number }).n;
        const contactCounts = db.query(`SELECT message_count AS n FROM contacts WHERE phone_number LIKE '+14155552%'`).all() as Array<{ n: number }>;
        console.log(`phone callbacks across kills: ${kills} kills, ${total} events, ${duplicatesAnswered} answered as repeats, ${lost.length} texts lost, ${twice.length} stored twice, ${notSent.length} Sent reports lost, ${counted} sends counted for ${SENT_TARGET}`);
        expect(kills).toBeGreaterThanOrEqual(10);
        expect(lost).toEqual([]);
        expect(twice).toEqual([]);
        expect(notSent).toEqual([]);
        expect(sentRows).toHaveLength(SENT_TARGET);
        expect(counted).toBe(SENT_TARGET);
        expect(contactCounts).toHaveLength(SENT_TARGET);
        for (const c of contactCounts) expect(c.n).toBe(1);
      } finally {
        db.close();
      }
    } finally {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
    }
  }, 240_000);
});
