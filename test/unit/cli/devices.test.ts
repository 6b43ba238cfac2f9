import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { tempDir } from "../../helpers/server";
import { cliIO } from "../../helpers/cli-io";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));


async function account() {
  const d = tempDir();
  dirs.push(d);
  const db = join(d, "t.db");
  const c = cliIO();
  expect(await runCli(["accounts", "create", "--name", "Shop", "--json", "--db", db], c.cli)).toBe(0);
  return { db, accountId: JSON.parse(c.out[0]).accountId as string };
}

describe("textwire devices token", () => {
  test("prints a token once and stores only its hash; --reusable and --hours are honoured", async () => {
    const { db, accountId } = await account();
    const c = cliIO();
    expect(await runCli(["devices", "token", "--account", accountId, "--reusable", "--hours", "2", "--json", "--db", db], c.cli)).toBe(0);
    const t = JSON.parse(c.out[0]);
    expect(t.token).toStartWith("txwire_reg_");
    expect(t.reusable).toBe(true);
    expect(Date.parse(t.expiresAt) - Date.now()).toBeGreaterThan(7_000_000);
    const sqlite = new Database(db);
    const rows = sqlite.query("SELECT token_hash, reusable FROM device_registration_tokens").all() as any[];
    sqlite.close();
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).not.toBe(t.token);
  });

  test("an unknown account, a bad --hours or a missing --account fail", async () => {
    const { db, accountId } = await account();
    const a = cliIO();
    expect(await runCli(["devices", "token", "--account", "nope", "--db", db], a.cli)).toBe(1);
    expect(a.err.join()).toContain("No account");
    const b = cliIO();
    expect(await runCli(["devices", "token", "--account", accountId, "--hours", "0", "--db", db], b.cli)).toBe(1);
    expect(b.err.join()).toContain("expiresInHours");
    expect(await runCli(["devices", "token", "--db", db], cliIO().cli)).not.toBe(0);
  });
});

describe("textwire accounts timezone", () => {
  test("sets the zone phones' zone-less times are read in; an unknown zone is refused", async () => {
    const { db, accountId } = await account();
    const c = cliIO();
    expect(await runCli(["accounts", "timezone", accountId, "europe/berlin", "--db", db], c.cli)).toBe(0);
    expect(c.out[0]).toContain("Europe/Berlin");
    const sqlite = new Database(db);
    expect((sqlite.query("SELECT time_zone FROM accounts").get() as any).time_zone).toBe("Europe/Berlin");
    sqlite.close();
    expect(await runCli(["accounts", "timezone", accountId, "Mars/Olympus", "--db", db], cliIO().cli)).not.toBe(0);
  });
});
