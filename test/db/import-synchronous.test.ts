/**
 * A contact import commits its slices with synchronous=NORMAL; the server's connection is back to
 * FULL afterwards, after an import that landed, one refused whole and one with refused rows.
 * Moved from the import's API tests: the subject is the connection's durability setting.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const postCsv = (csv: string) => s.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } });
const synchronous = () => s.running.deps.sqlite.query("PRAGMA synchronous").get();

test("the connection is back to synchronous=FULL after every kind of import", async () => {
  expect(synchronous()).toEqual({ synchronous: 2 });
  await expectStatus(await postCsv("phoneNumber,firstName\n+12015550801,Ann\n"), 200);
  expect(synchronous()).toEqual({ synchronous: 2 });
  await expectStatus(await postCsv("Phone,Name,First Name\n+12015550802,A B,C\n"), 400);
  expect(synchronous()).toEqual({ synchronous: 2 });
  const lines = ["phoneNumber,firstName"];
  for (let i = 0; i < 1500; i++) lines.push(`not a phone ${i},X`);
  lines.push("+12015550803,Good");
  expect((await expectStatus(await postCsv(lines.join("\n")), 200)).data.errorCount).toBe(1500);
  expect(synchronous()).toEqual({ synchronous: 2 });
});
