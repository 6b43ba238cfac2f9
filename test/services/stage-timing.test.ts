/**
 * The stage timer (src/lib/stage-timing.ts) on a running server, read inside: with --stage-timing
 * off none is built, so nothing is kept; no answer shows a timer that does not exist. The figures
 * /metrics shows (or does not) are test/api/ops/stage-timing.test.ts's.
 */
import { describe, expect, test } from "bun:test";
import { createForm, expectStatus, postWebhook, withServer } from "../helpers/server";

describe("--stage-timing", () => {
  test("off by default: no timer is built, so a submission keeps nothing", async () => {
    await withServer(async (s) => {
      expect(s.running.deps.stageTiming).toBeNull();
      await expectStatus(await postWebhook(s, await createForm(s), { phoneNumber: "+14155550200", firstName: "Ann" }), 200);
      expect(s.running.deps.stageTiming).toBeNull();
    });
  });
});
