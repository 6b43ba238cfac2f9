/**
 * The webhook benches' load from `wrk` (a C load generator: `apt-get install wrk` on
 * Debian/Ubuntu), so the figures measure the server and not a JS client sharing its two cores
 * (docs/api-decisions.md, "Benchmarks take their load from wrk").
 *
 * A Lua script, written to a temp file per run, POSTs the same bodies as scripts/bench/lib/load.ts
 * (scripts/bench/lib/bodies.ts: about half new numbers, half one this thread already sent) to the
 * forms' webhook addresses in turn. Its done() prints the exact latency percentiles (wrk's own
 * summary rounds them) and the status-code counts as one JSON line, which is parsed into the
 * JS generator's result shape. A paced run (`rate`) gives each wrk thread an absolute schedule of
 * send times, read from a monotonic clock through LuaJIT's ffi, and delay() waits for each slot.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { AREAS } from "./phones";
import { EMAIL_NAMES, FIRST_NAMES, LAST_NAMES } from "./bodies";
import type { LoadResult } from "./proc";

export interface WrkRun {
  concurrency: number;
  seconds: number;
  /** The first phone-number index of this run (the previous run's nextOffset). */
  offset: number;
  /** wrk threads; by default one per core, at most one per connection. */
  threads?: number;
  /** Requests per second in all, paced; absent or 0: as fast as the connections allow. */
  rate?: number;
}

/** The wrk on PATH, or null when it is not installed. */
export function wrkPath(): string | null {
  return Bun.which("wrk");
}

/** "wrk 4.1.0"-like: what `wrk -v` says about itself (it prints its banner and exits 1). */
export function wrkVersion(path: string): string {
  const p = Bun.spawnSync([path, "-v"], { stdout: "pipe", stderr: "pipe" });
  const text = p.stdout.toString() + p.stderr.toString();
  return /^wrk \S+/m.exec(text)?.[0] ?? "wrk";
}

export function wrkThreads(o: Pick<WrkRun, "concurrency" | "threads">): number {
  return Math.max(1, Math.min(o.threads ?? cpus().length, o.concurrency));
}

const lua = (s: string) => JSON.stringify(s); // the names are plain text: a JSON string is a valid Lua string
const luaList = (xs: Array<string | number>) => `{${xs.map((x) => (typeof x === "number" ? String(x) : lua(x))).join(", ")}}`;

/** The Lua script for one run: `forms`' webhook paths, numbers from `offset` on, spread over `threads`. */
export function wrkScript(forms: string[], o: { offset: number; threads: number; rate?: number }): string {
  const paths = forms.map((id) => `/v1/forms/${id}/webhook`);
  const intervalMs = o.rate ? (o.threads * 1000) / o.rate : 0;
  return `-- Written by scripts/bench/lib/wrk.ts for one run; see that file.
local PATHS = ${luaList(paths)}
local OFFSET = ${o.offset}
local THREADS = ${o.threads}
local INTERVAL_MS = ${intervalMs}
local AREAS = ${luaList(AREAS)}
local FIRST = ${luaList(FIRST_NAMES)}
local LAST = ${luaList(LAST_NAMES)}
local EMAIL = ${luaList(EMAIL_NAMES)}
local HEADERS = { ["Content-Type"] = "application/json" }

-- scripts/bench/lib/phones.ts phoneFor, and bodies.ts bodyFor: the same bytes.
local function phone_for(i)
  local area = AREAS[i % #AREAS + 1]
  local k = math.floor(i / #AREAS)
  local exch = 200 + (k % 700)
  if exch % 100 == 11 then exch = exch + 1 end
  local sub = math.floor(k / 700) % 10000
  return string.format("+1%d%d%04d", area, exch, sub)
end
local function body_for(i)
  return '{"phoneNumber":"' .. phone_for(i) .. '","firstName":"' .. FIRST[i % #FIRST + 1] .. '","lastName":"' .. LAST[i % #LAST + 1] ..
    '","email":"' .. EMAIL[i % #EMAIL + 1] .. '.' .. string.format("%d", i) .. '@example.com","company":"Company ' .. string.format("%d", i % 97) .. '"}'
end

-- In the main state: each thread gets its number; done() reads their counters back.
local threads = {}
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

-- In each thread's state. Thread t sends numbers OFFSET + t, OFFSET + t + THREADS, … (its own).
function init(args)
  fresh = 0
  sent = 0
  form_i = tid
  statuses = {}
  slot = 0
end

function request()
  local k
  if sent % 2 == 0 or fresh == 0 then
    k = fresh
    fresh = fresh + 1
  else
    k = math.random(0, fresh - 1)
  end
  sent = sent + 1
  form_i = form_i + 1
  return wrk.format("POST", PATHS[form_i % #PATHS + 1], HEADERS, body_for(OFFSET + tid + k * THREADS))
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

if INTERVAL_MS > 0 then
  local ffi = require("ffi")
  ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock, bench_timespec *tp);
  ]]
  local ts = ffi.new("bench_timespec")
  local function now_ms()
    ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
  -- Each request claims this thread's next slot; a late slot goes at once, so the rate holds.
  function delay()
    local now = now_ms()
    if not t0 then t0 = now end
    local wait = t0 + slot * INTERVAL_MS - now
    slot = slot + 1
    if wait <= 0 then return 0 end
    return math.floor(wait + 0.5)
  end
end

function done(summary, latency, requests)
  local counts, fresh_counts = {}, {}
  for _, t in ipairs(threads) do
    for code, n in pairs(t:get("statuses")) do counts[code] = (counts[code] or 0) + n end
    table.insert(fresh_counts, string.format("%d", t:get("fresh")))
  end
  local parts = {}
  for code, n in pairs(counts) do table.insert(parts, string.format('"%d":%d', code, n)) end
  local e = summary.errors
  io.write(string.format('\\nWRK_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,"statuses":{%s},' ..
    '"connect":%d,"read":%d,"write":%d,"timeout":%d,"fresh":[%s]}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max, table.concat(parts, ","),
    e.connect, e.read, e.write, e.timeout, table.concat(fresh_counts, ",")))
end
`;
}

