/** Migration 0006 (public forms) on a database from before it: rows kept, new columns defaulted. */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { tempDir } from "../../helpers/server";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("submissions, idempotency keys and forms survive; message_id becomes nullable; the address stays the id", () => {
  const sqlite = openSqlite(join(dir, "t.db"));
  const before = EMBEDDED_MIGRATIONS.filter((m) => m.idx < 6);
  migrate(sqlite, before);
  const now = new Date().toISOString();
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?)", [now]);
  sqlite.run("INSERT INTO forms (id, account_id, name, name_key, message_template, fields, created_at, updated_at) VALUES ('f1', 'a1', 'F', 'f', 'hi', '[]', ?, ?)", [now, now]);
  sqlite.run("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES ('s1', 'a1', 'f1', 'c1', 'm1', 1, ?)", [now]);
  sqlite.run("INSERT INTO idempotency_keys (form_id, key, status, body, created_at) VALUES ('f1', 'k', 200, '{}', ?)", [now]);

  const { applied } = migrate(sqlite, EMBEDDED_MIGRATIONS);
  expect(applied).toContain("0006_public_form_protection");
  expect(sqlite.query("SELECT id, message_id, new_contact FROM submissions").all()).toEqual([{ id: "s1", message_id: "m1", new_contact: 1 }]);
  expect(sqlite.query("SELECT webhook_token, spam_blocked FROM forms").get()).toEqual({ webhook_token: null, spam_blocked: 0 });
  expect(sqlite.query("SELECT body_hash FROM idempotency_keys").get()).toEqual({ body_hash: null });
  sqlite.run("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES ('s2', 'a1', 'f1', 'c1', NULL, 0, ?)", [now]);
  const indexes = (sqlite.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('submissions', 'forms', 'messages')").all() as Array<{ name: string }>).map((r) => r.name);
  // (submissions_account_created_idx, rebuilt by 0006, went in 0024: nothing read it.)
  expect(indexes).toEqual(expect.arrayContaining(["submissions_form_created_idx", "forms_webhook_token_idx", "messages_account_recipient_created_idx"]));
  // Cascades still work after the rebuild.
  sqlite.run("DELETE FROM forms WHERE id = 'f1'");
  expect((sqlite.query("SELECT count(*) AS n FROM submissions").get() as { n: number }).n).toBe(0);
  sqlite.close();
});
