import { describe, expect, test } from "bun:test";
import { rng } from "../../helpers/rng";
import { IdIndex, hashId } from "../../../src/queue/id-index";

interface Item {
  id: string;
  v: number;
}

/** Random set/delete/get against a Map; the index must answer exactly as the Map does throughout. */
function checkAgainstMap(index: IdIndex<Item>, ops: number, idSpace: number, seed: number) {
  const random = rng(seed);
  const model = new Map<string, Item>();
  for (let op = 0; op < ops; op++) {
    const id = `m${Math.floor(random() * idSpace)}`;
    const r = random();
    if (r < 0.5) {
      const item = { id, v: op };
      expect(index.set(item)).toBe(model.get(id));
      model.set(id, item);
    } else if (r < 0.8) {
      expect(index.delete(id)).toBe(model.delete(id));
    } else {
      expect(index.get(id)).toBe(model.get(id));
      expect(index.has(id)).toBe(model.has(id));
    }
    expect(index.size).toBe(model.size);
  }
  // Every id, present or not, answers as the Map does once the dust settles.
  for (let k = 0; k < idSpace; k++) expect(index.get(`m${k}`)).toBe(model.get(`m${k}`));
  expect(index.get("never-stored")).toBeUndefined();
}

describe("IdIndex answers as a Map", () => {
  test("random inserts, replacements and removals, growing from empty", () => {
    checkAgainstMap(new IdIndex<Item>(), 20_000, 3_000, 1);
  });

  test("sized up front for the load", () => {
    const index = new IdIndex<Item>(5_000);
    checkAgainstMap(index, 20_000, 5_000, 2);
  });

  test("every id colliding: one long probe run, removals shift it back", () => {
    // A constant hash puts every id on one probe run, the worst case for backward-shift deletion.
    checkAgainstMap(new IdIndex<Item>(0, () => 13), 3_000, 200, 3);
  });

  test("few distinct hashes: runs of different home slots interleave", () => {
    checkAgainstMap(new IdIndex<Item>(0, (id) => hashId(id) & 0x8000000f), 6_000, 400, 4);
  });

  test("home slots on both sides of the table's end: runs wrap past it and shift back across it", () => {
    // -4…3: the last four slots and the first four, whatever the capacity.
    checkAgainstMap(new IdIndex<Item>(0, (id) => (hashId(id) & 7) - 4), 6_000, 300, 5);
  });

  test("a replacement keeps the size and returns the entry it replaced", () => {
    const index = new IdIndex<Item>();
    const a = { id: "x", v: 1 };
    const b = { id: "x", v: 2 };
    expect(index.set(a)).toBeUndefined();
    expect(index.set(b)).toBe(a);
    expect(index.size).toBe(1);
    expect(index.get("x")).toBe(b);
  });

  test("clear empties it, and it can be filled again", () => {
    const index = new IdIndex<Item>();
    for (let i = 0; i < 1_000; i++) index.set({ id: `m${i}`, v: i });
    index.clear();
    expect(index.size).toBe(0);
    expect(index.get("m5")).toBeUndefined();
    index.set({ id: "m5", v: 5 });
    expect(index.get("m5")?.v).toBe(5);
  });

  test("ids that differ in one character anywhere get different slots", () => {
    const base = "0192f0a4-7c1e-7b3a-9d2e-5f6a7b8c9d0e";
    const hashes = new Set<number>();
    for (let i = 0; i < base.length; i++) hashes.add(hashId(base.slice(0, i) + "#" + base.slice(i + 1)) & 0xffff);
    // 36 variants over 65,536 slots: a weak hash (one that ignored a position) would repeat often.
    expect(hashes.size).toBeGreaterThanOrEqual(34);
  });
});
