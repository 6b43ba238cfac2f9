import { expect } from "bun:test";
import type { Change } from "../../src/lib/changes";
import { expectStatus, type TestServer } from "./server";
import { postJson, sessionOf, setupLink } from "./people";

/** The setup link as the operator gets it (test/helpers/people.ts). */
export { setupLink };

/**
 * API scenarios in the spirit of PocketBase's `ApiScenario`: who calls (a role), the request
 * (method, path, body), and what must come back — the status, a partial match of the answer, and
 * the change announcements the server made (src/lib/changes.ts: what the dashboard's live feed,
 * the queue watcher and the phones' event streams hear). A test states a table of these and runs
 * them; the assertions go through HTTP only, the announcements are read in-process because they
 * are the server's own typed signal (docs/api-decisions.md, "The house, round two: tests through
 * the API").
 */

/** The people and keys a request can come from: a person's dashboard session, an API key, nobody. */
export const SESSION_ROLES = ["owner", "admin", "staff", "viewer"] as const;
export const KEY_ROLES = ["operator key", "admin key", "standard key"] as const;
export type SessionRole = (typeof SESSION_ROLES)[number];
export type KeyRole = (typeof KEY_ROLES)[number];
export type Caller = SessionRole | KeyRole | "signed out";
export const CALLERS: readonly Caller[] = [...SESSION_ROLES, ...KEY_ROLES, "signed out"];

interface Session {
  cookie: string;
  csrf: string;
}

export interface Callers {
  /** The headers a request from this caller carries (the session's cookie and CSRF token, or the key). */
  headers(who: Caller): Record<string, string>;
  /** Signs a person in again (after a scenario that signs them out). */
  refresh(who: SessionRole): Promise<void>;
  sessions: Record<SessionRole, Session>;
  keys: Record<KeyRole, string>;
}

const PASSWORD = "green-teapot-77";

/**
 * One caller of each kind on the server's first account, made the way people make them: the owner
 * through the setup link, the others invited by her and joining through their links, the keys
 * created through POST /v1/api-keys. The setup link is the one thing the API cannot hand out (the
 * server prints it in its log): it is asked of the running server.
 */
export async function makeCallers(ts: TestServer): Promise<Callers> {
  const emails: Record<SessionRole, string> = { owner: "olga@shop.example", admin: "ada@shop.example", staff: "sam@shop.example", viewer: "vic@shop.example" };
  const link = setupLink(ts);
  if (!link) throw new Error("the server offers no setup link (a person already exists)");
  const owner = await sessionOf(await postJson(ts, "/setup", { token: link.token, businessName: "Rosa's Bakery", country: "us", timeZone: "America/Chicago", name: "Olga Owner", email: emails.owner, password: PASSWORD }));
  const sessions = { owner: owner as Session } as Record<SessionRole, Session>;
  for (const role of ["admin", "staff", "viewer"] as const) {
    const invited = await expectStatus(await postJson(ts, "/invitations", { role, email: emails[role] }, { Cookie: owner.cookie, "X-CSRF-Token": owner.csrf }), 201);
    const token = (invited.data.url as string).split("#")[1]!;
    sessions[role] = await sessionOf(await postJson(ts, "/invitations/accept", { token, name: `${role} person`, password: PASSWORD }));
  }
  const newKey = async (permission: string) => (await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission } }), 201)).data.apiKey as string;
  const keys: Record<KeyRole, string> = { "operator key": ts.adminKey, "admin key": await newKey("admin_access"), "standard key": await newKey("standard_access") };
  return {
    sessions,
    keys,
    headers(who): Record<string, string> {
      if (who === "signed out") return {};
      if ((KEY_ROLES as readonly string[]).includes(who)) return { Authorization: `Bearer ${keys[who as KeyRole]}` };
      const s = sessions[who as SessionRole];
      return { Cookie: s.cookie, "X-CSRF-Token": s.csrf };
    },
    async refresh(who) {
      sessions[who] = await sessionOf(await postJson(ts, "/session", { email: emails[who], password: PASSWORD }));
    },
  };
}

/** A change announcement as a scenario names it: "message.queued", "contact.created", "device.asked-for-work". */
export type EventName = `${Change["kind"]}.${string}`;

