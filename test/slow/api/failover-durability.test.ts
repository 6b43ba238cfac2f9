/**
 * Failover across SIGKILLs (docs/api-decisions.md, "Sending engine: crash safety and the queue
 * walk"): two emulated SMSGate phones share the queue; phone A takes texts, then reports Android's
 * limit in the app's own words, so the server pauses it and moves its texts to phone B, and the
 * server is killed at a random moment of that failover, restarted, again and again. A text is never
 * held by both phones at once (a phone holds a text from the moment it is handed to it until it
 * reports it or is told MessageCancelled), and every text ends sent exactly once, except the ones
 * A itself reported failed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../helpers/server";
import { spawnServer } from "../../helpers/spawn-server";
import { APP_USER_AGENT, gsonDate, SmsGateEmulator } from "../../helpers/smsgate-emulator";

const dir = tempDir("textwire-failover-kill-");
const dbPath = join(dir, "textwire.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROUNDS = 6;
/** New texts each round (the form keeps being used), so A holds work at every failover. */
const PER_ROUND = 15;
const FLAGS = ["--device-limit-per-minute", "100000", "--send-rate-per-minute", "100000"];
const LIMIT_WORDS = "Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)";

type Name = "A" | "B";

/** What one emulated phone believes it holds, and what it did. */
interface Phone {
  name: Name;
  emu: SmsGateEmulator;
  held: Set<string>;
  /** Reports not yet answered 204: the app sends them again. */
  unreported: Array<{ id: string; state: "Sent" | "Failed" }>;
  sent: string[];
  failed: string[];
  cancels: number;
}

