import { describe, expect, test } from "bun:test";
import { parseArgs } from "../../../src/config";
import { eventsCommand } from "../../../src/cli/events";
import { expectStatus, startTestServer } from "../../helpers/server";

describe("textwire events tail", () => {
  test("prints events written after it started, filtered by type; --json prints the body as sent", async () => {
    const ts = await startTestServer({ allowPrivateWebhookUrls: true });
    try {
      await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", json: { url: "https://10.9.9.9/h", events: ["contact.created", "contact.updated"] } }), 201);
      await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550150" } }), 201); // before: not shown
      const out: string[] = [];
      const err: string[] = [];
      const ctl = new AbortController();
      const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: {}, isTTY: false };
      const run = eventsCommand(parseArgs(["events", "tail", "--db", ts.dbPath, "--type", "contact.created", "--json", "--poll-ms", "20"], new Set(["json"])), io, { signal: ctl.signal });
      await Bun.sleep(100);
      const c = await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550151", firstName: "Tia" } }), 201);
      await expectStatus(await ts.api(`/contacts/${c.data.contact.id}`, { method: "PUT", json: { lastName: "Lo" } }), 200);
      const deadline = Date.now() + 5_000;
      while (out.length < 1 && Date.now() < deadline) await Bun.sleep(20);
      await Bun.sleep(100);
      ctl.abort();
      expect(await run).toBe(0);
      expect(out).toHaveLength(1);
      expect(JSON.parse(out[0])).toMatchObject({ type: "contact.created", data: { contact: { id: c.data.contact.id, firstName: "Tia" } } });
      expect(err[0]).toContain("Waiting for events");
    } finally {
      await ts.stop();
    }
  });

  test("a missing database or a wrong sub-command is refused", async () => {
    const io = { out: () => {}, err: (l: string) => errs.push(l), env: {}, isTTY: false };
    const errs: string[] = [];
    expect(await eventsCommand(parseArgs(["events", "tail", "--db", "/nonexistent/x.db"]), io)).toBe(1);
    expect(errs[0]).toContain("no database");
    await expect(eventsCommand(parseArgs(["events", "list"]), io)).rejects.toThrow("usage");
  });
});
