import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { expectStatus, formBody, startTestServer, tempDir } from "../../helpers/server";
import { cliIO } from "../../helpers/cli-io";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));


function freshDir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

async function createAccount(db: string, name: string, extra: string[] = []) {
  const a = cliIO();
  expect(await runCli(["accounts", "create", "--name", name, "--json", "--db", db, ...extra], a.cli)).toBe(0);
  return JSON.parse(a.out[0]) as { accountId: string; apiKey: string };
}

async function listed(db: string, id: string) {
  const l = cliIO();
  await runCli(["accounts", "list", "--json", "--db", db], l.cli);
  return JSON.parse(l.out[0]).find((r: any) => r.accountId === id);
}

describe("accounts update", () => {
  test("changes only the settings given; none clears a limit; --json shows the result", async () => {
    const db = join(freshDir(), "t.db");
    const { accountId } = await createAccount(db, "Shop", ["--monthly-quota", "100", "--api-limit-per-hour", "2000"]);
    const u = cliIO();
    expect(await runCli(["accounts", "update", accountId, "--plan", "pro", "--monthly-quota", "5000", "--json", "--db", db], u.cli)).toBe(0);
    expect(JSON.parse(u.out[0])).toMatchObject({ accountId, name: "Shop", plan: "pro", monthlyQuota: 5000, apiLimitPerHour: 2000, apiBurstPerMinute: null });
    expect(await listed(db, accountId)).toMatchObject({ name: "Shop", plan: "pro", monthlyQuota: 5000, apiLimitPerHour: 2000 });

    const h = cliIO();
    expect(await runCli(["accounts", "update", accountId, "--name", " Shop Two ", "--api-limit-per-hour", "none", "--api-burst-per-minute", "20", "--monthly-quota", "none", "--db", db], h.cli)).toBe(0);
    expect(h.out[0]).toContain("updated");
    expect(await listed(db, accountId)).toMatchObject({ name: "Shop Two", plan: "pro", monthlyQuota: null, apiLimitPerHour: null, apiBurstPerMinute: 20 });
  });

  test("--default-country: an ISO code (any case) is stored upper-case; none goes back to US; a bad one is refused", async () => {
    const db = join(freshDir(), "t.db");
    const { accountId } = await createAccount(db, "Shop");
    expect(await listed(db, accountId)).toMatchObject({ defaultCountry: "US" });
    expect(await runCli(["accounts", "update", accountId, "--default-country", "gb", "--db", db], cliIO().cli)).toBe(0);
    expect(await listed(db, accountId)).toMatchObject({ defaultCountry: "GB" }); // as stored: the list shows the stored code
    for (const bad of ["XX", "usa", "1", ""]) {
      const r = cliIO();
      expect(await runCli(["accounts", "update", accountId, `--default-country=${bad}`, "--db", db], r.cli)).toBe(2);
    }
    expect(await listed(db, accountId)).toMatchObject({ defaultCountry: "GB" });
    expect(await runCli(["accounts", "update", accountId, "--default-country", "none", "--db", db], cliIO().cli)).toBe(0);
    expect(await listed(db, accountId)).toMatchObject({ defaultCountry: "US" });
  });

  test("usage errors exit 2 and change nothing; an unknown id exits 1", async () => {
    const db = join(freshDir(), "t.db");
    const { accountId } = await createAccount(db, "Keep", ["--monthly-quota", "7"]);
    for (const argv of [
      ["accounts", "update"],
      ["accounts", "update", accountId],
      ["accounts", "update", accountId, "--plan", "gold"],
      ["accounts", "update", accountId, "--monthly-quota", "lots"],
      ["accounts", "update", accountId, "--api-limit-per-hour", "0"],
      ["accounts", "update", accountId, "--name", "  "],
      ["accounts", "update", accountId, "--color", "red"],
    ]) {
      const r = cliIO();
      expect(await runCli([...argv, "--db", db], r.cli)).toBe(2);
      expect(r.err.join("\n").length).toBeGreaterThan(0);
    }
    expect(await listed(db, accountId)).toMatchObject({ name: "Keep", plan: "standard", monthlyQuota: 7 });
    const r = cliIO();
    expect(await runCli(["accounts", "update", "no-such-id", "--plan", "pro", "--db", db], r.cli)).toBe(1);
    expect(r.err[0]).toContain("no account with id no-such-id");
  });

  test("the 429 quota answer names the command in its details (plain words in its message), and raising the quota with it works on a running server", async () => {
    const s = await startTestServer();
    try {
      const up = cliIO();
      expect(await runCli(["accounts", "update", s.accountId, "--monthly-quota", "1", "--db", s.dbPath], up.cli)).toBe(0);
      const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
      const submit = (phone: string) =>
        fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone }) });
      await expectStatus(await submit("+14155550111"), 200);
      const refused = await expectStatus(await submit("+14155550112"), 429);
      expect(refused.code).toBe("QUOTA_EXCEEDED");
      // The visitor reads plain words; the operator's command stays in details.
      expect(refused.message).toBe("This form cannot send any more text messages this month.");
      expect(refused.details.action).toContain(`textwire accounts update ${s.accountId} --monthly-quota`);
      expect(await runCli(["accounts", "update", s.accountId, "--monthly-quota", "10", "--db", s.dbPath], cliIO().cli)).toBe(0);
      await expectStatus(await submit("+14155550112"), 200);
    } finally {
      await s.stop();
    }
  });
});

