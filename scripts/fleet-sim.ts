#!/usr/bin/env bun
/**
 * A fleet of pretend phones on a simulated clock, in one process with the real server's services
 * (the same leasing, budgets, reports and failover the mobile API calls). Each phone behaves as
 * the SMSGate app does (docs/development.md, "Sending benchmark (phones' budgets)"):
 * - its event stream is open: it asks for work (GET /message) when the server says
 *   MessageEnqueued — at once for new work, or after the wait the server chose (its spacing, a
 *   budget's window) — and on its own every 15 minutes besides;
 * - it sends what it was handed from its own outbox, keeping the app settings the server gives
 *   it (GET /settings `messages`: `send_interval_min/max` between two texts, `limit_value` per
 *   `limit_period`), and reports each text when sent;
 * - models Android's per-app limit: more than 30 parts in any 60 s → the text fails with the app's
 *   own words, `Send result: RESULT_ERROR_LIMIT_EXCEEDED (…)`;
 * - fails at --failure-rate with `RESULT_ERROR_GENERIC_FAILURE`;
 * - phone 1 may go silent mid-run (--offline-at minutes): right after it is handed a text, it
 *   stops asking, sending and reporting, and its event stream drops.
 * The clock jumps from one event to the next (a hand-out, a send, a form, a sweep), so days of
 * sending take seconds.
 *
 *   bun scripts/fleet-sim.ts [--phones 2] [--sims 1] [--broadcast 2000] [--forms-per-hour 4]
 *       [--failure-rate 0] [--offline-at 60] [--hours 400]
 *
 * Prints a JSON summary (see runFleet). scripts/bench/sending.ts runs it for 1, 2 and 4 phones.
 * FLEET_DEBUG=1 also prints each text whose estimate missed, and hand-outs and estimates by hour.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../src/server";
import { defaultServeConfig, parseArgs } from "../src/config";
import type { DeviceRow } from "../src/db/stores/devices";
import { PRIORITY_RANK, type Priority } from "../src/queue/priority-queue";

export interface FleetOptions {
  phones: number;
  sims: number;
  broadcast: number;
  formsPerHour: number;
  failureRate: number;
  /** Minutes after the start when phone 1 goes silent (null: never; only with 2 phones or more). */
  offlineAtMinutes: number | null;
  /** Simulated hours at most. */
  hours: number;
  /** Deterministic randomness. */
  seed?: number;
  /** Stop once phone 1's texts and one of its contacts have moved (a failover run, not a whole broadcast). */
  untilFailover?: boolean;
}

export interface FleetResult {
  phones: number;
  simulatedHours: number;
  handedOut: number;
  /** Texts handed out an hour, over the time the broadcast took. */
  textsPerHour: number;
  /** Texts handed out in the first hour (before the day's new-recipient caps bite). */
  firstHour: number;
  broadcastHours: number | null;
  limitErrors: number;
  failures: number;
  estimateErrorP50: number;
  estimateErrorP90: number;
  /** Share of texts whose hand-out came within 20 % (or 60 s) of the estimate given at submission. */
  withinTarget: number;
  /** Seconds from phone 1 going silent until the texts it held were handed to another phone. */
  failoverSeconds: number | null;
  /** Seconds from phone 1 going silent until a text to one of its contacts left from another phone. */
  stickyMoveSeconds: number | null;
  repliesKeptOnPhone: number | null;
}

const ANDROID_PARTS_PER_MINUTE = 30;
const LIMIT_FAILURE = "Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)";
const GENERIC_FAILURE = "Send result: RESULT_ERROR_GENERIC_FAILURE (Generic failure cause)";
/** The app asks for work on its own this often besides the server's events (its periodic pull). */
const APP_PULL_EVERY_MS = 15 * 60_000;
/** The server writes a keepalive on the stream this often; each marks the phone present. */
const KEEPALIVE_MS = 15_000;
/** The server's sweeps (lease expiry, offline phones, pauses) run at least this often. */
const SWEEP_EVERY_MS = 1_000;
const PERIOD_MS: Record<string, number> = { PerMinute: 60_000, PerHour: 3_600_000, PerDay: 86_400_000 };

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))];
};

