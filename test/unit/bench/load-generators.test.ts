/**
 * The benches' load generators (docs/api-decisions.md, "Benchmarks take their load from wrk"):
 * which one runs, the line that says so, wrk's report read into the JS generator's result, and —
 * where wrk is installed — a real wrk run against a small recording server: the same bodies as the
 * JS generator, every form's address, exact status counts, and the paced rate.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bodyFor } from "../../../scripts/bench/lib/bodies";
import { chooseLoadGenerator, loadGeneratorLine } from "../../../scripts/bench/lib/proc";
import { parseWrkOutput, runWrk, wrkPath } from "../../../scripts/bench/lib/wrk";

describe("choosing the load generator", () => {
  test("wrk when it is installed, unless --load js", () => {
    expect(chooseLoadGenerator([], "/usr/bin/false")).toMatchObject({ kind: "wrk", path: "/usr/bin/false" });
    expect(chooseLoadGenerator(["--seconds", "3", "--load", "wrk", "--load-threads", "3"], "/usr/bin/false")).toMatchObject({ kind: "wrk", threads: 3 });
    expect(chooseLoadGenerator(["--load", "js"], "/usr/bin/false")).toEqual({ kind: "js", wrkMissing: false });
  });

  test("without wrk: the JS generator, and the line says how to install wrk", () => {
    const g = chooseLoadGenerator(["--seconds", "3"], null);
    expect(g).toEqual({ kind: "js", wrkMissing: true });
    expect(loadGeneratorLine(g)).toContain("apt-get install wrk");
    expect(loadGeneratorLine({ kind: "js", wrkMissing: false })).not.toContain("apt-get");
    expect(loadGeneratorLine({ kind: "wrk", path: "/usr/bin/wrk", version: "wrk 4.1.0" }, 2)).toStartWith("load generator: wrk 4.1.0 (C, 2 threads");
  });

  test("--load wrk without wrk, a bad --load or --load-threads: an error, not a silent fallback", () => {
    expect(() => chooseLoadGenerator(["--load", "wrk"], null)).toThrow("apt-get install wrk");
    expect(() => chooseLoadGenerator(["--load", "ab"], "/usr/bin/false")).toThrow("--load takes wrk or js");
    expect(() => chooseLoadGenerator(["--load-threads", "0"], "/usr/bin/false")).toThrow("--load-threads");
    expect(() => chooseLoadGenerator(["--load-threads", "two"], "/usr/bin/false")).toThrow("--load-threads");
  });
});

describe("reading wrk's report", () => {
  const report = (o: object) =>
    "Running 1s test @ http://127.0.0.1:1\n  2 threads and 4 connections\n" +
    `\nWRK_RESULT ${JSON.stringify({ requests: 1000, durationUs: 2_000_000, p50Us: 1234, p99Us: 56789, maxUs: 99999, statuses: { 200: 990 }, connect: 0, read: 0, write: 0, timeout: 0, fresh: [300, 310], ...o })}\n`;

  test("exact percentiles in ms, req/s over wrk's own duration, the next offset past every thread's numbers", () => {
    const r = parseWrkOutput(report({}), { offset: 100, threads: 2 });
    expect(r).toMatchObject({ requests: 1000, rps: 500, seconds: 2, p50Ms: 1.23, p99Ms: 56.79, maxMs: 100, errors: 0, nextOffset: 100 + 2 * 310 });
  });

  test("every answer outside 2xx is an error (3xx too), and socket errors count under -1", () => {
    const r = parseWrkOutput(report({ statuses: { 200: 900, 201: 50, 302: 30, 429: 15, 500: 5 }, read: 2, timeout: 1 }), { offset: 0, threads: 2 });
    expect(r.errors).toBe(30 + 15 + 5 + 3);
    expect(r.statuses).toEqual({ "200": 900, "201": 50, "302": 30, "429": 15, "500": 5, "-1": 3 });
  });

  test("no result line: an error that shows what wrk printed", () => {
    expect(() => parseWrkOutput("unable to connect to 127.0.0.1:1 Connection refused", { offset: 0, threads: 2 })).toThrow("Connection refused");
  });
});

describe.skipIf(!wrkPath())("a wrk run against a recording server", () => {
  const bodies: string[] = [];
  const paths = new Map<string, number>();
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const path = new URL(req.url).pathname;
        if (req.method !== "POST" || req.headers.get("content-type") !== "application/json") return new Response("wrong request", { status: 400 });
        bodies.push(await req.text());
        paths.set(path, (paths.get(path) ?? 0) + 1);
        // One form answers with a redirect, one with a server error: neither is a success.
        return new Response("{}", { status: path.includes("/redirect/") ? 302 : path.includes("/broken/") ? 500 : 200 });
      },
    });
  });
  afterAll(() => server.stop(true));

  test("the JS generator's bodies, over every form, with each status counted", async () => {
    bodies.length = 0;
    paths.clear();
    const forms = ["a", "b", "redirect", "broken"];
    const r = await runWrk(`http://127.0.0.1:${server.port}`, forms, { concurrency: 4, seconds: 1, offset: 5000, threads: 2 });
    expect(r.requests).toBeGreaterThan(0);
    expect(r.nextOffset).toBeGreaterThan(5000);
    const expected = new Set(Array.from({ length: r.nextOffset - 5000 }, (_, k) => bodyFor(5000 + k)));
    expect(bodies.filter((b) => !expected.has(b))).toEqual([]);
    // About half the numbers repeat one already sent (an existing contact), as in the JS generator.
    const distinct = new Set(bodies).size;
    expect(distinct).toBeLessThan(bodies.length * 0.75);
    expect(distinct).toBeGreaterThan(bodies.length * 0.3);
    expect([...paths.keys()].sort()).toEqual(forms.map((f) => `/v1/forms/${f}/webhook`).sort());
    // wrk stops on its clock, so the server may have seen a few answers wrk did not wait for.
    const s = r.statuses;
    expect(Object.keys(s).sort()).toEqual(["200", "302", "500"]);
    expect(s["200"] + s["302"] + s["500"]).toBe(r.requests);
    expect(r.errors).toBe(s["302"] + s["500"]);
    expect(r.requests).toBeLessThanOrEqual(bodies.length);
    expect(r.requests).toBeGreaterThanOrEqual(bodies.length - 4);
  });

  test("a paced run never goes past its rate (how close it comes is the machine's: scripts/bench/ measures)", async () => {
    const r = await runWrk(`http://127.0.0.1:${server.port}`, ["a"], { concurrency: 8, seconds: 2, offset: 0, threads: 2, rate: 100 });
    expect(r.errors).toBe(0);
    expect(r.requests).toBeGreaterThan(0);
    // Against the run's own measured length (wrk's clock), not the 2 s asked for: a loaded machine
    // stretches the run, and a schedule that holds its rate stays within it whatever the load.
    expect(r.requests).toBeLessThanOrEqual(Math.ceil(100 * r.seconds) + 6);
  });
});
