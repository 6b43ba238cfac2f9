import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, checkJsonDepth, jsonTooDeep } from "../../../src/http/body";

const enc = (s: string) => new TextEncoder().encode(s);
const arrays = (n: number) => "[".repeat(n) + "]".repeat(n);
const objects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

describe("the JSON depth scan, before any parse", () => {
  test("64 levels pass, 65 do not, for arrays, objects and a mix", () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(jsonTooDeep(enc(arrays(64)))).toBe(false);
    expect(jsonTooDeep(enc(arrays(65)))).toBe(true);
    expect(jsonTooDeep(enc(objects(64)))).toBe(false);
    expect(jsonTooDeep(enc(objects(65)))).toBe(true);
    const mixed = (n: number) => '[{"x":'.repeat(n / 2) + "0" + "}]".repeat(n / 2);
    expect(jsonTooDeep(enc(mixed(64)))).toBe(false);
    expect(jsonTooDeep(enc(mixed(66)))).toBe(true);
  });

  test("depth is nesting, not the number of brackets: wide and sequential values pass", () => {
    expect(jsonTooDeep(enc("[" + Array(10_000).fill("[1,{}]").join(",") + "]"))).toBe(false);
    expect(jsonTooDeep(enc(Array(200).fill(arrays(60)).join(",")))).toBe(false);
  });

  test("brackets inside strings do not count, escaped quotes do not end the string", () => {
    expect(jsonTooDeep(enc(JSON.stringify({ note: "[".repeat(1000) + "{".repeat(1000) })))).toBe(false);
    expect(jsonTooDeep(enc(JSON.stringify({ note: 'say \\"[[[[' + "[".repeat(200) })))).toBe(false);
    // A string ending in an escaped backslash is closed by the next quote: what follows counts.
    expect(jsonTooDeep(enc('["a\\\\",' + arrays(64) + "]"))).toBe(true);
    expect(jsonTooDeep(enc('["a\\\\",' + arrays(63) + "]"))).toBe(false);
  });

  test("multi-byte UTF-8 text is scanned safely", () => {
    expect(jsonTooDeep(enc(JSON.stringify({ name: "Zoë 😀 日本語 ［［［" })))).toBe(false);
    expect(jsonTooDeep(enc("[" + '"😀",'.repeat(10) + arrays(64) + "]"))).toBe(true);
  });

  test("text that is not JSON is scanned without throwing (the parser refuses it afterwards)", () => {
    expect(jsonTooDeep(enc("]]]]}}}{[\"unterminated"))).toBe(false);
    expect(jsonTooDeep(enc(""))).toBe(false);
    // Stray closers never let an attacker bank depth: they do not go below zero.
    expect(jsonTooDeep(enc("]".repeat(100) + arrays(65)))).toBe(true);
  });

  test("a 1 MiB body is scanned in one pass", () => {
    const big = enc("[" + Array(150_000).fill('"abcdef"').join(",") + "]");
    const t0 = performance.now();
    expect(jsonTooDeep(big)).toBe(false);
    // Catches a scan that is not linear, not a speed: scripts/bench/hostile-input.ts measures it.
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  test("checkJsonDepth throws the envelope's VALIDATION_ERROR naming the body and the limit", () => {
    let err: any;
    try {
      checkJsonDepth(enc(arrays(50_000)));
    } catch (e) {
      err = e;
    }
    expect(err?.code).toBe("VALIDATION_ERROR");
    expect(err.status).toBe(400);
    expect(err.toBody()).toMatchObject({ status: "error", code: "VALIDATION_ERROR", details: { field: "body" } });
    expect(err.message).toContain("64 levels");
  });
});
