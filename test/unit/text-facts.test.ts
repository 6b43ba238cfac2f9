import { describe, expect, test } from "bun:test";
import { TEXT_FACTS_MAX, TextFactsCache } from "../../src/services/text-facts";

/** The queue walk's memory of queued texts (docs/api-decisions.md, "Sending engine: crash safety and the queue walk"). */
describe("TextFactsCache", () => {
  const rows = new Map([
    ["m1", { account: "a", content: "x".repeat(200), recipient_phone: "+14155550001" }],
    ["m2", { account: "a", content: "Hi", recipient_phone: "+14155550002" }],
  ]);
  const make = () => {
    const reads: string[] = [];
    const asked: string[] = [];
    const cache = new TextFactsCache((accountId, id) => {
      reads.push(id);
      const r = rows.get(id);
      return r && r.account === accountId ? r : null;
    });
    const requestedOf = (id: string) => (asked.push(id), id === "m2" ? { deviceId: "d1", simNumber: 2 } : null);
    return { cache, reads, asked, requestedOf };
  };

  test("a text's row and request are read once; parts as the phone splits them", () => {
    const { cache, reads, asked, requestedOf } = make();
    for (let i = 0; i < 3; i++) {
      expect(cache.get("a", "m1", requestedOf)).toEqual({ accountId: "a", recipient: "+14155550001", parts: 2, asked: null });
      expect(cache.get("a", "m2", requestedOf)).toEqual({ accountId: "a", recipient: "+14155550002", parts: 1, asked: { deviceId: "d1", simNumber: 2 } });
    }
    expect(reads).toEqual(["m1", "m2"]);
    expect(asked).toEqual(["m1", "m2"]);
  });

  test("another account's text is not seen, cached or not; a missing row is not remembered", () => {
    const { cache, reads, requestedOf } = make();
    expect(cache.get("b", "m1", requestedOf)).toBeNull();
    expect(cache.get("a", "m1", requestedOf)).not.toBeNull();
    expect(cache.get("b", "m1", requestedOf)).toBeNull();
    expect(cache.get("a", "gone", requestedOf)).toBeNull();
    expect(cache.get("a", "gone", requestedOf)).toBeNull();
    expect(reads).toEqual(["m1", "m1", "gone", "gone"]);
  });

  test("bounded: the oldest entry goes first", () => {
    const cache = new TextFactsCache((_a, id) => ({ content: "Hi", recipient_phone: id }));
    for (let i = 0; i <= TEXT_FACTS_MAX; i++) cache.get("a", `m${i}`, () => null);
    expect(cache.size).toBe(TEXT_FACTS_MAX);
  });
});
