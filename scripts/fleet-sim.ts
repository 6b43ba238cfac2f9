#!/usr/bin/env bun
/**
 * A fleet of pretend phones on a simulated clock, in one process with the real server's services
 * (the same leasing, budgets, reports and failover the mobile API calls). Each phone:
 * - asks for work every second while online (as the SMSGate app does when told MessageEnqueued),
 *   from its M SIMs;
 * - models Android's per-app limit: more than 30 parts in any 60 s → the text fails with the app's
 *   own words, `Send result: RESULT_ERROR_LIMIT_EXCEEDED (…)`;
 * - fails at --failure-rate with `RESULT_ERROR_GENERIC_FAILURE`;
 * - may go silent mid-run (--offline-at minutes): it stops asking and reporting.
 *
 *   bun scripts/fleet-sim.ts [--phones 2] [--sims 1] [--broadcast 2000] [--forms-per-hour 30]
 *       [--failure-rate 0] [--offline-at 60] [--hours 200]
 *
 * Prints a JSON summary (see runFleet). scripts/bench/sending.ts runs it for 1, 2 and 4 phones.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../src/server";
import { defaultServeConfig, parseArgs } from "../src/config";
import type { DeviceRow } from "../src/db/stores/devices";

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
}

export interface FleetResult {
  phones: number;
  simulatedHours: number;
  handedOut: number;
  textsPerHour: number;
  limitErrors: number;
  failures: number;
  estimateErrorP50: number;
  estimateErrorP90: number;
  /** Share of texts whose hand-out came within 20 % (or 60 s) of the estimate given at submission. */
  withinTarget: number;
  failoverSeconds: number | null;
  repliesKeptOnPhone: number | null;
}

