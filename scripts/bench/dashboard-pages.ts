#!/usr/bin/env bun
/**
 * The dashboard with years of data, in a real browser: a shop's year of 1,000,000 messages and
 * 100,000 contacts (scripts/bench/lib/shop-data.ts: forms, broadcasts, replies, tags, custom
 * fields) seeded straight into a fresh migrated database file, `textwire serve` on it as a child
 * process, Chromium (playwright-core + @sparticuz/chromium, as the browser tests) signed in, and
 * each page timed from the click that opens it to its data shown: a real row or figure visible
 * (for a filter, a search or page 2: the first row the API gives for it), not the empty frame.
 *
 *   bun scripts/bench/dashboard-pages.ts [--messages 1000000] [--contacts 100000] [--runs 20]
 *     [--db PATH] [--only "Messages,Contacts: search"] [--json PATH] [--trace]
 *
 * --db PATH seeds there once (with PATH.json for the key) and reuses it later; seeding takes a
 * few minutes. Each case runs once untimed (the first visit loads the page's code; printed as
 * "first"), then --runs times. --trace prints each API request of each case (p50/p95 of the
 * request as the browser saw it), to see which request a slow page waits for.
 * Target: every page under 1 s at p95 on a 2-core machine.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { AccountService } from "../../src/services/accounts";
import { seedShop, type ShopData } from "./lib/shop-data";
import { machineLine, readUntil, peakRssMb } from "./lib/proc";
import { DESKTOP, launchBrowser, openContext, signIn } from "../../test/browser/browser";

const args = process.argv.slice(2);
const flag = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
const MESSAGES = Number(flag("messages") ?? 1_000_000);
const CONTACTS = Number(flag("contacts") ?? 100_000);
const RUNS = Number(flag("runs") ?? 20);
const ONLY = flag("only")?.split(",").map((s) => s.trim());
const TRACE = args.includes("--trace");
const root = join(import.meta.dir, "..", "..");

console.log(machineLine());
const load0 = (await Bun.file("/proc/loadavg").text()).split(" ")[0];

// ---------------------------------------------------------------- the database
const keepDb = flag("db");
const dir = keepDb ? undefined : mkdtempSync(join(tmpdir(), "textwire-bench-pages-"));
const dbPath = keepDb ?? join(dir!, "bench.db");
const metaPath = `${dbPath}.json`;
type Meta = { apiKey: string; accountId: string; data: ShopData };
let meta: Meta;
if (keepDb && existsSync(dbPath) && existsSync(metaPath)) {
  meta = JSON.parse(readFileSync(metaPath, "utf8")) as Meta;
  console.log(`reusing ${dbPath}`);
} else {
  if (existsSync(dbPath)) throw new Error(`${dbPath} exists without ${metaPath}: remove it or name another file`);
  const t = performance.now();
  const db = openSqlite(dbPath);
  migrate(db);
  // An operator key, as the installer's: the Settings page then shows the server's sections too.
  // The dashboard spends the key's API limit; the bench clicks faster than a person.
  const made = new AccountService(db, Date.now).createAccount({ name: "Rosa's Bakery", plan: "enterprise", apiLimitPerHour: 1_000_000_000, apiBurstPerMinute: 1_000_000_000, operator: true });
  console.log(`seeding ${MESSAGES.toLocaleString("en-US")} messages and ${CONTACTS.toLocaleString("en-US")} contacts into ${dbPath}`);
  const data = seedShop(db, made.account.id, { messages: MESSAGES, contacts: CONTACTS, progress: (l) => console.log(l) });
  db.close();
  meta = { apiKey: made.apiKey, accountId: made.account.id, data };
  writeFileSync(metaPath, JSON.stringify(meta));
  console.log(`seeded in ${((performance.now() - t) / 1000).toFixed(1)} s (${(Bun.file(dbPath).size / 2 ** 20).toFixed(0)} MiB)`);
}

// ---------------------------------------------------------------- the server
const server = Bun.spawn([process.execPath, join(root, "src/main.ts"), "serve", "--db", dbPath, "--port", "0", "--host", "127.0.0.1", "--log-format", "json"], {
  stdout: "pipe",
  stderr: process.env.BENCH_VERBOSE ? "inherit" : "ignore",
  cwd: root,
});
// However the bench ends (a wait that times out included), the server goes with it.
process.on("exit", () => server.kill("SIGTERM"));
const port = (await readUntil(server.stdout, /Textwire listening on http:\/\/\S+:(\d+)/, 120_000))[1];
void (async () => {
  const r = server.stdout.getReader();
  while (!(await r.read()).done);
})().catch(() => {});
const base = `http://127.0.0.1:${port}`;
// Run from source, the server bundles the dashboard on the first request: not timed below.
await (await fetch(`${base}/`)).arrayBuffer();
async function api(path: string): Promise<any> {
  const res = await fetch(`${base}/v1${path}`, { headers: { Authorization: `Bearer ${meta.apiKey}` } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

// ---------------------------------------------------------------- the browser
const browser = await launchBrowser();
process.on("exit", () => void browser.close().catch(() => {}));
const context = await openContext(browser, DESKTOP);
context.setDefaultTimeout(60_000);
const page = await context.newPage();
const errors: string[] = [];
page.on("pageerror", (e) => errors.push(String(e)));
await signIn(page, base, meta.apiKey, "/overview");
await page.getByRole("table", { name: "Texts per day" }).locator("tbody tr").first().waitFor();

// Each request of the page as the browser timed it, for --trace.
const requests: Array<{ at: number; path: string; ms: number }> = [];
page.on("requestfinished", (req) => {
  const url = new URL(req.url());
  if (!url.pathname.startsWith("/v1/") && url.pathname !== "/health") return;
  const timing = req.timing();
  const shape = url.pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/g, ":id") + (url.search ? "?" + [...url.searchParams.keys()].join("&") : "");
  requests.push({ at: timing.startTime, path: `${req.method()} ${shape}`, ms: timing.responseEnd });
});

const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
const row = (attr: string, id: string) => page.locator(`main tr[${attr}="${id}"]`);
const firstMessage = async (q: string) => (await api(`/messages?limit=50${q}`)).data.messages[0].id as string;
const firstContact = async (q: string) => (await api(`/contacts?limit=50${q}`)).data.contacts[0].id as string;
/** Waits until the page's rows are exactly `ids`, in order. */
const listIs = async (attr: string, ids: string[]) => {
  await page.waitForFunction(
    ([a, want]) => {
      // Runs in the page (this file has no DOM types).
      const got = [...(globalThis as any).document.querySelectorAll(`main tr[${a}]`)].map((e: any) => e.getAttribute(a));
      return got.length === want.length && got.every((x, i) => x === want[i]);
    },
    [attr, ids] as const,
  );
};
/** Goes to `href` by its menu link and waits for `ready` (outside the timing: a starting point). */
async function via(name: string, ready: () => Locator) {
  await nav(name).click();
  await ready().first().waitFor();
}
const overviewReady = () => page.getByRole("table", { name: "Texts per day" }).locator("tbody tr");
const contactsReady = () => page.locator("main tr[data-contact-id]");
const messagesReady = () => page.locator("main tr[data-message-id]");
const conversationsReady = () => page.locator("main ul.conversations li");
const developersLink = () => page.getByRole("main").getByRole("link", { name: "Developers", exact: true });

