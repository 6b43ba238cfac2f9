import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultServeConfig, type ServeConfig } from "../../src/config";
import { startServer, type RunningServer } from "../../src/server";
import type { Clock } from "../../src/lib/clock";
import type { Logger } from "../../src/lib/log";
import type { OutboundOptions } from "../../src/deps";

export interface TestServer {
  url: string;
  base: string;
  adminKey: string;
  accountId: string;
  dbPath: string;
  dir: string;
  running: RunningServer;
  /** fetch relative to /v1 with the admin key unless headers say otherwise. */
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

export function tempDir(prefix = "textwire-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Starts the real server on a free port with a fresh temporary database file. */
/**
 * The account budget tests run with unless they ask for the real one (`sendingLimits: "real"`):
 * most tests hand many texts to one phone in a second, which a real budget paces over minutes
 * (docs/phones.md, "How fast a phone sends"). A phone's or SIM's own limits still apply.
 */
export const UNBOUNDED_SENDING_LIMITS = Object.freeze({
  partsPerMinute: 1_000_000, partsPerHour: 1_000_000, partsPerDay: 1_000_000, newRecipientsPerDay: 1_000_000, newRecipientsPerMonth: 1_000_000,
  spacingSeconds: Object.freeze({ min: 0, max: 0 }),
});

export async function startTestServer(
  overrides: Partial<ServeConfig> = {},
  opts: { clock?: Clock; dir?: string; logger?: Logger; outbound?: OutboundOptions; sendingLimits?: "real" | "unbounded" } = {},
): Promise<TestServer> {
  const dir = opts.dir ?? tempDir();
  const dbPath = overrides.db ?? join(dir, "textwire.db");
  let first: { accountId: string; apiKey: string } | undefined;
  const running = await startServer(defaultServeConfig({ port: 0, host: "127.0.0.1", ...overrides, db: dbPath }), {
    clock: opts.clock,
    logger: opts.logger,
    outbound: opts.outbound,
    onFirstKey: (k) => (first = k),
  });
  if (opts.sendingLimits !== "real") {
    const sending = running.deps.devices.sending;
    const own = sending.settingsOf;
    sending.settingsOf = (accountId) => ({ ...own(accountId), limits: { ...UNBOUNDED_SENDING_LIMITS, spacingSeconds: { min: 0, max: 0 } } });
  }
  // Tests read SQLite directly behind the API right after a webhook's 200: the same read barrier an
  // API request passes, taken synchronously, so they see what was acknowledged.
  const sqlite = running.deps.sqlite;
  const intake = running.deps.intake;
  Object.defineProperty(running.deps, "sqlite", {
    get() {
      intake.settleSync();
      return sqlite;
    },
    configurable: true,
  });
  const url = `http://127.0.0.1:${running.port}`;
  const ts: TestServer = {
    url,
    base: `${url}/v1`,
    adminKey: first?.apiKey ?? "",
    accountId: first?.accountId ?? "",
    dbPath,
    dir,
    running,
    api(path, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key === undefined ? ts.adminKey : init.key;
      if (key !== null && !headers.has("authorization")) headers.set("Authorization", `Bearer ${key}`);
      let body = init.body;
      if (init.json !== undefined) {
        body = JSON.stringify(init.json);
        if (!headers.has("content-type")) headers.set("Content-Type", "application/json");
      }
      return fetch(`${ts.base}${path}`, { ...init, headers, body });
    },
    async stop() {
      await running.stop();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return ts;
}

/** Reads the body and fails with it shown when the status is not the expected one. */
export async function expectStatus(res: Response, status: number): Promise<any> {
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  if (res.status !== status) {
    throw new Error(`expected HTTP ${status}, got ${res.status}: ${text.slice(0, 2000)}`);
  }
  return body;
}

/** A valid form body; override what a test is about. */
export function formBody(overrides: Record<string, unknown> = {}) {
  return {
    name: `Form ${crypto.randomUUID().slice(0, 8)}`,
    description: "Contact form",
    messageTemplate: "Hi {{firstName}}, thanks for contacting {{formName}}!",
    fields: [
      { name: "firstName", type: "text", required: false, label: "First name" },
      { name: "company", type: "text", label: "Company", validation: { maxLength: 100 } },
    ],
    settings: { delayMinutes: 0, timezone: "UTC" },
    ...overrides,
  };
}

/** A form made through the API from formBody(`overrides`), by the server's admin key; its id. */
export async function createForm(ts: TestServer, overrides: Record<string, unknown> = {}): Promise<string> {
  const body = await expectStatus(await ts.api("/forms", { method: "POST", json: formBody(overrides) }), 201);
  return body.data.form.id;
}

/** A visitor's submission to a form's webhook address (its id or token), as a website posts it. */
export function postWebhook(ts: TestServer, address: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${ts.base}/forms/${address}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

/** A fresh server for a test that needs an account to itself; always stopped. */
export async function withServer(fn: (t: TestServer) => Promise<void>, overrides: Partial<ServeConfig> = {}): Promise<void> {
  const t = await startTestServer(overrides);
  try {
    await fn(t);
  } finally {
    await t.stop();
  }
}