describe("failover across kills", () => {
  test(`Android's limit on phone A while the server is SIGKILLed ${ROUNDS} times: no text held by both phones, each sent once`, async () => {
    let server = await spawnServer(dbPath, FLAGS);
    const key = server.key!;
    const api = (path: string, init: RequestInit = {}) => fetch(`${server.url}/v1${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...(init.headers ?? {}) } });
    // Budgets out of the way (no spacing, no caps): this test is about who holds what.
    const settings = await api("/account/settings", { method: "PUT", body: JSON.stringify({ sending: { limits: { partsPerMinute: 10_000, partsPerHour: 100_000, partsPerDay: 1_000_000, newRecipientsPerDay: 100_000, newRecipientsPerMonth: 1_000_000, spacingSeconds: { min: 0, max: 0 } } } }) });
    expect(settings.status).toBe(200);
    const phones: Phone[] = [];
    for (const name of ["A", "B"] as Name[]) {
      const reg = await api("/devices/registration-tokens", { method: "POST", body: "{}" });
      expect(reg.status).toBe(201);
      const emu = new SmsGateEmulator({ base: `${server.url}/api/mobile/v1`, behaviour: "hold", name: `Phone ${name}` });
      await emu.register(((await reg.json()) as any).data.token);
      phones.push({ name, emu, held: new Set(), unreported: [], sent: [], failed: [], cancels: 0 });
    }
    const [A, B] = phones;
    const form = await api("/forms", { method: "POST", body: JSON.stringify({ name: "Failover", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text", label: "First" }] }) });
    const formId = ((await form.json()) as any).data.form.id;
    const ids: string[] = [];
    const submit = async () => {
      for (let i = 0; i < PER_ROUND; i++) {
        const r = await fetch(`${server.url}/v1/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1415555${String(5000 + ids.length)}`, firstName: "F" }) });
        expect(r.status).toBe(200);
        ids.push(((await r.json()) as any).data.messageId);
      }
    };

    const violations: string[] = [];
    const suspects: Array<{ id: string; to: Phone; from: Phone }> = [];
    let overlaps = 0;
    /** A text handed to one phone while the other held it is a violation unless the other was told to drop it. */
    const judge = () => {
      for (const { id, to, from } of suspects.splice(0)) {
        overlaps++;
        if (from.held.has(id)) violations.push(`${id} handed to ${to.name} while ${from.name} held it and was never told to drop it`);
      }
    };
    const other = (p: Phone) => (p === A ? B : A);
    const mobile = (p: Phone, path: string, init: RequestInit = {}) =>
      fetch(`${server.url}/api/mobile/v1${path}`, { ...init, headers: { Authorization: `Bearer ${p.emu.token}`, "User-Agent": APP_USER_AGENT, "Content-Type": "application/json", ...(init.headers ?? {}) } });
    /** GET /message: each text handed out must not be held by the other phone. */
    const take = async (p: Phone): Promise<string[]> => {
      const r = await mobile(p, "/message?order=fifo");
      if (r.status !== 200) throw new Error(`GET /message ${r.status}`);
      const got = ((await r.json()) as Array<{ id: string }>).map((m) => m.id);
      for (const id of got) {
        // The server tells the old holder before it hands the text on, but that word travels on
        // another connection: whether it arrived is checked when the round ends.
        if (other(p).held.has(id)) suspects.push({ id, to: p, from: other(p) });
        p.held.add(id);
      }
      return got;
    };
    /** PATCH /message for every report the phone still owes; kept on any failure. */
    const report = async (p: Phone) => {
      while (p.unreported.length > 0) {
        const { id, state } = p.unreported[0];
        const recipients = [{ phoneNumber: "+14155550000", state, error: state === "Failed" ? LIMIT_WORDS : null }];
        const r = await mobile(p, "/message", { method: "PATCH", body: JSON.stringify([{ id, state, recipients, states: { [state]: gsonDate(Date.now()) } }]) });
        await r.body?.cancel();
        if (r.status !== 204) throw new Error(`PATCH /message ${r.status}`);
        p.unreported.shift();
      }
    };
    /** The phone sends a text it holds: it is no longer held; the Sent report is owed. */
    const send = (p: Phone, id: string) => {
      if (!p.held.delete(id)) return;
      p.sent.push(id);
      p.unreported.push({ id, state: "Sent" });
    };
    /** The app's event stream (on this run's server): MessageCancelled makes the phone drop the text. */
    const listen = (p: Phone): { abort(): void } => {
      const stream = new SmsGateEmulator({ base: `${server.url}/api/mobile/v1`, pullOnEvents: false });
      stream.token = p.emu.token;
      stream.onEvent = (name, data) => {
        if (name === "MessageCancelled" && p.held.delete((JSON.parse(data) as { messageId: string }).messageId)) p.cancels++;
      };
      // Cut by the kill, or closed at the round's end.
      stream.connect().catch(() => {});
      return { abort: () => stream.disconnect() };
    };
    const connected = async (abort: Array<{ abort(): void }>) => {
      // Let the streams open before the failover starts (each is a request the server answers at once).
      await Bun.sleep(100);
      return abort;
    };

    let kills = 0;
    let failovers = 0;
    for (let k = 0; k < ROUNDS; k++) {
      if (k > 0) {
        // The minute of Android's limit is over (as if a minute had passed while the server was down).
        const db = new Database(dbPath);
        db.query("UPDATE send_pauses SET until = 0").run();
        db.close();
        server = await spawnServer(dbPath, FLAGS);
      }
      const streams = await connected([listen(A), listen(B)]);
      await submit();
      let alive = true;
      let aTook!: () => void;
      const aHasTaken = new Promise<void>((r) => (aTook = r));
      const phoneB = (async () => {
        // Phone B: once A has its work, takes what is left or moved and sends it straight away.
        await aHasTaken;
        while (alive) {
          try {
            await report(B);
            for (const id of await take(B)) send(B, id);
            await report(B);
          } catch {
            // The server is gone.
          }
          await Bun.sleep(15);
        }
      })();
      const phoneA = (async () => {
        try {
          // What A still holds and was not told to drop, it sends (a phone that was never told).
          for (const id of [...A.held]) send(A, id);
          await report(A);
          const got = await take(A);
          aTook();
          if (got.length === 0) return;
          // Android refuses the first: A reports it in the app's words and holds the rest.
          A.held.delete(got[0]);
          A.failed.push(got[0]);
          A.unreported.push({ id: got[0], state: "Failed" });
          failovers++;
          await report(A);
        } catch {
          // The server is gone.
        }
        aTook();
      })();
      // A random moment of the failover: before, during or after A's report and B's takes.
      await Bun.sleep(Math.random() * 400);
      server.proc.kill(9);
      await server.proc.exited;
      alive = false;
      kills++;
      await Promise.all([phoneA, phoneB]);
      await Bun.sleep(200);
      judge();
      for (const s of streams) s.abort();
    }

    // The last start: both phones run until no text is left.
    const db0 = new Database(dbPath);
    db0.query("UPDATE send_pauses SET until = 0").run();
    db0.close();
    server = await spawnServer(dbPath, FLAGS);
    try {
      const streams = [listen(A), listen(B)];
      await Bun.sleep(100);
      for (const id of [...A.held]) send(A, id);
      await report(A);
      const deadline = Date.now() + 60_000;
      // Read from the file (the API key's rate limit is not this test's subject); every text was
      // acknowledged rounds ago, so the file already has them.
      const open = async () => {
        const db = new Database(dbPath, { readonly: true });
        try {
          return (db.query("SELECT count(*) AS n FROM messages WHERE status = 'queued'").get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      // Both phones work now (A's minute is over): a new contact goes to the phone with the most
      // budget left, so B alone would leave A's share waiting for A.
      while (Date.now() < deadline) {
        for (const p of [A, B]) {
          await report(p);
          for (const id of await take(p)) send(p, id);
          await report(p);
        }
        if ((await open()) === 0 && A.held.size === 0 && B.held.size === 0) break;
        await Bun.sleep(100);
      }
      await Bun.sleep(200);
      judge();
      for (const s of streams) s.abort();
      expect((await api("/forms")).status).toBe(200); // the read barrier

      const db = new Database(dbPath, { readonly: true });
      try {
        const rows = db.query(`SELECT id, status FROM messages WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as Array<{ id: string; status: string }>;
        const sentBy = new Map<string, number>();
        for (const id of [...A.sent, ...B.sent]) sentBy.set(id, (sentBy.get(id) ?? 0) + 1);
        const twice = [...sentBy].filter(([, n]) => n > 1).map(([id]) => id);
        const failedByA = new Set(A.failed);
        const notSent = rows.filter((r) => !failedByA.has(r.id) && (r.status !== "sent" || sentBy.get(r.id) !== 1));
        const failedWrong = rows.filter((r) => failedByA.has(r.id) && (r.status !== "failed" || sentBy.has(r.id)));
        for (const r of notSent) console.log(JSON.stringify({ ...(db.query("SELECT id, status, lease_device_id, lease_expires_at, lease_expiries, retry_count, failure_reason, metadata, updated_at FROM messages WHERE id = ?").get(r.id) as object), a: A.sent.includes(r.id), b: B.sent.includes(r.id), aHeld: A.held.has(r.id), bHeld: B.held.has(r.id), now: new Date().toISOString() }));
        console.log(`failover across kills: ${kills} kills, ${failovers} failovers reported, ${A.cancels} texts A was told to drop, ${A.sent.length} sent by A, ${B.sent.length} sent by B, ${A.failed.length} refused by Android on A, ${overlaps} handed on before the old holder's MessageCancelled was read, ${violations.length} handed to both, ${twice.length} sent twice`);
        expect(kills).toBeGreaterThanOrEqual(5);
        expect(failovers).toBeGreaterThanOrEqual(3);
        expect(violations).toEqual([]);
        expect(twice).toEqual([]);
        expect(rows).toHaveLength(ids.length);
        expect(notSent).toEqual([]);
        expect(failedWrong).toEqual([]);
      } finally {
        db.close();
      }
    } finally {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
    }
  }, 300_000);
});
