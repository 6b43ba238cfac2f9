/**
 * scripts/device-sim.ts against a real server: a simulated phone drains the queue. Moved from the
 * devices API tests: it spawns the simulator.
 */
import { describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../helpers/server";
import { insertContact, insertMessage } from "../../helpers/fixtures";
import { contactOf, listTotal, messageOf, newApiKey } from "../../helpers/reads";

const shown = async (s: TestServer, id: string) => (await messageOf(s, id))!;

describe("scripts/device-sim end to end", () => {
  test("a simulated phone drains the queue: every message ends sent or failed, reported once", async () => {
    const s = await startTestServer();
    try {
      const d = s.running.deps;
      const contactId = insertContact(d, s.accountId, { status: "new" });
      const ids = Array.from({ length: 12 }, (_, i) => insertMessage(d, s.accountId, { contactId, priority: i % 3 === 0 ? "urgent" : "normal" }));
      const key = await newApiKey(s, "standard_access");
      const proc = Bun.spawn(
        ["./node_modules/.bin/bun", "scripts/device-sim.ts", "--url", s.url, "--key", key, "--failure-rate", "0.3", "--interval", "50", "--count", "12", "--batch", "5", "--quiet"],
        { stdout: "pipe", stderr: "pipe" },
      );
      const code = await proc.exited;
      const out = await new Response(proc.stdout).text();
      expect(code).toBe(0);
      const tally = JSON.parse(out.trim().split("\n").pop()!);
      expect(tally.sent + tally.failed).toBe(12);
      expect(tally.conflicts + tally.errors).toBe(0);
      const rows = await Promise.all(ids.map((id) => shown(s, id)));
      expect(rows.every((r) => r.status === "sent" || r.status === "failed")).toBe(true);
      expect(rows.filter((r) => r.status === "sent").length).toBe(tally.sent);
      for (const r of rows.filter((r) => r.status === "failed")) expect(["invalid-phone", "rate-limit", "network-error"]).toContain(r.failureReason);
      expect(rows.some((r) => r.stage === "with-phone")).toBe(false);
      expect(await listTotal(s, "/messages?status=queued")).toBe(0);
      const c = (await contactOf(s, contactId))!;
      expect(c.messageCount).toBe(tally.sent);
      if (tally.sent > 0) expect(c.status).toBe("contacted");
    } finally {
      await s.stop();
    }
  });
});