const ANDROID_PARTS_PER_MINUTE = 30;
const LIMIT_FAILURE = "Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)";
const GENERIC_FAILURE = "Send result: RESULT_ERROR_GENERIC_FAILURE (Generic failure cause)";

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))];
};

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
    const phones: Array<{ device: DeviceRow; sent: number[]; silent: boolean; nextPoll: number }> = [];
    for (let i = 0; i < o.phones; i++) {
      const { token } = deps.devices.createRegistrationToken(accountId, {});
      const sims = Array.from({ length: o.sims }, (_, s) => ({ slotIndex: s, simNumber: s + 1 }));
      const r = deps.devices.register(`Bearer ${token}`.slice(7), { name: `phone-${i + 1}`, simCards: sims }, "127.0.0.1");
      phones.push({ device: deps.devices.authenticate(r.token)!, sent: [], silent: false, nextPoll: now });
    }
    const estimateOf = new Map<string, { at: number; submitted: number }>();
    const handedAt = new Map<string, { at: number; device: string }>();
    let n = 0;
    const queueText = (phone: string, content: string) => {
      const id = crypto.randomUUID();
      const seq = deps.seq.next();
      const at = new Date(now).toISOString();
      deps.sqlite
        .query(
          `INSERT INTO messages (id, account_id, content, recipient_phone, status, priority, priority_rank, scheduled_for, seq, created_at, updated_at, metadata)
           VALUES (?1, ?2, ?3, ?4, 'queued', 'normal', 2, ?5, ?6, ?5, ?5, '{}')`,
        )
        .run(id, accountId, content, phone, at, seq);
      deps.queue.insert({ id, accountId, priority: "normal", scheduledFor: now, seq });
      const pos = deps.queue.position(id, now, 50)!;
      estimateOf.set(id, { at: pos.estimatedDelivery, submitted: now });
      deps.leases.notify(accountId);
      // MessageEnqueued: every phone asks now.
      for (const p of phones) p.nextPoll = now;
      return id;
    };
    const numberOf = (k: number) => `+1415${String(2000000 + k).padStart(7, "0")}`;
    for (let i = 0; i < o.broadcast; i++) queueText(numberOf(n++), i % 10 === 0 ? "Our winter sale starts Friday: 20 % off everything in the shop, all weekend long. Reply STOP to opt out. ".repeat(2) : "Winter sale Friday: 20 % off. Reply STOP to opt out.");
    // Contacts who replied: their next text should leave from the phone they wrote to.
    const replied = new Map<string, string>();
    const followUps: Array<{ id: string; phone: string }> = [];
    let limitErrors = 0;
    let failures = 0;
    let silentAt: number | null = null;
    let failoverAt: number | null = null;
    const silentPhone = o.phones >= 2 && o.offlineAtMinutes !== null ? phones[0] : null;
    const end = start + o.hours * 3_600_000;
    let nextForm = start + 60_000;
    while (now < end) {
      if (silentPhone && !silentPhone.silent && now - start >= o.offlineAtMinutes! * 60_000) {
        silentPhone.silent = true;
        silentAt = now;
      }
      if (now >= nextForm) {
        nextForm += Math.round((3_600_000 / Math.max(0.001, o.formsPerHour)) * (0.5 + random()));
        // A form submission: mostly new people; some are earlier contacts who replied.
        const back = [...replied.keys()];
        if (back.length && random() < 0.3) {
          const phone = back[Math.floor(random() * back.length)];
          followUps.push({ id: queueText(phone, "Thanks for your message, see you Friday."), phone });
        } else queueText(numberOf(n++), "Thanks, we got your booking request.");
      }
      let handed = 0;
      for (const p of phones) {
        if (p.silent) continue;
        deps.devices.touch(p.device, "127.0.0.1");
        if (p.nextPoll > now) continue;
        const leased = deps.devices.leaseTo(p.device, 100);
        // Nothing now: the app waits for the server's next MessageEnqueued, at the latest its 30 s ping.
        p.nextPoll = now + (leased.length ? 1_000 : 30_000);
        if (!leased.length) continue;
        handed += leased.length;
        const items: unknown[] = [];
        for (const m of leased) {
          if (!handedAt.has(m.id)) handedAt.set(m.id, { at: now, device: p.device.id });
          if (silentAt !== null && failoverAt === null && p !== silentPhone) failoverAt = now;
          const parts = Math.max(1, Math.ceil(m.content.length / 153));
          p.sent = p.sent.filter((t) => t > now - 60_000);
          const error = p.sent.length + parts > ANDROID_PARTS_PER_MINUTE ? LIMIT_FAILURE : random() < o.failureRate ? GENERIC_FAILURE : null;
          if (error === LIMIT_FAILURE) limitErrors++;
          if (error) failures++;
          else for (let k = 0; k < parts; k++) p.sent.push(now);
          const at = new Date(now).toISOString();
          items.push(error ? { id: m.id, state: "Failed", recipients: [{ phoneNumber: m.recipientPhone, state: "Failed", error }], states: { Failed: at } } : { id: m.id, state: "Sent", recipients: [], states: { Sent: at } });
          // One in twenty answers: the reply arrives on this phone.
          if (!error && random() < 0.05 && !replied.has(m.recipientPhone)) {
            replied.set(m.recipientPhone, p.device.id);
            deps.devices.textReceived(p.device, m.recipientPhone, null);
          }
        }
        await deps.devices.applyStates(p.device, items);
      }
      deps.devices.failures.sweep(now);
      deps.devices.sweepOffline(now);
      deps.leases.maybeSweep(now);
      const broadcastDone = [...estimateOf.keys()].every((id) => handedAt.has(id));
      if (broadcastDone && now - start > 3_600_000) break;
      // A second at a time while texts flow; while every phone waits, up to 10 s (the next form sooner).
      const wake = Math.min(nextForm, ...phones.filter((p) => !p.silent).map((p) => p.nextPoll));
      now += handed > 0 ? 1_000 : Math.max(1_000, Math.min(30_000, wake - now));
    }
    const errors: number[] = [];
    let within = 0;
    for (const [id, e] of estimateOf) {
      const h = handedAt.get(id);
      if (!h) continue;
      const actual = h.at - e.submitted;
      const err = Math.abs(h.at - e.at);
      errors.push(actual > 0 ? err / actual : err > 0 ? 1 : 0);
      if (err <= Math.max(60_000, 0.2 * actual)) within++;
    }
    const kept = followUps.filter((f) => handedAt.get(f.id)?.device === replied.get(f.phone) && !phones.find((p) => p.device.id === replied.get(f.phone))?.silent).length;
    const keptOf = followUps.filter((f) => handedAt.has(f.id) && !phones.find((p) => p.device.id === replied.get(f.phone))?.silent).length;
    const hours = (now - start) / 3_600_000;
    return {
      phones: o.phones,
      simulatedHours: Math.round(hours * 10) / 10,
      handedOut: handedAt.size,
      textsPerHour: Math.round(handedAt.size / hours),
      limitErrors,
      failures,
      estimateErrorP50: Math.round(pct(errors, 50) * 1000) / 1000,
      estimateErrorP90: Math.round(pct(errors, 90) * 1000) / 1000,
      withinTarget: Math.round((within / Math.max(1, handedAt.size)) * 1000) / 1000,
      failoverSeconds: silentAt !== null && failoverAt !== null ? (failoverAt - silentAt) / 1000 : null,
      repliesKeptOnPhone: keptOf ? Math.round((kept / keptOf) * 1000) / 1000 : null,
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
    formsPerHour: num("forms-per-hour", 30),
    failureRate: num("failure-rate", 0),
    offlineAtMinutes: typeof flags.get("offline-at") === "string" ? Number(flags.get("offline-at")) : 60,
    hours: num("hours", 200),
  });
  console.log(JSON.stringify(r));
}