describe("accounts delete", () => {
  test("without --confirm it says what would go and deletes nothing; with it, the account and all its data go, others stay", async () => {
    const d = freshDir();
    const s = await startTestServer({}, { dir: d });
    const db = s.dbPath;
    let other: { accountId: string; apiKey: string };
    try {
      const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
      for (const phone of ["+14155550121", "+14155550122"]) {
        await expectStatus(await fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone }) }), 200);
      }
      other = await createAccount(db, "Other shop");
      await expectStatus(await s.api("/forms", { method: "POST", json: formBody(), key: other.apiKey }), 201);
      // Refused while the server holds the database.
      const busy = cliIO();
      expect(await runCli(["accounts", "delete", s.accountId, "--confirm", "--db", db], busy.cli)).toBe(1);
      expect(busy.err[0]).toContain("stop it first");
    } finally {
      await s.stop();
    }

    const dry = cliIO();
    expect(await runCli(["accounts", "delete", s.accountId, "--db", db], dry.cli)).toBe(2);
    const said = dry.err.join("\n");
    expect(said).toContain("without --confirm");
    expect(said).toContain("1 form(s)");
    expect(said).toContain("2 contact(s)");
    expect(said).toContain("2 message(s)");
    expect(said).toContain(`textwire accounts delete ${s.accountId} --confirm`);
    expect(await listed(db, s.accountId)).toBeDefined();

    const del = cliIO();
    expect(await runCli(["accounts", "delete", s.accountId, "--confirm", "--json", "--db", db], del.cli)).toBe(0);
    expect(JSON.parse(del.out[0])).toEqual({ deleted: true, accountId: s.accountId, forms: 1, contacts: 2, messages: 2, activeKeys: 1 });
    // (No row of it is left in any table: test/db/account-delete-rows.test.ts reads the file for that.)
    expect(await listed(db, s.accountId)).toBeUndefined();

    // The deleted account's key no longer works; the other account's does.
    const again = await startTestServer({ db }, { dir: d });
    try {
      expect((await again.api("/forms", { key: s.adminKey })).status).toBe(401);
      // The other account keeps its form.
      expect((await expectStatus(await again.api("/forms", { key: other!.apiKey }), 200)).data.forms).toHaveLength(1);
    } finally {
      await again.stop();
    }
    const gone = cliIO();
    expect(await runCli(["accounts", "delete", s.accountId, "--confirm", "--db", db], gone.cli)).toBe(1);
    expect(gone.err[0]).toContain("no account with id");
  }, 30_000);
});
