#!/usr/bin/env bun
/**
 * Sending benchmark: the fleet simulator (scripts/fleet-sim.ts) for 1, 2 and 4 phones at the
 * default budgets, a broadcast plus ongoing form traffic, on a simulated clock. Reports per fleet:
 * texts per hour, Android limit errors (0 expected at the defaults), the estimate error at
 * submission (p50 / p90, as a share of the wait; and the share within 20 % or 60 s), failover time
 * after phone 1 goes silent (2 phones and up), and the share of replies kept on the contact's phone.
 *
 *   bun scripts/bench/sending.ts [broadcast=2000] [formsPerHour=4] [hours=400] [fleets=1,2,4]
 *
 * Each fleet runs twice: the broadcast with every phone up (rate, limit errors, estimates, replies
 * kept), then phone 1 going silent an hour in while holding a text (failover, sticky move).
 *
 * Figures: docs/development.md, "Benchmarks".
 */
import { cpus, release, totalmem } from "node:os";
import { runFleet } from "../fleet-sim";

const broadcast = Number(process.argv[2] ?? 2000);
const formsPerHour = Number(process.argv[3] ?? 4);
const hours = Number(process.argv[4] ?? 400);
const fleets = (process.argv[5] ?? "1,2,4").split(",").map(Number);
const cpu = cpus();
console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, bun ${Bun.version}`);
console.log(`broadcast ${broadcast}, ${formsPerHour} form texts an hour, at most ${hours} simulated hours`);
for (const phones of fleets) {
  // The broadcast with every phone up: rate, limit errors, estimates, replies kept.
  let t0 = performance.now();
  const r = await runFleet({ phones, sims: 1, broadcast, formsPerHour, failureRate: 0, offlineAtMinutes: null, hours });
  console.log(JSON.stringify({ run: "steady", ...r, wallSeconds: Math.round((performance.now() - t0) / 100) / 10 }));
  if (phones < 2) continue;
  // Phone 1 goes silent an hour in, holding a text: how long until its texts and contacts move.
  t0 = performance.now();
  const f = await runFleet({ phones, sims: 1, broadcast, formsPerHour, failureRate: 0, offlineAtMinutes: 60, hours, untilFailover: true });
  console.log(JSON.stringify({ run: "phone-1-silent", phones, failoverSeconds: f.failoverSeconds, stickyMoveSeconds: f.stickyMoveSeconds, limitErrors: f.limitErrors, wallSeconds: Math.round((performance.now() - t0) / 100) / 10 }));
}
