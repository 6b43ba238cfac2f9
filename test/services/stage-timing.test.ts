/**
 * The stage timer (src/lib/stage-timing.ts) on a running server, read inside: with --stage-timing
 * off none is built, so nothing is kept; no answer shows a timer that does not exist. The figures
 * /metrics shows (or does not) are test/api/ops/stage-timing.test.ts's.
 */
import { describe, expect, test } from "bun:test";
import { expectStatus, formBody, withServer, type TestServer } from "../helpers/server";

async function submitOnce(s: TestServer) {
  const form = await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${s.base}/forms/${form.data.form.id}/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ phoneNumber: `+1415555020${i}`, firstName: "Ann" }),
    });
    await expectStatus(res, 200);
  }
}
const metrics = async (s: TestServer) => (await s.api("/../metrics")).text();

describe("--stage-timing", () => {
  test("off by default: no stage figures, nothing kept", async () => {
    await withServer(async (s) => {
      expect(s.running.deps.stageTiming).toBeNull();
      await submitOnce(s);
      expect(await metrics(s)).not.toContain("textwire_stage_");
    });
  });
});
