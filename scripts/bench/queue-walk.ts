#!/usr/bin/env bun
/**
 * The queue walk of a phone at its new-recipient limit: every due text is to a number the phone
 * has not texted, so each request walks the longest it may (512 texts) and hands out nothing.
 * Reports the time of one request (p50 / p90) on the real server, in-process, with a temporary
 * database (docs/api-decisions.md, "Sending engine: crash safety and the queue walk").
 *
 *   bun scripts/bench/queue-walk.ts [queued=1000] [requests=200]
 */
import { cpus, release, totalmem } from "node:os";
import { startTestServer, expectStatus } from "../../test/helpers/server";
import { insertMessage, iso } from "../../test/helpers/fixtures";
import { SmsGateEmulator } from "../../test/helpers/smsgate-emulator";
import { findDevice } from "../../src/db/stores/devices";

const queued = Number(process.argv[2] ?? 1000);
const requests = Number(process.argv[3] ?? 200);
const cpu = cpus();
console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, bun ${Bun.version}`);
const s = await startTestServer({ allowPrivateWebhookUrls: true }, { sendingLimits: "real" });
try {
  const p = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1`, behaviour: "hold" });
  await p.register((await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token);
  await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { newRecipientsPerDay: 1, spacingSeconds: { min: 0, max: 0 } } } }), 200);
  const d = s.running.deps;
  const due = iso(Date.now() - 1_000);
  insertMessage(d, s.accountId, { scheduledFor: due, createdAt: due, phone: "+14155559999" });
  const device = findDevice(d.sqlite, p.id)!;
  if (d.devices.leaseTo(device, 10).length !== 1) throw new Error("the first text (the phone's one new number) was not handed out");
  for (let i = 0; i < queued; i++) insertMessage(d, s.accountId, { scheduledFor: due, createdAt: due, phone: `+1415556${String(1000 + i)}`, content: `Hello there, your table is ready ${i}` });
  const times: number[] = [];
  for (let k = 0; k < requests; k++) {
    const t = performance.now();
    const got = d.devices.leaseTo(device, 10);
    times.push(performance.now() - t);
    if (got.length !== 0) throw new Error("a text to a new number was handed out past the limit");
  }
  times.sort((a, b) => a - b);
  const q = (f: number) => times[Math.min(times.length - 1, Math.floor(times.length * f))].toFixed(2);
  console.log(JSON.stringify({ queued, requests, p50ms: Number(q(0.5)), p90ms: Number(q(0.9)) }));
} finally {
  await s.stop();
}
