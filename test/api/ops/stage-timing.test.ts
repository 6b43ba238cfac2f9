import { describe, expect, test } from "bun:test";
import { createForm, expectStatus, postWebhook, withServer, type TestServer } from "../../helpers/server";
import { STAGES } from "../../../src/lib/stage-timing";

async function submitOnce(s: TestServer) {
  const formId = await createForm(s);
  for (let i = 0; i < 3; i++) await expectStatus(await postWebhook(s, formId, { phoneNumber: `+1415555020${i}`, firstName: "Ann" }), 200);
}
const metrics = async (s: TestServer) => (await s.api("/../metrics")).text();

describe("--stage-timing", () => {
  // That nothing is kept when it is off (no timer built) is read inside: test/services/stage-timing.test.ts.
  test("off by default: no stage figures", async () => {
    await withServer(async (s) => {
      await submitOnce(s);
      expect(await metrics(s)).not.toContain("textwire_stage_");
    });
  });

  test("on: every stage of an accepted submission is summed and shown in /metrics", async () => {
    await withServer(
      async (s) => {
        await submitOnce(s);
        const text = await metrics(s);
        expect(text).toContain("textwire_stage_requests_total 3");
        for (const stage of STAGES) {
          const m = new RegExp(`textwire_stage_microseconds_total\\{stage="${stage}"\\} (\\d+)`).exec(text);
          expect(m).not.toBeNull();
          // (The test server's logger is silent: its line can round to 0 µs.)
          if (stage !== "log") expect(Number(m![1])).toBeGreaterThan(0);
        }
      },
      { stageTiming: true },
    );
  });
});