export interface Scenario {
  /** What the table calls it; defaults to "who METHOD path". */
  name?: string;
  as: Caller;
  method?: string;
  /** Under the server's root ("/v1/forms", "/api/mobile/v1/message", "/health"). */
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** The expected status, or a check of it (a route reached by a caller it lets in may answer 400 to a made-up body). */
  status: number | ((status: number) => boolean);
  /** A partial match of the JSON answer (toMatchObject). */
  content?: Record<string, unknown>;
  /** Texts the raw answer must not contain. */
  notContent?: string[];
  /**
   * The announcements of the caller's account the request made, with their counts, exactly
   * (none when `{}`); left out, announcements are not checked.
   */
  events?: Partial<Record<EventName, number>>;
}

export interface ScenarioResult {
  status: number;
  body: any;
  text: string;
  events: Record<string, number>;
}

/** How long announcements made after the answer (the intake applies a submission after its 200) are waited for. */
const EVENTS_WAIT_MS = 2000;

/** Runs one scenario against the server and asserts what it expects; returns what came back. */
export async function runScenario(ts: TestServer, callers: Callers | null, sc: Scenario): Promise<ScenarioResult> {
  const label = sc.name ?? `${sc.as} ${sc.method ?? "GET"} ${sc.path}`;
  const heard: Record<string, number> = {};
  const off = (["message", "contact", "device"] as const).map((kind) =>
    ts.running.deps.changes.on(kind, (c: Change) => {
      if (c.accountId !== ts.accountId) return;
      const name = `${c.kind}.${c.what}`;
      heard[name] = (heard[name] ?? 0) + 1;
    }),
  );
  try {
    const headers: Record<string, string> = { ...(callers && sc.as !== "signed out" ? callers.headers(sc.as) : {}), ...sc.headers };
    if (sc.body !== undefined) headers["Content-Type"] ??= "application/json";
    const res = await fetch(`${ts.url}${sc.path}`, { method: sc.method ?? "GET", headers, body: sc.body === undefined ? undefined : JSON.stringify(sc.body), redirect: "manual" });
    // A live stream (text/event-stream) never ends: its first bytes are enough.
    const text = (res.headers.get("content-type") ?? "").includes("event-stream") ? await firstChunk(res) : await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {}
    const statusOk = typeof sc.status === "number" ? res.status === sc.status : sc.status(res.status);
    if (!statusOk) throw new Error(`${label}: unexpected HTTP ${res.status}${typeof sc.status === "number" ? ` (expected ${sc.status})` : ""}: ${text.slice(0, 600)}`);
    if (sc.content) {
      try {
        expect(body).toMatchObject(sc.content);
      } catch (err) {
        throw new Error(`${label}: the answer does not match: ${text.slice(0, 600)}\n${(err as Error).message}`);
      }
    }
    for (const t of sc.notContent ?? []) if (text.includes(t)) throw new Error(`${label}: the answer contains ${JSON.stringify(t)}`);
    if (sc.events) {
      const expected = Object.fromEntries(Object.entries(sc.events).filter(([, n]) => n));
      const deadline = Date.now() + EVENTS_WAIT_MS;
      const reached = () => Object.entries(expected).every(([k, n]) => (heard[k] ?? 0) >= (n as number));
      while (!reached() && Date.now() < deadline) await Bun.sleep(10);
      // One more turn: an announcement beyond the expected ones shows up here.
      await Bun.sleep(20);
      if (JSON.stringify(sorted(heard)) !== JSON.stringify(sorted(expected))) {
        throw new Error(`${label}: announced ${JSON.stringify(sorted(heard))}, expected ${JSON.stringify(sorted(expected))}`);
      }
    }
    return { status: res.status, body, text, events: { ...heard } };
  } finally {
    for (const o of off) o();
  }
}

/** Runs a table in order (a scenario may need what an earlier one made). */
export async function runScenarios(ts: TestServer, callers: Callers | null, table: readonly Scenario[]): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  for (const sc of table) out.push(await runScenario(ts, callers, sc));
  return out;
}

const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

/** The first bytes of a stream, or nothing when none come within a second (a stream may open silent). */
async function firstChunk(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  try {
    const first = await Promise.race([reader.read(), Bun.sleep(1000).then(() => null)]);
    return first?.value ? new TextDecoder().decode(first.value) : "";
  } finally {
    await reader.cancel().catch(() => {});
  }
}
