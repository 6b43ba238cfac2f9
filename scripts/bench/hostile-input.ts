#!/usr/bin/env bun
/**
 * How long the guards against hostile input take (the unit tests only check they are linear: a
 * test never asserts a speed, docs/api-decisions.md, "Nothing the phone reports is lost, and
 * nobody takes the dashboard: hardening round three"): the template renderer and its fallback
 * check on adversarial templates, the link detector on long lookalike text, the JSON depth scan
 * on a 1 MiB body, and a broadcast plan of 100,000 recipients across weeks of quiet hours. Each
 * case runs --rounds times (default 5); the first run (nothing cached yet), the median and the
 * slowest are printed, in ms.
 *
 *   bun scripts/bench/hostile-input.ts [--rounds 5]
 */
import { fallbackProblems, renderTemplate } from "../../src/domain/template";
import { containsLink } from "../../src/domain/protection";
import { jsonTooDeep } from "../../src/http/body";
import { planSending, type SendingPlanInput } from "../../src/domain/broadcast";
import { machineLine } from "./lib/proc";

const argv = process.argv.slice(2);
const ROUNDS = argv.includes("--rounds") ? Number(argv[argv.indexOf("--rounds") + 1]) : 5;
const enc = (s: string) => new TextEncoder().encode(s);

const template = "{{ ".repeat(50_000) + "{{a".repeat(50_000) + "{".repeat(100_000);
const fallback = "{{a|".repeat(20_000) + "x";
const lookalikes = ["a.".repeat(20_000), "a .".repeat(20_000), "1.".repeat(20_000), "ａ".repeat(40_000) + "。", "[.]".repeat(10_000), "a-".repeat(20_000) + ".x"];
const wide = enc("[" + Array(150_000).fill('"abcdef"').join(",") + "]");
// New York's nights, as the unit test plans them.
const NY_NIGHT = { hours: { start: "21:00", end: "08:00" }, timezone: "America/New_York" } as SendingPlanInput["quiet"];

const cases: Array<[string, () => void]> = [
  ["template, 200,000 adversarial characters", () => void renderTemplate(template, { a: "x" })],
  ["template fallbacks, 80,000 characters", () => {
    renderTemplate(fallback, {});
    fallbackProblems(fallback);
  }],
  ["link detector, 6 lookalike texts", () => lookalikes.forEach((t) => containsLink(t))],
  ["JSON depth scan, 1 MiB body", () => void jsonTooDeep(wide)],
  ["broadcast plan, 100,000 recipients", () => void planSending({ count: 100_000, start: Date.parse("2026-11-21T03:30:00.000Z"), pacePerMinute: 1, quiet: NY_NIGHT, phoneRatePerMinute: 50 })],
];

console.log(machineLine());
for (const [name, run] of cases) {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  const first = times[0]!;
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(44)} first ${first.toFixed(1).padStart(7)} ms   median ${times[Math.floor(times.length / 2)]!.toFixed(1).padStart(7)} ms   slowest ${times[times.length - 1]!.toFixed(1).padStart(7)} ms`);
}
