/**
 * API keys, session tokens and phone registration tokens are stored only as hashes (docs/api-decisions.md):
 * neither a whole one nor a part of one is anywhere in the database file or its write-ahead log. Moved from the authentication API
 * tests: the subject is the file at rest, which no request can show.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";

let s: TestServer;
let standardKey: string;
let registration: string;
let session: string;
beforeAll(async () => {
  s = await startTestServer();
  standardKey = (await expectStatus(await s.api("/api-keys", { method: "POST", json: { permission: "standard_access" } }), 201)).data.apiKey;
  registration = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  // A dashboard session, signed in with the key: its cookie's token.
  const signedIn = await fetch(`${s.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: s.adminKey }) });
  await expectStatus(signedIn, 201);
  session = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!.split("=")[1]!;
});
afterAll(() => s.stop());

test("keys, sessions and registration tokens are stored only as hashes: none, whole or in part, in the database file or its WAL", () => {
  const bytes = [s.dbPath, `${s.dbPath}-wal`].filter(existsSync).map((p) => readFileSync(p).toString("latin1")).join("");
  expect(bytes.length).toBeGreaterThan(0);
  expect(session.length).toBeGreaterThan(20);
  for (const key of [s.adminKey, standardKey, registration, session]) {
    expect(bytes).not.toContain(key);
    expect(bytes).not.toContain(key.slice(10, 30));
  }
});