interface Case {
  name: string;
  /** Brings the page to where the user starts; returns what the action must show. */
  setup: (run: number) => Promise<() => Locator | Promise<unknown>>;
  act: (run: number) => Promise<void>;
}
const SEARCHES = ["garcia", "201200", "maria.k", "okafor", "aisha", "2012055", "nguyen", "chen.b", "rossi", "20120999"];
let unfiltered = "";
const cases: Case[] = [
  {
    name: "Overview",
    setup: async () => (await via("Devices", () => page.locator("main tr", { hasText: "Shop phone" })), overviewReady),
    act: () => nav("Overview").click(),
  },
  {
    name: "Messages",
    setup: async () => {
      unfiltered ||= await firstMessage("");
      await via("Overview", overviewReady);
      return () => row("data-message-id", unfiltered);
    },
    act: () => nav("Messages").click(),
  },
  {
    name: "Messages: filter by status",
    setup: async () => {
      const id = await firstMessage("&status=failed");
      await via("Messages", () => row("data-message-id", unfiltered));
      return () => row("data-message-id", id);
    },
    act: async () => void (await page.getByLabel("Status", { exact: true }).selectOption("failed")),
  },
  {
    name: "Messages: page 2",
    setup: async () => {
      const id = await firstMessage("&page=2");
      await via("Messages", () => row("data-message-id", unfiltered));
      return () => row("data-message-id", id);
    },
    act: () => page.getByRole("navigation", { name: "Pages of messages" }).getByRole("button", { name: "Next page" }).click(),
  },
  {
    name: "Contacts",
    setup: async () => {
      const id = await firstContact("");
      await via("Overview", overviewReady);
      return () => row("data-contact-id", id);
    },
    act: () => nav("Contacts").click(),
  },
  {
    name: "Contacts: search",
    setup: async (run) => {
      const found = (await api(`/contacts?limit=50&search=${encodeURIComponent(SEARCHES[run % SEARCHES.length])}`)).data.contacts as Array<{ id: string }>;
      await via("Contacts", contactsReady);
      // The list of what was found, not page 1 still shown (it may begin with the same contact).
      return () => listIs("data-contact-id", found.map((c) => c.id));
    },
    // Includes the page's pause while typing (web/pages/contacts.tsx, SEARCH_DEBOUNCE_MS).
    act: (run) => page.getByLabel("Search", { exact: true }).fill(SEARCHES[run % SEARCHES.length]),
  },
  {
    name: "Contacts: page 2",
    setup: async () => {
      const id = await firstContact("&page=2");
      await via("Contacts", contactsReady);
      return () => row("data-contact-id", id);
    },
    act: () => page.getByRole("navigation", { name: "Pages of contacts" }).getByRole("button", { name: "Next page" }).click(),
  },
  {
    name: "A contact's page",
    setup: async () => (await via("Contacts", contactsReady), () => page.locator("main ol.timeline li").or(page.getByText("No messages yet."))),
    // A different contact each run: the older rows of page 1 have the longer histories.
    act: (run) => contactsReady().nth(10 + (run % 40)).getByRole("link").first().click(),
  },
  {
    name: "Conversations",
    setup: async () => (await via("Overview", overviewReady), conversationsReady),
    act: () => nav("Conversations").click(),
  },
  {
    name: "A conversation",
    setup: async () => (await via("Conversations", conversationsReady), () => page.locator("main ol.thread li")),
    act: (run) => conversationsReady().nth(run % 60).getByRole("link").first().click(),
  },
  {
    name: "Broadcasts",
    setup: async () => (await via("Overview", overviewReady), () => page.locator("main tr", { hasText: meta.data.broadcastNames.at(-1)! })),
    act: () => nav("Broadcasts").click(),
  },
  {
    name: "Forms",
    setup: async () => (await via("Overview", overviewReady), () => page.locator("main tr[data-form-id]")),
    act: () => nav("Forms").click(),
  },
  {
    name: "Devices",
    setup: async () => (await via("Overview", overviewReady), () => page.locator("main tr", { hasText: "Shop phone" })),
    act: () => nav("Devices").click(),
  },
  {
    // Settings is an index of its pages: the API keys are on Settings → Developers (docs/dashboard.md).
    name: "Settings",
    setup: async () => (await via("Overview", overviewReady), developersLink),
    act: () => nav("Settings").click(),
  },
  {
    name: "Settings: API keys",
    setup: async () => (await via("Settings", developersLink), () => page.locator("main tr[data-key-id]")),
    act: () => developersLink().click(),
  },
];

