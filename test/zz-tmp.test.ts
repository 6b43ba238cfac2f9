import { test } from "bun:test";
import { startTestServer } from "/work/wt/harden-import/test/helpers/server";
test("t", async () => {
  const t = await startTestServer();
  const lines = ["phoneNumber,firstName,tags,customFields.bio"];
  for (let i = 0; i < 4000; i++) lines.push(`+1201557${String(i).padStart(4,"0")},Name${i},t1;t2,"line one, ""quoted""\nline two ${i} line one, ""quoted""\nline two"`);
  const t0 = performance.now();
  const r = await t.api("/contacts/import", { method: "POST", body: lines.join("\n"), headers: { "Content-Type": "text/csv" } });
  console.log(r.status, performance.now() - t0);
  await t.stop();
}, 30000);
