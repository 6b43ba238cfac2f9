/**
 * People as the dashboard makes them: the owner through the setup link, others invited by her, each
 * with a session (cookie + CSRF token) used the way the browser uses it. Shared by the tests of
 * setup, invitations and sessions (test/api/people.test.ts, test/db/invitations-hostile-bodies.test.ts)
 * and by the scenario helper's callers (test/helpers/scenario.ts).
 */
import { expect } from "bun:test";
import { expectStatus, type TestServer } from "./server";

/** The owner every setup here makes. */
export const OWNER = { name: "Olga Owner", email: "olga@shop.example", password: "blue-bicycle-42" };

/** A JSON POST with no credential but the headers given. */
export function postJson(ts: TestServer, path: string, json: unknown, headers: Record<string, string> = {}) {
  return fetch(`${ts.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(json) });
}

/** fetch with only a session cookie and its CSRF token (what the dashboard sends). */
export function browser(ts: TestServer, s: { cookie: string; csrf: string }) {
  return (path: string, init: { method?: string; json?: unknown } = {}) =>
    fetch(`${ts.base}${path}`, {
      method: init.method ?? "GET",
      headers: { Cookie: s.cookie, "X-CSRF-Token": s.csrf, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
}

/** The session (cookie + CSRF) a 201 sign-in, setup or invitation answer opened. */
export async function sessionOf(res: Response) {
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const body = await expectStatus(res, 201);
  return { cookie, csrf: body.data.csrfToken as string, data: body.data };
}

/**
 * A new setup link, as the server prints it in its log for the operator (the one thing the API
 * cannot hand out); null once a person exists. Each call replaces the last link.
 */
export function setupLink(ts: TestServer): { token: string; expiresAt: string } | null {
  return ts.running.deps.setup.newLink();
}

/** The first owner, through the setup link (OWNER, unless `over` says otherwise). */
export async function setupOwner(ts: TestServer, over: Record<string, unknown> = {}) {
  const link = setupLink(ts)!;
  return sessionOf(await postJson(ts, "/setup", { token: link.token, businessName: "Rosa's Bakery", country: "us", timeZone: "America/Chicago", ...OWNER, ...over }));
}

let invited = 0;
/** The owner invites `role` (a fresh address unless given); the invitation's token. */
export async function invite(ts: TestServer, owner: { cookie: string; csrf: string }, role: string, email = `invited${++invited}@shop.example`) {
  const body = await expectStatus(await browser(ts, owner)("/invitations", { method: "POST", json: { role, email } }), 201);
  expect(body.data.email).toBe(email.toLowerCase());
  return (body.data.url as string).split("#")[1]!;
}