function pct(xs: number[], p: number) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}
interface Result {
  page: string;
  runs: number;
  firstMs: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  requests: Record<string, { n: number; p50Ms: number; p95Ms: number }>;
}
async function time(c: Case, run: number): Promise<{ ms: number; reqs: typeof requests }> {
  const target = await c.setup(run);
  // Let the starting page's own requests finish before the clock starts.
  await page.waitForLoadState("networkidle").catch(() => {});
  const from = requests.length;
  const t = performance.now();
  await c.act(run);
  const shown = target();
  await ("waitFor" in shown ? shown.first().waitFor({ state: "visible" }) : shown);
  const ms = performance.now() - t;
  await Bun.sleep(50);
  return { ms, reqs: requests.slice(from) };
}
const results: Result[] = [];
for (const c of cases) {
  if (ONLY && !ONLY.includes(c.name)) continue;
  const first = await time(c, RUNS);
  const samples: number[] = [];
  const perPath = new Map<string, number[]>();
  for (let i = 0; i < RUNS; i++) {
    const r = await time(c, i);
    samples.push(r.ms);
    for (const q of r.reqs) perPath.set(q.path, [...(perPath.get(q.path) ?? []), q.ms]);
  }
  const requestsOf = Object.fromEntries([...perPath].map(([k, v]) => [k, { n: v.length, p50Ms: pct(v, 50), p95Ms: pct(v, 95) }]));
  results.push({ page: c.name, runs: RUNS, firstMs: first.ms, p50Ms: pct(samples, 50), p95Ms: pct(samples, 95), maxMs: Math.max(...samples), requests: requestsOf });
  const r = results.at(-1)!;
  console.log(`  ${c.name}: p50 ${r.p50Ms.toFixed(0)} ms, p95 ${r.p95Ms.toFixed(0)} ms`);
}
const serverPeakMb = peakRssMb(server.pid);
await browser.close();
server.kill("SIGTERM");
await server.exited;
const load1 = (await Bun.file("/proc/loadavg").text()).split(" ")[0];

