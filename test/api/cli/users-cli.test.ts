import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { expectStatus, startTestServer, tempDir } from "../../helpers/server";
import { cliIO } from "../../helpers/cli-io";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));


function freshDb(): string {
  const d = tempDir();
  dirs.push(d);
  return join(d, "textwire.db");
}

async function createAccount(db: string): Promise<string> {
  const { cli, out } = cliIO();
  expect(await runCli(["accounts", "create", "--name", "Shop", "--json", "--db", db], cli)).toBe(0);
  return JSON.parse(out[0]!).accountId;
}

describe("textwire users and setup-link", () => {
  test("setup-link prints a one-time address until someone is set up; a new one replaces the last", async () => {
    const db = freshDb();
    const a = cliIO({ TEXTWIRE_PUBLIC_URL: "https://sms.example.com/" });
    expect(await runCli(["setup-link", "--db", db], a.cli)).toBe(0);
    expect(a.out[0]).toMatch(/^https:\/\/sms\.example\.com\/setup#[A-Za-z0-9_-]{43}$/);
    const b = cliIO();
    expect(await runCli(["setup-link", "--port", "9090", "--db", db], b.cli)).toBe(0);
    expect(b.out[0]).toMatch(/^http:\/\/localhost:9090\/setup#/);
    const accountId = await createAccount(db);
    expect(await runCli(["users", "add", "--account", accountId, "--email", "Owner@Shop.example", "--role", "owner", "--db", db], cliIO().cli)).toBe(0);
    const c = cliIO();
    expect(await runCli(["setup-link", "--db", db], c.cli)).toBe(1);
    expect(c.err[0]).toContain("already set up");
  });

  test("add prints a password once; list shows people; bad input is a usage error that changes nothing", async () => {
    const db = freshDb();
    const accountId = await createAccount(db);
    const added = cliIO();
    expect(await runCli(["users", "add", "--account", accountId, "--email", "sam@shop.example", "--role", "staff", "--name", "Sam", "--json", "--db", db], added.cli)).toBe(0);
    const p = JSON.parse(added.out[0]!);
    expect(p).toMatchObject({ name: "Sam", email: "sam@shop.example", role: "staff" });
    expect(p.password).toMatch(/^[A-Za-z0-9]{16}$/);
    const bad = cliIO();
    expect(await runCli(["users", "add", "--account", accountId, "--email", "x@shop.example", "--role", "boss", "--db", db], bad.cli)).not.toBe(0);
    expect(bad.err.join("\n")).toContain("--role must be one of owner, admin, staff, viewer");
    const dup = cliIO();
    expect(await runCli(["users", "add", "--account", accountId, "--email", "SAM@shop.example", "--role", "viewer", "--db", db], dup.cli)).toBe(1);
    expect(dup.err[0]).toContain("already signs in");
    const noAccount = cliIO();
    expect(await runCli(["users", "add", "--account", "nope", "--email", "y@shop.example", "--role", "viewer", "--db", db], noAccount.cli)).toBe(1);
    const list = cliIO();
    expect(await runCli(["users", "list", "--account", accountId, "--json", "--db", db], list.cli)).toBe(0);
    expect(JSON.parse(list.out[0]!).map((u: { email: string }) => u.email)).toEqual(["sam@shop.example"]);
    expect(list.out[0]).not.toContain("password");
  });

  test("reset-password prints a new password that signs in, the old one stops, and their sessions end", async () => {
    const ts = await startTestServer();
    try {
      const db = ts.dbPath;
      const added = cliIO();
      expect(await runCli(["users", "add", "--account", ts.accountId, "--email", "rosa@shop.example", "--role", "owner", "--json", "--db", db], added.cli)).toBe(0);
      const first = JSON.parse(added.out[0]!).password;
      const signIn = (password: string) => fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: "rosa@shop.example", password }) });
      const res = await signIn(first);
      const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
      await expectStatus(res, 201);
      const reset = cliIO();
      expect(await runCli(["users", "reset-password", "ROSA@shop.example", "--db", db], reset.cli)).toBe(0);
      const second = /\(shown once\): (\S+)/.exec(reset.out[0]!)![1]!;
      expect(reset.out[1]).toContain("1 session(s) ended");
      expect((await fetch(`${ts.base}/session`, { headers: { Cookie: cookie } })).status).toBe(401);
      expect((await signIn(first)).status).toBe(401);
      await expectStatus(await signIn(second), 201);
      const unknown = cliIO();
      expect(await runCli(["users", "reset-password", "ghost@shop.example", "--db", db], unknown.cli)).toBe(1);
      expect(unknown.err[0]).toContain("Nobody signs in with ghost@shop.example");
    } finally {
      await ts.stop();
    }
  });
});
