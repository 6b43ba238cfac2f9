/**
 * Browser tests' helpers: a real server process on a temporary database, and a headless Chromium
 * that an npm package ships (@sparticuz/chromium unpacks it from the package: no download at
 * install time) driven by playwright-core. axe-core is run in every page the tests visit.
 */
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type BrowserContext, type Page } from "playwright-core";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/server";

const ROOT = join(import.meta.dir, "../..");
/** Screenshots of every page for review (gitignored). */
export const SCREENS_DIR = join(ROOT, "test-output/screens");

export interface ServerProcess {
  url: string;
  /** The setup address serve printed (an empty database: `startServerProcess([], { empty: true })`). */
  setupUrl?: string;
  adminKey: string;
  accountId: string;
  dbPath: string;
  /** fetch relative to /v1 with the admin key (or `key`). */
  api(path: string, init?: { method?: string; json?: unknown; key?: string }): Promise<any>;
  stop(): Promise<void>;
}

/** `textwire serve` as a separate process (bun src/main.ts serve), as `npm start` runs it. */
export async function startServerProcess(extraArgs: string[] = [], opts: { empty?: boolean } = {}): Promise<ServerProcess> {
  const dir = tempDir("textwire-web-");
  const dbPath = join(dir, "textwire.db");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TEXTWIRE_") && v !== undefined) env[k] = v;
  // A headless install: the account and its key come from the command line (serve prints a setup
  // link instead); dashboard requests spend the signed-in key's API limit (100 a minute by
  // default), and a test clicks through every page within seconds, so the account gets room.
  let created = { accountId: "", apiKey: "" };
  if (!opts.empty) {
    const create = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "accounts", "create", "--name", "Test shop", "--api-burst-per-minute", "2000", "--json", "--db", dbPath], {
      cwd: dir,
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    if ((await create.exited) !== 0) throw new Error("accounts create failed: " + (await new Response(create.stderr).text()));
    created = JSON.parse(await new Response(create.stdout).text()) as { accountId: string; apiKey: string };
    // The installer's key, as the first start used to print: an operator key (backups, /metrics).
    const key = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "keys", "create", "--account", created.accountId, "--operator", "--json", "--db", dbPath], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    if ((await key.exited) !== 0) throw new Error("keys create failed: " + (await new Response(key.stderr).text()));
    created.apiKey = (JSON.parse(await new Response(key.stdout).text()) as { apiKey: string }).apiKey;
  }
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbPath, "--log-format", "json", ...extraArgs], {
    cwd: dir,
    env,
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/Textwire listening on http:\/\/\S+:(\d+)/.test(out) || (opts.empty && !/\/setup#\S+\n/.test(out))) {
    const { done, value } = await reader.read();
    if (done) throw new Error("server exited: " + out);
    out += new TextDecoder().decode(value);
  }
  // Keep draining stdout (the access log) so the process never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  const url = `http://127.0.0.1:${/Textwire listening on http:\/\/\S+:(\d+)/.exec(out)![1]}`;
  const adminKey = created.apiKey;
  const accountId = created.accountId;
  const setupUrl = /(http:\/\/\S+\/setup#\S+)/.exec(out)?.[1];
  return {
    url,
    setupUrl,
    adminKey,
    accountId,
    dbPath,
    async api(path, init = {}) {
      const res = await fetch(`${url}/v1${path}`, {
        method: init.method ?? "GET",
        headers: { Authorization: `Bearer ${init.key ?? adminKey}`, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}) },
        body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromium.executablePath();
  // --single-process (meant for AWS Lambda) crashes the browser when a second context opens.
  return playwright.launch({ executablePath, args: chromium.args.filter((a) => a !== "--single-process"), headless: true });
}

/** Errors the page logged (a CSP violation is one): the tests expect none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    // A request the app expects to fail (401 before sign-in, a refused action) is the app's to show.
    if (m.type() === "error" && !/status of (401|403|404|409|400)/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return errors;
}

const AXE_SOURCE = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. Evaluated through the
 * DevTools protocol, which the page's CSP does not apply to (the app itself runs under it).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.evaluate(AXE_SOURCE);
  return (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) })))`)) as AxeViolation[];
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENS_DIR, `${name}.png`), fullPage: true });
}

/** Fails the test with axe's serious and critical findings on `page`, naming `what` was checked. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const violations = await seriousViolations(page);
  if (violations.length) throw new Error(`${what}: axe found ${JSON.stringify(violations, null, 2)}`);
}

/** Opens `then` on the server (the sign-in page comes first) and signs in with `key`. */
export async function signIn(page: Page, baseUrl: string, key: string, then: string): Promise<void> {
  await page.goto(`${baseUrl}${then}`);
  await page.getByRole("link", { name: "Sign in with an API key" }).click();
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

type ContextOptions = NonNullable<Parameters<Browser["newContext"]>[0]>;
/** The tests' two screens. */
export const DESKTOP: ContextOptions = { viewport: { width: 1280, height: 800 }, locale: "en-US" };
export const PHONE: ContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: "en-US", colorScheme: "dark" };

/**
 * A browser context for `screen` (plus `extra`), whose waits give up after 10 s — well inside the
 * tests' own time limits, so a miss is reported as what it waited for.
 */
export async function openContext(browser: Browser, screen: ContextOptions, extra: ContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ ...screen, ...extra });
  context.setDefaultTimeout(10_000);
  return context;
}

/**
 * What sticks out sideways on `page`: the document wider than the screen, or a table scroller
 * (.table-wrap) hiding columns to the right. Empty when the page fits; else a line per offender
 * (with the widest elements named) for the failure message.
 */
export async function sidewaysOverflow(page: Page, width: number): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const width = Math.min(window.innerWidth, ${width});
    const out = [];
    const doc = document.documentElement.scrollWidth;
    if (doc > width) {
      out.push("document " + doc + " px wide on a " + width + " px screen");
      // The outermost elements that stick out (their parent fits), else the widest ones.
      const all = [...document.querySelectorAll("body *")].filter((e) => !e.closest("thead, .visually-hidden") && e.getBoundingClientRect().right > width + 1);
      const outer = all.filter((e) => e.parentElement && e.parentElement.getBoundingClientRect().right <= width + 1);
      const wide = (outer.length ? outer : all.sort((a, b) => a.getBoundingClientRect().width - b.getBoundingClientRect().width))
        .slice(0, 6)
        .map((e) => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ").join(".") : "") + " → " + Math.round(e.getBoundingClientRect().right));
      out.push(...wide);
      // Text that does not wrap overflows its box without widening it.
      const spill = [...document.querySelectorAll("main *")]
        .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === "visible" && !e.closest("thead, .visually-hidden"))
        .slice(-4)
        .map((e) => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ").join(".") : "") + " holds " + e.scrollWidth + " px in " + e.clientWidth + " px");
      out.push(...spill);
    }
    for (const w of document.querySelectorAll(".table-wrap")) {
      if (w.scrollWidth > w.clientWidth + 1) out.push("a table scrolls sideways inside its box: " + w.scrollWidth + " px in " + w.clientWidth + " px (" + (w.querySelector("table")?.className || "table") + ")");
    }
    return out;
  })()`)) as string[];
}