// ---------------------------------------------------------------- report
const d = meta.data;
console.log(
  `data: ${d.messages.toLocaleString("en-US")} messages, ${d.contacts.toLocaleString("en-US")} contacts, ${d.inbound.toLocaleString("en-US")} replies, ${d.formNames.length} forms, ${d.broadcastNames.length} broadcasts over a year; ` +
    `${RUNS} runs per page, Chromium 1280 px, server from source; load ${load0} → ${load1}; server peak RSS ${serverPeakMb.toFixed(0)} MB`,
);
const w = Math.max(...results.map((r) => r.page.length), 4);
console.log(`${"page".padEnd(w)}  ${"first".padStart(7)}  ${"p50".padStart(7)}  ${"p95".padStart(7)}  ${"max".padStart(7)}  (ms, click → data shown)`);
for (const r of results) {
  console.log(`${r.page.padEnd(w)}  ${r.firstMs.toFixed(0).padStart(7)}  ${r.p50Ms.toFixed(0).padStart(7)}  ${r.p95Ms.toFixed(0).padStart(7)}  ${r.maxMs.toFixed(0).padStart(7)}${r.p95Ms >= 1000 ? "  over 1 s" : ""}`);
  if (TRACE) for (const [k, v] of Object.entries(r.requests)) console.log(`${"".padEnd(w)}    ${k}  ×${v.n}  p50 ${v.p50Ms.toFixed(0)}  p95 ${v.p95Ms.toFixed(0)}`);
}
const worst = results.reduce((a, b) => (b.p95Ms > a.p95Ms ? b : a), results[0]);
console.log(`target: every page under 1 s at p95 — ${results.every((r) => r.p95Ms < 1000) ? "met" : "NOT met"} (worst: ${worst?.page} ${worst?.p95Ms.toFixed(0)} ms)`);
if (errors.length) console.log(`page errors: ${errors.join(" | ")}`);
const json = JSON.stringify({ machine: machineLine(), load: [load0, load1], data: { messages: d.messages, contacts: d.contacts, inbound: d.inbound }, runs: RUNS, serverPeakMb, results }, null, 2);
const jsonPath = flag("json");
if (jsonPath) writeFileSync(jsonPath, json);
else console.log(json);
if (dir) rmSync(dir, { recursive: true, force: true });
