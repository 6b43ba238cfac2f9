import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { tempDir } from "../../helpers/server";
import { cliIO } from "../../helpers/cli-io";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));


function freshDb(): string {
  const d = tempDir();
  dirs.push(d);
  return join(d, "nested", "textwire.db");
}

const KEY_RE = /^txwire_sk_[A-Za-z0-9]{40}$/;

describe("accounts", () => {
  test("create --json prints accountId, keyId, apiKey, permission on one line", async () => {
    const db = freshDb();
    const { cli, out } = cliIO();
    expect(await runCli(["accounts", "create", "--name", "Acme", "--plan", "pro", "--json", "--db", db], cli)).toBe(0);
    expect(out.length).toBe(1);
    const r = JSON.parse(out[0]);
    expect(Object.keys(r).sort()).toEqual(["accountId", "apiKey", "keyId", "permission"]);
    expect(r.apiKey).toMatch(KEY_RE);
    expect(r.permission).toBe("admin_access");
  });

  test("list --json shows plan and limits; TEXTWIRE_DB is honoured", async () => {
    const db = freshDb();
    await runCli(["accounts", "create", "--name", "One", "--monthly-quota", "500", "--api-limit-per-hour", "2000"], cliIO({ TEXTWIRE_DB: db }).cli);
    const { cli, out } = cliIO({ TEXTWIRE_DB: db });
    expect(await runCli(["accounts", "list", "--json"], cli)).toBe(0);
    const rows = JSON.parse(out[0]);
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ name: "One", plan: "standard", monthlyQuota: 500, apiLimitPerHour: 2000, activeKeys: 1 });
  });

  test("human output of list is a table", async () => {
    const db = freshDb();
    await runCli(["accounts", "create", "--name", "Table Co", "--db", db], cliIO().cli);
    const { cli, out } = cliIO();
    await runCli(["accounts", "list", "--db", db], cli);
    expect(out[0]).toMatch(/^id\s+name\s+plan/);
    expect(out.join("\n")).toContain("Table Co");
  });

  test("usage errors exit 2 with a message", async () => {
    const db = freshDb();
    for (const argv of [["accounts", "create"], ["accounts", "create", "--name", "x", "--plan", "gold"], ["accounts", "frobnicate"], ["accounts", "create", "--name", "x", "--monthly-quota", "lots"]]) {
      const { cli, err } = cliIO();
      expect(await runCli([...argv, "--db", db], cli)).toBe(2);
      expect(err.join("\n").length).toBeGreaterThan(0);
    }
  });
});

describe("keys", () => {
  test("create, list (never the whole key), revoke", async () => {
    const db = freshDb();
    const a = cliIO();
    await runCli(["accounts", "create", "--name", "K", "--json", "--db", db], a.cli);
    const { accountId, apiKey: adminKey } = JSON.parse(a.out[0]);

    const c = cliIO();
    expect(await runCli(["keys", "create", "--account", accountId, "--permission", "standard", "--json", "--db", db], c.cli)).toBe(0);
    const k = JSON.parse(c.out[0]);
    expect(Object.keys(k).sort()).toEqual(["apiKey", "keyId", "operator", "permission"]);
    expect(k.permission).toBe("standard_access");
    expect(k.apiKey).toMatch(KEY_RE);

    const l = cliIO();
    await runCli(["keys", "list", "--account", accountId, "--json", "--db", db], l.cli);
    const keys = JSON.parse(l.out[0]);
    expect(keys.length).toBe(2);
    expect(l.out[0]).not.toContain(k.apiKey);
    expect(l.out[0]).not.toContain(adminKey);
    const listed = keys.find((x: any) => x.keyId === k.keyId);
    expect(listed.key).toBe(`txwire_sk_…${k.apiKey.slice(-4)}`);
    expect(listed).toHaveProperty("lastUsedAt");
    expect(listed.revokedAt).toBeNull();

    expect(await runCli(["keys", "revoke", k.keyId, "--db", db], cliIO().cli)).toBe(0);
    const l2 = cliIO();
    await runCli(["keys", "list", "--account", accountId, "--json", "--db", db], l2.cli);
    expect(JSON.parse(l2.out[0]).find((x: any) => x.keyId === k.keyId).revokedAt).not.toBeNull();
    // Revoking twice, or an unknown id, is an error.
    expect(await runCli(["keys", "revoke", k.keyId, "--db", db], cliIO().cli)).toBe(1);
    expect(await runCli(["keys", "create", "--account", "nope", "--db", db], cliIO().cli)).toBe(1);
  });

  test("create --operator makes an operator (admin) key, shown in the list; --operator with --permission standard is refused", async () => {
    const db = freshDb();
    const a = cliIO();
    await runCli(["accounts", "create", "--name", "Ops", "--json", "--db", db], a.cli);
    const { accountId } = JSON.parse(a.out[0]);
    const c = cliIO();
    expect(await runCli(["keys", "create", "--account", accountId, "--operator", "--json", "--db", db], c.cli)).toBe(0);
    const k = JSON.parse(c.out[0]);
    expect(k).toMatchObject({ permission: "admin_access", operator: true });
    const l = cliIO();
    await runCli(["keys", "list", "--account", accountId, "--json", "--db", db], l.cli);
    const keys = JSON.parse(l.out[0]);
    expect(keys.find((x: any) => x.keyId === k.keyId).operator).toBe(true);
    // An account created by the CLI is a tenant: its first admin key is not an operator key.
    expect(keys.filter((x: any) => x.operator).length).toBe(1);
    expect(await runCli(["keys", "create", "--account", accountId, "--operator", "--permission", "standard", "--db", db], cliIO().cli)).toBe(2);
  });
});

