import { describe, expect, test } from "bun:test";
import { MemoryTrim, TRIM_ABOVE_BYTES, TRIM_GAP_PER_PAUSE, TRIM_GROWTH_BYTES, TRIM_MIN_GAP_MS, startMemoryTrim } from "../../../src/lib/memory-trim";

const MiB = 1024 * 1024;

/** A trim fed readings by hand: `at(rss, ms)` is one check. */
function fake() {
  let rss = 0;
  let now = 0;
  const trim = new MemoryTrim({ rss: () => rss, now: () => now, collect: () => {} });
  return {
    trim,
    at: (bytes: number, ms: number) => {
      rss = bytes;
      now = ms;
      return trim.tick();
    },
  };
}

describe("memory trim: when a full collection runs", () => {
  test("below the ceiling, however fast it grows: never", () => {
    const f = fake();
    let t = 0;
    for (let rss = 60 * MiB; rss < TRIM_ABOVE_BYTES; rss += 4 * MiB) expect(f.at(rss, (t += 5_000))).toBe(false);
    expect(f.trim.collections).toBe(0);
  });

  test("crossing the ceiling while growing: one, then none until the gap has passed", () => {
    const f = fake();
    expect(f.at(100 * MiB, 0)).toBe(false);
    expect(f.at(TRIM_ABOVE_BYTES, 250)).toBe(true);
    expect(f.at(TRIM_ABOVE_BYTES, 500)).toBe(false); // the new low
    expect(f.at(TRIM_ABOVE_BYTES + TRIM_GROWTH_BYTES, 750)).toBe(false); // grown enough, but within TRIM_MIN_GAP_MS
    expect(f.at(TRIM_ABOVE_BYTES + TRIM_GROWTH_BYTES, 250 + TRIM_MIN_GAP_MS)).toBe(true);
    expect(f.trim.collections).toBe(2);
  });

  test("idle above the ceiling (nothing grows): none after the first", () => {
    const f = fake();
    const high = TRIM_ABOVE_BYTES + 20 * MiB;
    expect(f.at(100 * MiB, 0)).toBe(false);
    expect(f.at(high, 1_000)).toBe(true);
    let t = 1_000;
    for (let i = 0; i < 40; i++) expect(f.at(high, (t += 250))).toBe(false);
    expect(f.trim.collections).toBe(1);
  });

  test("what stays alive above the ceiling: the next one only after TRIM_GROWTH_BYTES of new growth", () => {
    const f = fake();
    const floor = TRIM_ABOVE_BYTES + 30 * MiB;
    expect(f.at(100 * MiB, 0)).toBe(false);
    expect(f.at(floor + 10 * MiB, 1_000)).toBe(true);
    expect(f.at(floor, 3_000)).toBe(false); // the collection's result: the new low
    expect(f.at(floor + TRIM_GROWTH_BYTES - 1, 5_000)).toBe(false);
    expect(f.at(floor + TRIM_GROWTH_BYTES, 7_000)).toBe(true);
  });
});

describe("memory trim: slow collections are spaced out", () => {
  test("a collection that took 100 ms holds the next one off for 50 times as long", () => {
    let rss = 0;
    let now = 0;
    const trim = new MemoryTrim({ rss: () => rss, now: () => now, collect: () => void (now += 100) });
    const at = (bytes: number, ms: number) => ((rss = bytes), (now = ms), trim.tick());
    expect(at(100 * MiB, -250)).toBe(false);
    expect(at(TRIM_ABOVE_BYTES + 20 * MiB, 0)).toBe(true); // ends at 100 ms
    const next = 100 + 100 * TRIM_GAP_PER_PAUSE;
    expect(at(TRIM_ABOVE_BYTES, 500)).toBe(false);
    expect(at(TRIM_ABOVE_BYTES + 40 * MiB, 100 + TRIM_MIN_GAP_MS)).toBe(false); // past the plain gap, not past this one
    expect(at(TRIM_ABOVE_BYTES + 40 * MiB, next - 1)).toBe(false);
    expect(at(TRIM_ABOVE_BYTES + 40 * MiB, next)).toBe(true);
    expect(trim.collections).toBe(2);
  });
});

describe("memory trim: the timer", () => {
  test("checks on its own and stops", async () => {
    let reads = 0;
    const stop = startMemoryTrim({ rss: () => (reads++, 0), now: () => 0, collect: () => {} });
    await Bun.sleep(600);
    stop();
    const seen = reads;
    expect(seen).toBeGreaterThanOrEqual(1);
    await Bun.sleep(400);
    expect(reads).toBe(seen);
  });
});
