/** The applier's batches and rows in /metrics (rows per batch is what its cost per row depends on). */
import { describe, expect, test } from "bun:test";
import { expectStatus, formBody, withServer } from "../../helpers/server";

describe("/metrics: the applier's batches and rows", () => {
  test("count what the applier thread applied", async () => {
    await withServer(async (s) => {
      const form = await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201);
      const counters = async () => {
        const text = await (await s.api("/../metrics")).text();
        const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
        return { batches: read("textwire_intake_applier_batches_total"), rows: read("textwire_intake_applier_rows_total") };
      };
      expect(await counters()).toEqual({ batches: 0, rows: 0 });
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${s.base}/forms/${form.data.form.id}/webhook`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ phoneNumber: `+1415555030${i}`, firstName: "Ann" }),
        });
        await expectStatus(res, 200);
      }
      // An API read waits for the applier to pass the three (the read barrier).
      await expectStatus(await s.api("/messages"), 200);
      const after = await counters();
      expect(after.rows).toBe(3);
      expect(after.batches).toBeGreaterThanOrEqual(1);
      expect(after.batches).toBeLessThanOrEqual(3);
    });
  });
});
