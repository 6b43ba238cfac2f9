/**
 * `textwire accounts delete` leaves no row of the account in any table that has an account_id
 * column, whoever added the table; another account's rows stay. Moved from the CLI's API test:
 * the subject is what is left in the file, which no request can show.
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { runCli } from "../../src/main";
import { expectStatus, formBody, startTestServer, tempDir } from "../helpers/server";
import { cliIO } from "../helpers/cli-io";
import { newAccount } from "../helpers/accounts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("accounts delete empties every table of the account's rows and keeps the other account's", async () => {
  const s = await startTestServer({}, { dir });
  const db = s.dbPath;
  let other: { account: { id: string }; apiKey: string };
  try {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    for (const phone of ["+14155550121", "+14155550122"]) {
      await expectStatus(await fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone }) }), 200);
    }
    other = newAccount(s, { name: "Other shop" });
    await expectStatus(await s.api("/forms", { method: "POST", json: formBody(), key: other.apiKey }), 201);
  } finally {
    await s.stop();
  }
  const del = cliIO();
  expect(await runCli(["accounts", "delete", s.accountId, "--confirm", "--json", "--db", db], del.cli)).toBe(0);
  const sqlite = new Database(db, { readonly: true });
  try {
    // Every table that has an account_id column, whoever added it.
    const tables = (sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%account_id%'").all() as Array<{ name: string }>).map((r) => r.name);
    expect(tables).toContain("messages");
    for (const table of tables) {
      expect([table, (sqlite.query(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`).get(s.accountId) as { n: number }).n]).toEqual([table, 0]);
    }
    expect((sqlite.query("SELECT count(*) AS n FROM forms WHERE account_id = ?").get(other!.account.id) as { n: number }).n).toBe(1);
  } finally {
    sqlite.close();
  }
}, 30_000);