describe("migrate, help, version", () => {
  test("migrate --json reports applied migrations, then nothing", async () => {
    const db = freshDb();
    const a = cliIO();
    expect(await runCli(["migrate", "--json", "--db", db], a.cli)).toBe(0);
    const first = JSON.parse(a.out[0]);
    expect(first.applied.length).toBeGreaterThan(0);
    const b = cliIO();
    await runCli(["migrate", "--json", "--db", db], b.cli);
    expect(JSON.parse(b.out[0])).toEqual({ applied: [], schemaVersion: first.schemaVersion, pageSizeFrom: null });
  });

  test("--version and --help", async () => {
    const v = cliIO();
    expect(await runCli(["--version"], v.cli)).toBe(0);
    expect(v.out[0]).toMatch(/^textwire \d+\.\d+\.\d+ \(schema \d+\)$/);
    const vj = cliIO();
    await runCli(["--version", "--json"], vj.cli);
    expect(JSON.parse(vj.out[0])).toHaveProperty("schemaVersion");
    for (const cmd of ["serve", "accounts", "keys", "migrate"]) {
      const h = cliIO();
      expect(await runCli([cmd, "--help"], h.cli)).toBe(0);
      expect(h.out.join("\n")).toContain("Usage");
    }
    const serveHelp = cliIO();
    await runCli(["serve", "--help"], serveHelp.cli);
    for (const flag of ["--port", "--host", "--public-url", "--tls-cert", "--tls-key", "--redirect-port", "--trust-proxy", "--webhook-limit-per-minute", "--send-rate-per-minute", "--log-format", "TEXTWIRE_PORT"]) {
      expect(serveHelp.out.join("\n")).toContain(flag);
    }
  });

  test("unknown command and unknown serve option are refused", async () => {
    const u = cliIO();
    expect(await runCli(["frobnicate"], u.cli)).toBe(2);
    const o = cliIO();
    expect(await runCli(["serve", "--no-such-flag", "1", "--db", freshDb()], o.cli)).toBe(2);
    expect(o.err.join("\n")).toContain("--no-such-flag");
    const bad = cliIO();
    expect(await runCli(["serve", "--port", "http", "--db", freshDb()], bad.cli)).toBe(2);
  });
});

describe("serve as a process", () => {
  test("an empty database: each start prints one setup address (a new one each time) and no key; once set up, the dashboard line", async () => {
    const db = freshDb();
    const start = async () => {
      const proc = Bun.spawn(["./node_modules/.bin/bun", "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--db", db], {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, TEXTWIRE_LOG_FORMAT: "json" },
      });
      const reader = proc.stdout.getReader();
      let text = "";
      const deadline = Date.now() + 20_000;
      while (!/(Set up Textwire|Dashboard:).*\n/.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      return { proc, text };
    };
    const first = await start();
    let token = "";
    try {
      expect(first.text).not.toContain("txwire_sk_");
      const lines = first.text.split("\n").filter((l) => l.includes("/setup#"));
      expect(lines.length).toBe(1);
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/setup#([A-Za-z0-9_-]{43})$/.exec(lines[0]!)!;
      expect(m).not.toBeNull();
      token = m[2]!;
      expect((await fetch(`${m[1]}/setup`)).status).toBe(200);
    } finally {
      first.proc.kill("SIGTERM");
      expect(await first.proc.exited).toBe(0);
    }
    const second = await start();
    try {
      const m = /(http:\/\/\S+)\/setup#(\S+)/.exec(second.text)!;
      expect(m[2]).not.toBe(token);
      const post = (t: string) =>
        fetch(`${m[1]}/v1/setup`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ token: t, businessName: "Shop", name: "Owner", email: "owner@shop.example", password: "long-enough-pw" }),
        });
      expect((await post(token)).status).toBe(401);
      expect((await post(m[2]!)).status).toBe(201);
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
    const third = await start();
    try {
      expect(third.text).not.toContain("/setup#");
      expect(third.text).toContain("Dashboard: http://127.0.0.1:");
    } finally {
      third.proc.kill("SIGTERM");
      await third.proc.exited;
    }
  }, 60_000);
});