interface Outgoing {
  id: string;
  recipientPhone: string;
  content: string;
}

interface Phone {
  device: DeviceRow;
  silent: boolean;
  /** When it asks for work next (an event heard, or its own pull). */
  askAt: number;
  /** A delayed MessageEnqueued the server armed (one at a time, as DeviceEventHub.nudgeLater). */
  nudgeAt: number | null;
  pullAt: number;
  touchedAt: number;
  /** The app's own queue: handed, not yet sent. */
  outbox: Outgoing[];
  /** When the app may send its next text (its interval and its limit). */
  sendAt: number;
  /** Parts sent, for Android's per-app limit; texts sent, for the app's own limit. */
  partsSent: number[];
  textsSent: number[];
}

export async function runFleet(o: FleetOptions): Promise<FleetResult> {
  const random = rng(o.seed ?? 7);
  const dir = mkdtempSync(join(tmpdir(), "textwire-fleet-"));
  let now = Date.parse("2026-12-01T09:00:00Z");
  const start = now;
  const running = await startServer(defaultServeConfig({ port: 0, host: "127.0.0.1", db: join(dir, "fleet.db") }), { clock: () => now });
  try {
    const deps = running.deps;
    const { account } = deps.accounts.createAccount({ name: "Fleet" });
    const accountId = account.id;
    const phones: Phone[] = [];
    const byId = new Map<string, Phone>();
    for (let i = 0; i < o.phones; i++) {
      const { token } = deps.devices.createRegistrationToken(accountId, {});
      const sims = Array.from({ length: o.sims }, (_, s) => ({ slotIndex: s, simNumber: s + 1 }));
      const r = deps.devices.register(token, { name: `phone-${i + 1}`, simCards: sims }, "127.0.0.1");
      const p: Phone = { device: deps.devices.authenticate(r.token)!, silent: false, askAt: now, nudgeAt: null, pullAt: now + APP_PULL_EVERY_MS, touchedAt: now, outbox: [], sendAt: now, partsSent: [], textsSent: [] };
      phones.push(p);
      byId.set(p.device.id, p);
    }
    // The phones' event streams, on the simulated clock: what the server writes to a stream
    // becomes the phone asking (at once, or when a delayed MessageEnqueued falls due).
    const events = deps.devices.events;
    const live = () => phones.filter((p) => !p.silent);
    events.connectedDevices = () => new Set(live().map((p) => p.device.id));
    events.connected = (id: string) => !!byId.get(id) && !byId.get(id)!.silent;
    events.notify = (acc: string) => {
      if (acc === accountId) for (const p of live()) p.askAt = Math.min(p.askAt, now);
    };
    events.emit = (acc: string, event: string, _data: unknown, deviceId?: string) => {
      if (acc !== accountId) return 0;
      const to = live().filter((p) => deviceId === undefined || p.device.id === deviceId);
      if (event === "MessageEnqueued") for (const p of to) p.askAt = Math.min(p.askAt, now);
      return to.length;
    };
    events.nudgeLater = (_acc: string, deviceId: string, ms: number) => {
      const p = byId.get(deviceId);
      if (p && p.nudgeAt === null) p.nudgeAt = now + Math.max(5, ms);
    };

    const estimateOf = new Map<string, { at: number; submitted: number }>();
    const handedAt = new Map<string, { at: number; device: string }>();
    const broadcastIds = new Set<string>();
    let broadcastLeft = 0;
    let broadcastDoneAt: number | null = null;
    let n = 0;
    const estimate = (id: string) => {
      // The estimate a webhook answer gives at submission (services/sending-estimate.ts).
      const pos = deps.queue.position(id, now, 50)!;
      estimateOf.set(id, { at: pos.estimatedDelivery, submitted: now });
    };
    const queueText = (phone: string, content: string, priority: Priority, estimated = true) => {
      const id = crypto.randomUUID();
      const seq = deps.seq.next();
      const at = new Date(now).toISOString();
      deps.sqlite
        .query(
          `INSERT INTO messages (id, account_id, content, recipient_phone, status, priority, priority_rank, scheduled_for, seq, created_at, updated_at, metadata)
           VALUES (?1, ?2, ?3, ?4, 'queued', ?7, ?8, ?5, ?6, ?5, ?5, '{}')`,
        )
        .run(id, accountId, content, phone, at, seq, priority, PRIORITY_RANK[priority]);
      deps.queue.insert({ id, accountId, priority, scheduledFor: now, seq });
      if (estimated) estimate(id);
      deps.leases.notify(accountId);
      return id;
    };
    const numberOf = (k: number) => `+1415${String(2000000 + k).padStart(7, "0")}`;
    const long = "Our winter sale starts Friday: 20 % off everything in the shop, all weekend long. Reply STOP to opt out. ".repeat(2);
    // The broadcast is one request: its texts are queued together, then each has its estimate.
    for (let i = 0; i < o.broadcast; i++) broadcastIds.add(queueText(numberOf(n++), i % 10 === 0 ? long : "Winter sale Friday: 20 % off. Reply STOP to opt out.", "normal", false));
    for (const id of broadcastIds) estimate(id);
    broadcastLeft = broadcastIds.size;
    // Contacts who replied, and the phone they wrote to: the owner's answers should leave from it.
    const replied = new Map<string, string>();
    const followUps: Array<{ id: string; phone: string; to: string }> = [];
    let limitErrors = 0;
    let failures = 0;
    let silentAt: number | null = null;
    let heldAtSilence: string[] = [];
    let stickyMoveAt: number | null = null;
    const dying = o.phones >= 2 && o.offlineAtMinutes !== null ? phones[0] : null;
    const end = start + o.hours * 3_600_000;
    let nextForm = start + 60_000;
    let sweptAt = 0;
    // The owner answers a contact in the conversation: a high-priority text, sticky to their phone.
    const answer = (phone: string) => followUps.push({ id: queueText(phone, "Thanks for your message, see you Friday.", "high"), phone, to: replied.get(phone)! });

    const ask = async (p: Phone) => {
      p.askAt = Infinity;
      const leased = deps.devices.leaseTo(p.device, 100);
      if (!leased.length) return;
      for (const m of leased) if (!handedAt.has(m.id)) {
        handedAt.set(m.id, { at: now, device: p.device.id });
        if (broadcastIds.has(m.id) && --broadcastLeft === 0) broadcastDoneAt = now;
        if (silentAt !== null && stickyMoveAt === null && p !== dying && replied.get(m.recipientPhone) === dying?.device.id) stickyMoveAt = now;
      }
      // Holding a broadcast text (a new number, no phone of its own to wait for).
      if (p === dying && !p.silent && now - start >= o.offlineAtMinutes! * 60_000 && leased.some((m) => broadcastIds.has(m.id))) {
        // Handed a text, it goes silent: the texts stay leased to it until the server gives up on it.
        p.silent = true;
        silentAt = now;
        heldAtSilence = leased.map((m) => m.id);
        for (const m of leased) handedAt.delete(m.id);
        // Its contacts still write and are answered: their texts wait for it, then move.
        for (const [phone, dev] of replied) if (dev === p.device.id) { answer(phone); break; }
        return;
      }
      p.outbox.push(...leased.map((m) => ({ id: m.id, recipientPhone: m.recipientPhone, content: m.content })));
    };

    /** The app sends the head of its outbox, keeping its own interval and limit. */
    const sendOne = async (p: Phone) => {
      const s = deps.devices.settings(p.device).messages;
      const periodMs = PERIOD_MS[s.limit_period];
      if (periodMs) {
        p.textsSent = p.textsSent.filter((t) => t > now - periodMs);
        if (p.textsSent.length >= s.limit_value) {
          p.sendAt = p.textsSent[0] + periodMs;
          return;
        }
      }
      const m = p.outbox.shift()!;
      const parts = Math.max(1, Math.ceil(m.content.length / 153));
      p.partsSent = p.partsSent.filter((t) => t > now - 60_000);
      const error = p.partsSent.length + parts > ANDROID_PARTS_PER_MINUTE ? LIMIT_FAILURE : random() < o.failureRate ? GENERIC_FAILURE : null;
      if (error === LIMIT_FAILURE) limitErrors++;
      if (error) failures++;
      else for (let k = 0; k < parts; k++) p.partsSent.push(now);
      p.textsSent.push(now);
      p.sendAt = now + Math.round((s.send_interval_min + (s.send_interval_max - s.send_interval_min) * random()) * 1_000);
      const at = new Date(now).toISOString();
      const item = error ? { id: m.id, state: "Failed", recipients: [{ phoneNumber: m.recipientPhone, state: "Failed", error }], states: { Failed: at } } : { id: m.id, state: "Sent", recipients: [], states: { Sent: at } };
      await deps.devices.applyStates(p.device, [item]);
      // One in twenty answers: the reply arrives on this phone.
      if (!error && random() < 0.05 && !replied.has(m.recipientPhone)) {
        replied.set(m.recipientPhone, p.device.id);
        deps.devices.textReceived(p.device, m.recipientPhone, null);
      }
    };

    while (now < end) {
      if (now >= nextForm) {
        nextForm += Math.round((3_600_000 / Math.max(0.001, o.formsPerHour)) * (0.5 + random()));
        // A form submission: mostly new people; some are earlier contacts who replied (answered
        // in their conversation).
        const back = [...replied.keys()].filter((k) => byId.get(replied.get(k)!) !== undefined);
        if (back.length && random() < 0.3) answer(back[Math.floor(random() * back.length)]);
        else queueText(numberOf(n++), "Thanks, we got your booking request.", "normal");
      }
      for (const p of live()) {
        // Its stream's keepalive (and every request) marks it present; no extra step for it.
        if (now - p.touchedAt >= KEEPALIVE_MS || p.askAt <= now) {
          deps.devices.touch(p.device, "127.0.0.1");
          p.touchedAt = now;
        }
        if (p.nudgeAt !== null && p.nudgeAt <= now) {
          p.nudgeAt = null;
          p.askAt = Math.min(p.askAt, now);
        }
        if (p.pullAt <= now) {
          p.pullAt = now + APP_PULL_EVERY_MS;
          p.askAt = Math.min(p.askAt, now);
        }
        if (p.askAt <= now) await ask(p);
        if (!p.silent && p.outbox.length && p.sendAt <= now) await sendOne(p);
      }
      if (now - sweptAt >= SWEEP_EVERY_MS) {
        sweptAt = now;
        deps.devices.failures.sweep(now);
        deps.devices.sweepOffline(now);
        deps.leases.maybeSweep(now);
      }
      if (o.untilFailover && silentAt !== null && heldAtSilence.every((id) => handedAt.has(id)) && (stickyMoveAt !== null || now - silentAt > 3_600_000)) break;
      const followUpsDone = followUps.every((f) => handedAt.has(f.id));
      if (broadcastDoneAt !== null && followUpsDone && (silentAt === null ? !dying : heldAtSilence.every((id) => handedAt.has(id)))) break;
      // The next thing that happens: a phone asks or sends, a form; the sweeps'
      // second while a silent phone still holds texts.
      let next = nextForm;
      for (const p of live()) {
        next = Math.min(next, p.askAt, p.nudgeAt ?? Infinity, p.pullAt);
        if (p.outbox.length) next = Math.min(next, p.sendAt);
      }
      if (silentAt !== null && !heldAtSilence.every((id) => handedAt.has(id))) next = Math.min(next, now + SWEEP_EVERY_MS);
      if (dying && silentAt === null && start + o.offlineAtMinutes! * 60_000 > now) next = Math.min(next, start + o.offlineAtMinutes! * 60_000);
      now = Math.max(now + 1, next);
    }
    const errors: number[] = [];
    let within = 0;
    let counted = 0;
    for (const [id, e] of estimateOf) {
      const h = handedAt.get(id);
      if (!h || heldAtSilence.includes(id)) continue;
      counted++;
      const actual = h.at - e.submitted;
      const err = Math.abs(h.at - e.at);
      errors.push(actual > 0 ? err / actual : err > 0 ? 1 : 0);
      if (err <= Math.max(60_000, 0.2 * actual)) within++;
      else if (process.env.FLEET_DEBUG) console.error(`miss ${broadcastIds.has(id) ? "bc" : followUps.some((f) => f.id === id) ? "fu" : "form"} sub=${((e.submitted - start) / 60_000).toFixed(1)}m est=${((e.at - e.submitted) / 60_000).toFixed(1)}m act=${(actual / 60_000).toFixed(1)}m`);
    }
    if (process.env.FLEET_DEBUG) {
      const byHour = new Map<number, number>();
      for (const h of handedAt.values()) byHour.set(Math.floor((h.at - start) / 3_600_000), (byHour.get(Math.floor((h.at - start) / 3_600_000)) ?? 0) + 1);
      console.error("hand-outs by hour", JSON.stringify([...byHour].sort((a, b) => a[0] - b[0])));
      const est = new Map<number, number>();
      for (const e of estimateOf.values()) if (e.submitted === start) est.set(Math.floor((e.at - start) / 3_600_000), (est.get(Math.floor((e.at - start) / 3_600_000)) ?? 0) + 1);
      console.error("estimates by hour", JSON.stringify([...est].sort((a, b) => a[0] - b[0])));
    }
    // Replies kept: the owner's answers to contacts whose phone stayed up left from that phone.
    const up = followUps.filter((f) => handedAt.has(f.id) && !byId.get(f.to)?.silent);
    const kept = up.filter((f) => handedAt.get(f.id)!.device === f.to).length;
    const hours = (now - start) / 3_600_000;
    const bcHours = broadcastDoneAt === null ? null : (broadcastDoneAt - start) / 3_600_000;
    const handedFirstHour = [...handedAt.values()].filter((h) => h.at < start + 3_600_000).length;
    const failover = silentAt !== null && heldAtSilence.length && heldAtSilence.every((id) => handedAt.has(id)) ? Math.max(...heldAtSilence.map((id) => handedAt.get(id)!.at)) - silentAt : null;
    return {
      phones: o.phones,
      simulatedHours: Math.round(hours * 10) / 10,
      handedOut: handedAt.size,
      textsPerHour: Math.round([...handedAt.values()].filter((h) => broadcastDoneAt === null || h.at <= broadcastDoneAt).length / (bcHours ?? hours)),
      firstHour: handedFirstHour,
      broadcastHours: bcHours === null ? null : Math.round(bcHours * 10) / 10,
      limitErrors,
      failures,
      estimateErrorP50: Math.round(pct(errors, 50) * 1000) / 1000,
      estimateErrorP90: Math.round(pct(errors, 90) * 1000) / 1000,
      withinTarget: Math.round((within / Math.max(1, counted)) * 1000) / 1000,
      failoverSeconds: failover === null ? null : failover / 1000,
      stickyMoveSeconds: silentAt !== null && stickyMoveAt !== null ? (stickyMoveAt - silentAt) / 1000 : null,
      repliesKeptOnPhone: up.length ? Math.round((kept / up.length) * 1000) / 1000 : null,
    };
  } finally {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { flags } = parseArgs(process.argv.slice(2), new Set(["help"]));
  const num = (k: string, d: number) => (typeof flags.get(k) === "string" ? Number(flags.get(k)) : d);
  const r = await runFleet({
    phones: num("phones", 2),
    sims: num("sims", 1),
    broadcast: num("broadcast", 2000),
    formsPerHour: num("forms-per-hour", 4),
    failureRate: num("failure-rate", 0),
    offlineAtMinutes: typeof flags.get("offline-at") === "string" ? Number(flags.get("offline-at")) : 60,
    hours: num("hours", 400),
  });
  console.log(JSON.stringify(r));
}