/** What done() prints. */
interface WrkReport {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  statuses: Record<string, number>;
  connect: number;
  read: number;
  write: number;
  timeout: number;
  fresh: number[];
}

/**
 * wrk's output (its summary, then done()'s line) as the JS generator's result. Errors are every
 * answer outside 2xx plus the socket errors and time-outs (counted under status "-1", as the JS
 * generator counts a failed fetch); requests and req/s count the answers wrk received.
 */
export function parseWrkOutput(stdout: string, o: { offset: number; threads: number }): LoadResult {
  const line = /^WRK_RESULT (\{.*\})$/m.exec(stdout);
  if (!line) throw new Error(`wrk printed no result line:\n${stdout.slice(0, 2000)}`);
  const r = JSON.parse(line[1]) as WrkReport;
  const socket = r.connect + r.read + r.write + r.timeout;
  const statuses: Record<string, number> = { ...r.statuses };
  if (socket > 0) statuses["-1"] = socket;
  const non2xx = Object.entries(r.statuses).reduce((a, [code, n]) => a + (Number(code) >= 200 && Number(code) < 300 ? 0 : n), 0);
  const seconds = r.durationUs / 1e6;
  const ms = (us: number) => Math.round(us / 10) / 100;
  return {
    requests: r.requests,
    errors: non2xx + socket,
    seconds: Math.round(seconds * 100) / 100,
    rps: seconds > 0 ? Math.round(r.requests / seconds) : 0,
    p50Ms: ms(r.p50Us),
    p99Ms: ms(r.p99Us),
    maxMs: ms(r.maxUs),
    statuses,
    // Thread t used numbers offset + t + k·threads for k below its count: the next run starts past them all.
    nextOffset: o.offset + o.threads * Math.max(0, ...r.fresh),
  };
}

/** One wrk run against `base` (http://host:port) over `forms`' webhooks. */
export async function runWrk(base: string, forms: string[], o: WrkRun, path = wrkPath() ?? "wrk"): Promise<LoadResult> {
  const threads = wrkThreads(o);
  const dir = mkdtempSync(join(tmpdir(), "textwire-wrk-"));
  const script = join(dir, "load.lua");
  writeFileSync(script, wrkScript(forms, { offset: o.offset, threads, rate: o.rate }));
  try {
    // A request is never cut off (the JS generator waits for every answer too): a long time-out.
    const p = Bun.spawn([path, "-t", String(threads), "-c", String(o.concurrency), "-d", `${o.seconds}s`, "--timeout", "60s", "-s", script, base], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    const code = await p.exited;
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${(err || out).slice(0, 2000)}`);
    return parseWrkOutput(out, { offset: o.offset, threads });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
