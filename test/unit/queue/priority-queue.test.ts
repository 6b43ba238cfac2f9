import { describe, expect, test } from "bun:test";
import { rng } from "../../helpers/rng";
import {
  MessageQueue,
  PRIORITY_RANK,
  estimateDelivery,
  type Priority,
  type QueueEntry,
} from "../../../src/queue/priority-queue";

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0);
const MINUTE = 60_000;
const PRIORITIES: Priority[] = ["urgent", "high", "normal", "low"];

let nextSeq = 1;
/** An entry for account "a", normal priority, due at T0, with a fresh seq unless given. */
function entry(id: string, over: Partial<QueueEntry> = {}): QueueEntry {
  return { id, accountId: "a", priority: "normal", scheduledFor: T0, seq: nextSeq++, ...over };
}

function queueOf(...entries: QueueEntry[]): MessageQueue {
  const q = new MessageQueue();
  for (const e of entries) q.insert(e);
  return q;
}

/** Ids of the account's entries in queue order, read back through rank(). */
function orderOf(q: MessageQueue, ids: string[]): string[] {
  return [...ids].sort((x, y) => q.rank(x) - q.rank(y));
}

// ---- reference model ------------------------------------------------------------------------------

function compareEntries(a: QueueEntry, b: QueueEntry): number {
  return (
    PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] ||
    a.scheduledFor - b.scheduledFor ||
    a.seq - b.seq ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** The obvious implementation: a map of entries, sorted on every question. */
class ReferenceQueue {
  readonly entries = new Map<string, QueueEntry>();
  insert(e: QueueEntry) {
    this.entries.set(e.id, { ...e });
  }
  remove(id: string) {
    return this.entries.delete(id);
  }
  ordered(accountId: string): QueueEntry[] {
    return [...this.entries.values()].filter((e) => e.accountId === accountId).sort(compareEntries);
  }
  rank(id: string): number {
    const e = this.entries.get(id);
    if (e === undefined) return 0;
    return this.ordered(e.accountId).findIndex((x) => x.id === id) + 1;
  }
  takeDue(accountId: string, now: number, limit: number, exclude?: (id: string) => boolean): QueueEntry[] {
    return this.ordered(accountId)
      .filter((e) => e.scheduledFor <= now && !exclude?.(e.id))
      .slice(0, limit);
  }
  nextDueAt(accountId: string, now: number): number | undefined {
    const future = this.ordered(accountId).filter((e) => e.scheduledFor > now).map((e) => e.scheduledFor);
    return future.length === 0 ? undefined : Math.min(...future);
  }
}


/** Every entry's rank, and the account sizes, agree with the reference. */
function expectSameAsReference(q: MessageQueue, ref: ReferenceQueue, accounts: string[]) {
  expect(q.size()).toBe(ref.entries.size);
  for (const accountId of accounts) {
    const ordered = ref.ordered(accountId);
    expect(q.size(accountId)).toBe(ordered.length);
    const ranks = ordered.map((e) => q.rank(e.id));
    expect(ranks).toEqual(ordered.map((_, i) => i + 1));
  }
}

// ---- tests ----------------------------------------------------------------------------------------

describe("PRIORITY_RANK", () => {
  test("urgent 0, high 1, normal 2, low 3", () => {
    expect(PRIORITY_RANK).toEqual({ urgent: 0, high: 1, normal: 2, low: 3 });
  });
});

describe("queue order", () => {
  test("priority first, whatever the schedule", () => {
    const q = queueOf(
      entry("low", { priority: "low", scheduledFor: T0 - 60 * MINUTE }),
      entry("urgent", { priority: "urgent", scheduledFor: T0 + 60 * MINUTE }),
      entry("normal", { priority: "normal", scheduledFor: T0 - 30 * MINUTE }),
      entry("high", { priority: "high", scheduledFor: T0 + 30 * MINUTE }),
    );
    expect(orderOf(q, ["low", "urgent", "normal", "high"])).toEqual(["urgent", "high", "normal", "low"]);
    expect([q.rank("urgent"), q.rank("high"), q.rank("normal"), q.rank("low")]).toEqual([1, 2, 3, 4]);
  });

  test("within a priority by scheduledFor, earliest first", () => {
    const q = queueOf(
      entry("later", { scheduledFor: T0 + 2 * MINUTE, seq: 1 }),
      entry("sooner", { scheduledFor: T0 + MINUTE, seq: 2 }),
      entry("now", { scheduledFor: T0, seq: 3 }),
    );
    expect(orderOf(q, ["later", "sooner", "now"])).toEqual(["now", "sooner", "later"]);
  });

  test("same schedule: creation order (seq), then id", () => {
    const q = queueOf(
      entry("m-3", { seq: 30 }),
      entry("m-1", { seq: 10 }),
      entry("m-2b", { seq: 20 }),
      entry("m-2a", { seq: 20 }),
    );
    expect(orderOf(q, ["m-3", "m-1", "m-2b", "m-2a"])).toEqual(["m-1", "m-2a", "m-2b", "m-3"]);
  });

  test("rank is 0 for an unknown id", () => {
    expect(new MessageQueue().rank("nope")).toBe(0);
    expect(queueOf(entry("x")).rank("nope")).toBe(0);
  });
});

describe("insert, remove, re-insert", () => {
  test("ranks follow inserts and removes", () => {
    const q = queueOf(entry("a1"), entry("a2"), entry("a3"));
    expect([q.rank("a1"), q.rank("a2"), q.rank("a3")]).toEqual([1, 2, 3]);

    q.insert(entry("u", { priority: "urgent", scheduledFor: T0 + 99 * MINUTE }));
    expect([q.rank("u"), q.rank("a1"), q.rank("a2"), q.rank("a3")]).toEqual([1, 2, 3, 4]);

    expect(q.remove("a2")).toBe(true);
    expect([q.rank("u"), q.rank("a1"), q.rank("a2"), q.rank("a3")]).toEqual([1, 2, 0, 3]);
    expect(q.has("a2")).toBe(false);
    expect(q.size()).toBe(3);
  });

  test("remove of an absent id answers false and changes nothing", () => {
    const q = queueOf(entry("a1"));
    expect(q.remove("nope")).toBe(false);
    expect(q.remove("a1")).toBe(true);
    expect(q.remove("a1")).toBe(false);
    expect(q.size()).toBe(0);
    expect(q.size("a")).toBe(0);
  });

  test("re-inserting an id replaces the entry (no duplicate)", () => {
    const q = queueOf(entry("x", { seq: 1 }), entry("y", { seq: 2 }), entry("z", { seq: 3 }));
    q.insert({ id: "z", accountId: "a", priority: "urgent", scheduledFor: T0, seq: 3 });
    expect(q.size()).toBe(3);
    expect([q.rank("z"), q.rank("x"), q.rank("y")]).toEqual([1, 2, 3]);
    expect(q.get("z")?.priority).toBe("urgent");
    expect(q.countByPriority("a")).toEqual({ urgent: 1, high: 0, normal: 2, low: 0 });

    // Same values again: still one entry, same place.
    q.insert({ id: "z", accountId: "a", priority: "urgent", scheduledFor: T0, seq: 3 });
    expect(q.size()).toBe(3);
    expect(q.rank("z")).toBe(1);

    // A new schedule moves it to the back of its priority.
    q.insert({ id: "x", accountId: "a", priority: "normal", scheduledFor: T0 + MINUTE, seq: 1 });
    expect([q.rank("z"), q.rank("y"), q.rank("x")]).toEqual([1, 2, 3]);
  });

  test("re-inserting an id under another account moves it there", () => {
    const q = queueOf(entry("x"), entry("y"));
    q.insert(entry("x", { accountId: "b" }));
    expect(q.size("a")).toBe(1);
    expect(q.size("b")).toBe(1);
    expect(q.rank("y")).toBe(1);
    expect(q.rank("x")).toBe(1);
    expect(q.get("x")?.accountId).toBe("b");
  });

  test("get returns a copy: changing it does not reorder the queue", () => {
    const original = entry("x", { scheduledFor: T0 });
    const q = queueOf(original, entry("y", { scheduledFor: T0 + MINUTE }));
    original.scheduledFor = T0 + 99 * MINUTE; // the caller's object is not the stored one
    const got = q.get("x")!;
    expect(got).toEqual({ id: "x", accountId: "a", priority: "normal", scheduledFor: T0, seq: got.seq });
    got.priority = "low";
    expect(q.get("x")?.priority).toBe("normal");
    expect(q.rank("x")).toBe(1);
    expect(q.get("nope")).toBeUndefined();
  });

  test("invalid entries are refused before they can corrupt the order", () => {
    const q = new MessageQueue();
    expect(() => q.insert(entry("p", { priority: "asap" as Priority }))).toThrow(TypeError);
    expect(() => q.insert(entry("p", { priority: "toString" as Priority }))).toThrow(TypeError);
    expect(() => q.insert(entry("s", { scheduledFor: Number.NaN }))).toThrow(TypeError);
    expect(() => q.insert(entry("s", { scheduledFor: Number.POSITIVE_INFINITY }))).toThrow(TypeError);
    expect(() => q.insert(entry("q", { seq: Number.NaN }))).toThrow(TypeError);
    expect(q.size()).toBe(0);
  });

  test("a rebuild with an invalid row throws and keeps the previous queue", () => {
    const q = queueOf(entry("kept"));
    expect(() => q.rebuild([entry("ok"), entry("bad", { scheduledFor: Number.NaN })])).toThrow(TypeError);
    expect(q.size()).toBe(1);
    expect(q.has("ok")).toBe(false);
    expect(q.rank("kept")).toBe(1);
  });

  test("clear empties everything", () => {
    const q = queueOf(entry("x"), entry("y", { accountId: "b" }));
    q.clear();
    expect(q.size()).toBe(0);
    expect(q.has("x")).toBe(false);
    expect(q.rank("y")).toBe(0);
    expect(q.countByPriority()).toEqual({ urgent: 0, high: 0, normal: 0, low: 0 });
  });

  test("ranks stay right while chunks split and merge (thousands in one account)", () => {
    const q = new MessageQueue();
    const ref = new ReferenceQueue();
    const n = 5000;
    // Interleave priorities so inserts land all over the order, not only at the end.
    for (let i = 0; i < n; i++) {
      const e = entry(`m${i}`, { priority: PRIORITIES[i % 4], scheduledFor: T0 + ((i * 37) % 101) * MINUTE, seq: i });
      q.insert(e);
      ref.insert(e);
    }
    expectSameAsReference(q, ref, ["a"]);
    // Remove nine in ten, from everywhere, so chunks shrink and merge.
    for (let i = 0; i < n; i++) {
      if (i % 10 !== 3) {
        q.remove(`m${i}`);
        ref.remove(`m${i}`);
      }
    }
    expectSameAsReference(q, ref, ["a"]);
    for (let i = 0; i < n; i++) if (i % 10 !== 3) expect(q.rank(`m${i}`)).toBe(0);
  });
});

describe("accounts are separate queues", () => {
  test("rank, size and counts are per account", () => {
    const q = queueOf(
      entry("a1", { accountId: "a", priority: "low" }),
      entry("b1", { accountId: "b", priority: "low" }),
      entry("b2", { accountId: "b", priority: "urgent" }),
      entry("a2", { accountId: "a", priority: "high" }),
      entry("c1", { accountId: "c", priority: "normal" }),
    );
    expect([q.rank("a2"), q.rank("a1")]).toEqual([1, 2]);
    expect([q.rank("b2"), q.rank("b1")]).toEqual([1, 2]);
    expect(q.rank("c1")).toBe(1);
    expect(q.size()).toBe(5);
    expect([q.size("a"), q.size("b"), q.size("c"), q.size("nobody")]).toEqual([2, 2, 1, 0]);
    expect(q.countByPriority("a")).toEqual({ urgent: 0, high: 1, normal: 0, low: 1 });
    expect(q.countByPriority("b")).toEqual({ urgent: 1, high: 0, normal: 0, low: 1 });
    expect(q.countByPriority("nobody")).toEqual({ urgent: 0, high: 0, normal: 0, low: 0 });
    expect(q.countByPriority()).toEqual({ urgent: 1, high: 1, normal: 1, low: 2 });

    // An urgent message in one account does not move another account's messages.
    q.insert(entry("b3", { accountId: "b", priority: "urgent", scheduledFor: T0 - MINUTE }));
    expect([q.rank("a2"), q.rank("a1")]).toEqual([1, 2]);
    expect([q.rank("b3"), q.rank("b2"), q.rank("b1")]).toEqual([1, 2, 3]);
  });

  test("takeDue and nextDueAt see only their own account", () => {
    const q = queueOf(entry("a1", { accountId: "a" }), entry("b1", { accountId: "b", scheduledFor: T0 + MINUTE }));
    expect(q.takeDue("a", T0, 10).map((e) => e.id)).toEqual(["a1"]);
    expect(q.takeDue("b", T0, 10)).toEqual([]);
    expect(q.nextDueAt("a", T0)).toBeUndefined();
    expect(q.nextDueAt("b", T0)).toBe(T0 + MINUTE);
    expect(q.takeDue("nobody", T0, 10)).toEqual([]);
    expect(q.nextDueAt("nobody", T0)).toBeUndefined();
  });

  test("an account emptied by removals can be used again", () => {
    const q = queueOf(entry("x", { accountId: "b" }));
    q.remove("x");
    expect(q.size("b")).toBe(0);
    q.insert(entry("y", { accountId: "b" }));
    expect(q.rank("y")).toBe(1);
  });
});

describe("takeDue", () => {
  test("due entries in queue order, up to the limit, as copies", () => {
    const q = queueOf(
      entry("n1", { seq: 1 }),
      entry("n2", { seq: 2 }),
      entry("h1", { priority: "high", scheduledFor: T0 - MINUTE }),
      entry("l1", { priority: "low", scheduledFor: T0 - 60 * MINUTE }),
    );
    expect(q.takeDue("a", T0, 10).map((e) => e.id)).toEqual(["h1", "n1", "n2", "l1"]);
    expect(q.takeDue("a", T0, 2).map((e) => e.id)).toEqual(["h1", "n1"]);
    expect(q.takeDue("a", T0, 0)).toEqual([]);
    const [first] = q.takeDue("a", T0, 1);
    expect(first).toEqual({ id: "h1", accountId: "a", priority: "high", scheduledFor: T0 - MINUTE, seq: first.seq });
    // Taking does not remove: the caller leases, then removes on report.
    expect(q.size("a")).toBe(4);
  });

  test("scheduledFor equal to now is due; later is not", () => {
    const q = queueOf(entry("now", { scheduledFor: T0 }), entry("next-ms", { scheduledFor: T0 + 1 }));
    expect(q.takeDue("a", T0, 10).map((e) => e.id)).toEqual(["now"]);
    expect(q.takeDue("a", T0 + 1, 10).map((e) => e.id)).toEqual(["now", "next-ms"]);
  });

  test("urgent due messages come first, even when scheduled after due normal ones", () => {
    const q = queueOf(
      entry("normal-old", { priority: "normal", scheduledFor: T0 - 60 * MINUTE }),
      entry("urgent-new", { priority: "urgent", scheduledFor: T0 - MINUTE }),
      entry("urgent-future", { priority: "urgent", scheduledFor: T0 + MINUTE }),
    );
    expect(q.takeDue("a", T0, 1).map((e) => e.id)).toEqual(["urgent-new"]);
    expect(q.takeDue("a", T0, 10).map((e) => e.id)).toEqual(["urgent-new", "normal-old"]);
    expect(q.takeDue("a", T0 + MINUTE, 10).map((e) => e.id)).toEqual(["urgent-new", "urgent-future", "normal-old"]);
  });

  test("a message not yet due never blocks a due one behind it", () => {
    const q = queueOf(
      entry("urgent-tomorrow", { priority: "urgent", scheduledFor: T0 + 24 * 60 * MINUTE }),
      entry("high-later", { priority: "high", scheduledFor: T0 + 5 * MINUTE }),
      entry("high-due", { priority: "high", scheduledFor: T0 - 5 * MINUTE }),
      entry("low-due", { priority: "low", scheduledFor: T0 }),
    );
    expect(q.takeDue("a", T0, 10).map((e) => e.id)).toEqual(["high-due", "low-due"]);
  });

  test("leased ids are skipped and the next due ones fill the limit", () => {
    const q = queueOf(...Array.from({ length: 6 }, (_, i) => entry(`m${i}`, { seq: i })));
    const leased = new Set(["m0", "m2"]);
    expect(q.takeDue("a", T0, 3, (id) => leased.has(id)).map((e) => e.id)).toEqual(["m1", "m3", "m4"]);
    expect(q.takeDue("a", T0, 10, () => true)).toEqual([]);
  });

  test("only the due head of each priority is read, even behind many future messages", () => {
    const q = new MessageQueue();
    const future = Array.from({ length: 20_000 }, (_, i) =>
      entry(`f${i}`, { priority: PRIORITIES[i % 4], scheduledFor: T0 + (1 + i) * MINUTE, seq: i }),
    );
    q.rebuild([...future, entry("due-low", { priority: "low", scheduledFor: T0 - MINUTE })]);
    let asked = 0;
    const got = q.takeDue("a", T0, 10, () => (asked++, false));
    expect(got.map((e) => e.id)).toEqual(["due-low"]);
    expect(asked).toBe(1); // the exclusion callback saw the due entry only: no scan of the future ones
  });
});

describe("nextDueAt", () => {
  test("earliest future schedule across all priorities", () => {
    const q = queueOf(
      entry("due", { priority: "urgent", scheduledFor: T0 - MINUTE }),
      entry("u-future", { priority: "urgent", scheduledFor: T0 + 10 * MINUTE }),
      entry("l-future", { priority: "low", scheduledFor: T0 + 3 * MINUTE }),
      entry("n-future", { priority: "normal", scheduledFor: T0 + 5 * MINUTE }),
    );
    expect(q.nextDueAt("a", T0)).toBe(T0 + 3 * MINUTE);
    expect(q.nextDueAt("a", T0 + 3 * MINUTE)).toBe(T0 + 5 * MINUTE);
    expect(q.nextDueAt("a", T0 + 10 * MINUTE)).toBeUndefined();
  });

  test("undefined when everything is due or the account is empty", () => {
    const q = queueOf(entry("x", { scheduledFor: T0 }));
    expect(q.nextDueAt("a", T0)).toBeUndefined();
    expect(q.nextDueAt("a", T0 - 1)).toBe(T0);
    expect(new MessageQueue().nextDueAt("a", T0)).toBeUndefined();
  });
});

describe("estimateDelivery and position", () => {
  test("first in line: max(scheduledFor, now)", () => {
    expect(estimateDelivery(T0 - MINUTE, 1, T0, 60)).toBe(T0);
    expect(estimateDelivery(T0 + MINUTE, 1, T0, 60)).toBe(T0 + MINUTE);
  });

  test("each message ahead adds 1 / sendRatePerMinute minutes", () => {
    // 60 per minute: one a second; position 11 has 10 ahead.
    expect(estimateDelivery(T0 - MINUTE, 11, T0, 60)).toBe(T0 + 10_000);
    // 10 per minute: 6 s each; position 101 → 100 ahead → 10 minutes.
    expect(estimateDelivery(T0, 101, T0, 10)).toBe(T0 + 10 * MINUTE);
    // A later schedule wins over the queue estimate.
    expect(estimateDelivery(T0 + 60 * MINUTE, 101, T0, 10)).toBe(T0 + 60 * MINUTE);
  });

  test("fractional milliseconds round up to the next whole one", () => {
    // 7 per minute: 8571.43 ms per message ahead.
    expect(estimateDelivery(0, 2, T0, 7)).toBe(T0 + 8572);
  });

  test("a non-positive or non-finite rate is refused", () => {
    expect(() => estimateDelivery(T0, 1, T0, 0)).toThrow(RangeError);
    expect(() => estimateDelivery(T0, 1, T0, -1)).toThrow(RangeError);
    expect(() => estimateDelivery(T0, 1, T0, Number.NaN)).toThrow(RangeError);
  });

  test("position combines rank and the estimate; undefined when not queued", () => {
    const q = queueOf(
      ...Array.from({ length: 5 }, (_, i) => entry(`m${i}`, { scheduledFor: T0 - MINUTE, seq: i })),
      entry("later", { scheduledFor: T0 + 60 * MINUTE }),
    );
    expect(q.position("m0", T0, 60)).toEqual({ queuePosition: 1, estimatedDelivery: T0 });
    expect(q.position("m4", T0, 60)).toEqual({ queuePosition: 5, estimatedDelivery: T0 + 4000 });
    expect(q.position("later", T0, 60)).toEqual({ queuePosition: 6, estimatedDelivery: T0 + 60 * MINUTE });
    expect(q.position("nope", T0, 60)).toBeUndefined();
  });
});

describe("rebuild", () => {
  test("replaces whatever was queued", () => {
    const q = queueOf(entry("old"));
    q.rebuild([entry("new1"), entry("new2", { accountId: "b" })]);
    expect(q.has("old")).toBe(false);
    expect(q.size()).toBe(2);
    expect(q.rank("new1")).toBe(1);
    expect(q.rank("new2")).toBe(1);
    q.rebuild([]);
    expect(q.size()).toBe(0);
  });

  test("a repeated id keeps its last entry", () => {
    const q = new MessageQueue();
    q.rebuild([
      entry("x", { priority: "low" }),
      entry("y"),
      entry("x", { priority: "urgent", accountId: "b" }),
      entry("z", { accountId: "b" }),
    ]);
    expect(q.size()).toBe(3);
    expect(q.size("a")).toBe(1);
    expect(q.get("x")).toMatchObject({ priority: "urgent", accountId: "b" });
    expect([q.rank("x"), q.rank("z"), q.rank("y")]).toEqual([1, 2, 1]);
    expect(q.countByPriority()).toEqual({ urgent: 1, high: 0, normal: 2, low: 0 });
  });

  test("accepts any iterable", () => {
    const q = new MessageQueue();
    function* rows() {
      yield entry("g2", { seq: 2 });
      yield entry("g1", { seq: 1 });
    }
    q.rebuild(rows());
    expect(orderOf(q, ["g2", "g1"])).toEqual(["g1", "g2"]);
  });

  // Large loads take a radix-sort path with its own edge cases; small ones a comparator sort.
  const shapes: [string, (r: () => number, i: number) => Partial<QueueEntry>][] = [
    ["few distinct schedules, many ties on seq", (r) => ({ scheduledFor: T0 + Math.floor(r() * 5) * MINUTE, seq: Math.floor(r() * 50) })],
    ["schedules over centuries (> 2^32 ms range), negative too", (r) => ({ scheduledFor: Math.floor((r() - 0.3) * 2 ** 45), seq: Math.floor(r() * 1e6) })],
    ["schedules in the same few ms", (r) => ({ scheduledFor: T0 + Math.floor(r() * 3) })],
    ["fractional schedules", (r) => ({ scheduledFor: T0 + r() * MINUTE })],
    ["a range past 2^48 ms", (r, i) => ({ scheduledFor: i % 2 === 0 ? -(2 ** 48) : 2 ** 48 + Math.floor(r() * 1000) })],
    ["fractional seq", (r) => ({ scheduledFor: T0 + Math.floor(r() * 10) * MINUTE, seq: r() })],
  ];
  for (const size of [300, 12_000]) {
    for (const [name, shape] of shapes) {
      test(`${size.toLocaleString("en-US")} entries in random order: ${name}`, () => {
        const r = rng(size + name.length);
        const entries = Array.from({ length: size }, (_, i) =>
          entry(`m${Math.floor(r() * 1e9).toString(36)}-${i}`, {
            accountId: r() < 0.8 ? "a" : "b",
            priority: PRIORITIES[Math.floor(r() * 4)],
            seq: i,
            ...shape(r, i),
          }),
        );
        const q = new MessageQueue();
        q.rebuild(entries);
        const ref = new ReferenceQueue();
        for (const e of entries) ref.insert(e);
        expectSameAsReference(q, ref, ["a", "b"]);
        // The loaded structure keeps working under writes.
        for (const e of entries.slice(0, 200)) {
          q.remove(e.id);
          ref.remove(e.id);
        }
        const moved = entries.slice(200, 400).map((e) => ({ ...e, priority: "urgent" as Priority, seq: e.seq + 0.5 }));
        for (const e of moved) {
          q.insert(e);
          ref.insert(e);
        }
        expectSameAsReference(q, ref, ["a", "b"]);
      });
    }
  }

  test("input already in queue order gives the same queue", () => {
    const r = rng(7);
    const entries = Array.from({ length: 10_000 }, (_, i) =>
      entry(`m${i}`, { priority: PRIORITIES[Math.floor(r() * 4)], scheduledFor: T0 + Math.floor(r() * 100) * MINUTE, seq: i }),
    ).sort(compareEntries);
    const q = new MessageQueue();
    q.rebuild(entries);
    expect(entries.every((e, i) => q.rank(e.id) === i + 1)).toBe(true);
  });
});

describe("randomized against a sorted-array reference", () => {
  test("20,000 random operations (fixed seed)", () => {
    const r = rng(0xc0ffee);
    const q = new MessageQueue();
    const ref = new ReferenceQueue();
    const accounts = ["a", "b", "c"];
    const live: string[] = [];
    const liveIndex = new Map<string, number>();
    const addLive = (id: string) => {
      if (liveIndex.has(id)) return;
      liveIndex.set(id, live.length);
      live.push(id);
    };
    const dropLive = (id: string) => {
      const i = liveIndex.get(id);
      if (i === undefined) return;
      const last = live.pop()!;
      if (last !== id) {
        live[i] = last;
        liveIndex.set(last, i);
      }
      liveIndex.delete(id);
    };
    const randomEntry = (id: string): QueueEntry => ({
      id,
      accountId: r() < 0.75 ? "a" : accounts[1 + Math.floor(r() * 2)],
      priority: PRIORITIES[Math.floor(r() * 4)],
      // Few distinct schedules and seqs, so ties are common and the id tiebreak is exercised.
      scheduledFor: T0 + Math.floor(r() * 40) * MINUTE,
      seq: Math.floor(r() * 500),
    });

    const OPS = 20_000;
    let nextId = 0;
    let checkedRanks = 0;
    for (let op = 0; op < OPS; op++) {
      // First half grows the queue (chunks split); second half shrinks it (chunks merge).
      const removeShare = op < OPS / 2 ? 0.2 : 0.55;
      const x = r();
      if (x < removeShare) {
        const id = live.length > 0 && r() < 0.95 ? live[Math.floor(r() * live.length)] : `absent-${op}`;
        expect(q.remove(id)).toBe(ref.remove(id));
        dropLive(id);
      } else if (x < removeShare + 0.1 && live.length > 0) {
        const id = live[Math.floor(r() * live.length)];
        const e = randomEntry(id); // re-insert: replaces, possibly in another account
        q.insert(e);
        ref.insert(e);
      } else if (x < removeShare + 0.3 && live.length > 0) {
        const id = live[Math.floor(r() * live.length)];
        expect(q.rank(id)).toBe(ref.rank(id));
        checkedRanks++;
      } else {
        const id = `m${(nextId++).toString(36).padStart(4, "0")}${r() < 0.5 ? "x" : ""}`;
        const e = randomEntry(id);
        q.insert(e);
        ref.insert(e);
        addLive(id);
      }

      if (op % 2000 === 1999) {
        expectSameAsReference(q, ref, accounts);
        for (const accountId of accounts) {
          const now = T0 + Math.floor(r() * 40) * MINUTE;
          const excluded = new Set(live.filter(() => r() < 0.1));
          const exclude = (id: string) => excluded.has(id);
          expect(q.takeDue(accountId, now, 50, exclude)).toEqual(ref.takeDue(accountId, now, 50, exclude));
          expect(q.nextDueAt(accountId, now)).toBe(ref.nextDueAt(accountId, now));
          const counts = { urgent: 0, high: 0, normal: 0, low: 0 };
          for (const e of ref.ordered(accountId)) counts[e.priority]++;
          expect(q.countByPriority(accountId)).toEqual(counts);
        }
      }
    }
    expect(checkedRanks).toBeGreaterThan(2000);
    expect(q.size()).toBe(live.length);
  }, 120_000); // a correctness check, not a speed one: a busy machine may take far longer than the default 5 s
});

describe("scale: a million queued messages", () => {
  test("rebuild from 1,000,000 rows in scrambled order, then exact ranks", () => {
    const N = 1_000_000;
    const PER_PRIORITY = N / 4;
    // Message i: priority i % 4; k = i / 4 orders it within its priority. Schedules repeat in
    // threes so ties are settled by seq. Rows arrive in a scrambled (but deterministic) order.
    const make = (i: number): QueueEntry => {
      const k = Math.floor(i / 4);
      return { id: `msg-${i}`, accountId: "big", priority: PRIORITIES[i % 4], scheduledFor: T0 + Math.floor(k / 3) * 1000, seq: i };
    };
    const rows: QueueEntry[] = new Array(N);
    for (let j = 0; j < N; j++) rows[j] = make((j * 7919) % N); // 7919 is prime to 10^6: a permutation
    const expectedRank = (i: number) => (i % 4) * PER_PRIORITY + Math.floor(i / 4) + 1;

    const q = new MessageQueue();
    q.rebuild(rows);
    expect(q.size()).toBe(N);
    expect(q.size("big")).toBe(N);
    expect(q.countByPriority("big")).toEqual({ urgent: PER_PRIORITY, high: PER_PRIORITY, normal: PER_PRIORITY, low: PER_PRIORITY });

    const probes = [0, 1, 2, 3, 4, 5, 6, 7, 11, 999, 123_456, 500_001, 777_778, 999_996, 999_997, 999_998, 999_999];
    for (const i of probes) expect(q.rank(`msg-${i}`)).toBe(expectedRank(i));
    const r = rng(42);
    for (let n = 0; n < 1000; n++) {
      const i = Math.floor(r() * N);
      expect(q.rank(`msg-${i}`)).toBe(expectedRank(i));
    }

    // Writes after the load: an urgent message due first moves everyone back by one.
    q.insert({ id: "vip", accountId: "big", priority: "urgent", scheduledFor: T0 - 1, seq: N });
    expect(q.rank("vip")).toBe(1);
    expect(q.rank("msg-999999")).toBe(N + 1);
    expect(q.remove("msg-0")).toBe(true);
    expect(q.rank("msg-4")).toBe(2);
    expect(q.rank("msg-999999")).toBe(N);

    // Due now: vip, then urgent entries scheduled at T0 (k = 1, 2: msg-4, msg-8), then high.
    expect(q.takeDue("big", T0, 4).map((e) => e.id)).toEqual(["vip", "msg-4", "msg-8", "msg-1"]);
    expect(q.nextDueAt("big", T0)).toBe(T0 + 1000);
    expect(q.position("msg-999999", T0, 60)).toEqual({
      queuePosition: N,
      estimatedDelivery: Math.max(T0 + Math.floor(Math.floor(999_999 / 4) / 3) * 1000, T0 + (N - 1) * 1000),
    });
  });
});
