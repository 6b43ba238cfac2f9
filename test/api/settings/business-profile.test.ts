import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../../helpers/server";
import { messagesToPhone, newApiKey } from "../../helpers/reads";
import { newAccount } from "../../helpers/accounts";

let s: TestServer;
let standardKey: string;
beforeAll(async () => {
  s = await startTestServer();
  standardKey = await newApiKey(s, "standard_access");
});
afterAll(() => s.stop());

let seq = 2000;
const newPhone = () => `+1415555${seq++}`;
const inbound = (from: string, body: string) =>
  fetch(`${s.base}/messages/${standardKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body }) });
/** The newest text to the number, as GET /v1/messages shows it (the reply to what it sent). */
const replyTo = async (phone: string) => (await messagesToPhone(s, phone)).at(-1)?.content as string | undefined;

describe("the business's name in replies", () => {
  test("a first start's placeholder name is never sent: until a name is set, replies say \"this number\"", async () => {
    const p = (await expectStatus(await s.api("/account/profile"), 200)).data;
    expect(p).toMatchObject({ name: "Default account", nameSet: false, country: "US", timeZone: null });
    expect(p.preview.helpReply).toBe("this number: texts about your requests. Reply STOP to unsubscribe, START to resubscribe.");
    expect(p.replies.helpReply).toContain("{{accountName}}");
    const phone = newPhone();
    await expectStatus(await inbound(phone, "HELP"), 201);
    expect(await replyTo(phone)).toBe("this number: texts about your requests. Reply STOP to unsubscribe, START to resubscribe.");
    expect(await replyTo(phone)).not.toContain("Default account");
    // The keyword settings' preview says the same.
    expect((await expectStatus(await s.api("/account/settings"), 200)).data.preview.optOutReply).toBe("You're unsubscribed from this number. Reply START to resubscribe.");
  });

  test("the HELP reply carries the business name once it is saved in Settings; country and time zone are kept", async () => {
    const b = await expectStatus(await s.api("/account/profile", { method: "PUT", json: { name: "  Rosa's   Bakery ", country: "gb", timeZone: "europe/london" } }), 200);
    expect(b.data).toMatchObject({ name: "Rosa's Bakery", nameSet: true, country: "GB", timeZone: "Europe/London" });
    expect(b.data.preview.optInReply).toBe("You're resubscribed to Rosa's Bakery. Reply STOP to unsubscribe.");
    const phone = newPhone();
    await expectStatus(await inbound(phone, "help"), 201);
    expect(await replyTo(phone)).toBe("Rosa's Bakery: texts about your requests. Reply STOP to unsubscribe, START to resubscribe.");
    const stop = newPhone();
    await expectStatus(await inbound(stop, "STOP"), 201);
    expect(await replyTo(stop)).toBe("You're unsubscribed from Rosa's Bakery. Reply START to resubscribe.");
    // The country is the account's home country (how numbers without +code are read).
    expect((await expectStatus(await s.api("/account/profile"), 200)).data).toMatchObject({ country: "GB", timeZone: "Europe/London" });
  });

  test("an account created with a name (accounts create) uses it at once", async () => {
    const a = newAccount(s, { name: "Tiny Shop" });
    const profile = (await expectStatus(await s.api("/account/profile", { key: a.apiKey }), 200)).data;
    expect(profile).toMatchObject({ name: "Tiny Shop", nameSet: true });
    expect(profile.preview.helpReply).toStartWith("Tiny Shop:");
  });

  test("bad input: every field named in plain words, nothing changed", async () => {
    const before = (await expectStatus(await s.api("/account/profile"), 200)).data;
    for (const body of [
      { name: "", country: "US", timeZone: "UTC" },
      { name: "x".repeat(61), country: "US", timeZone: "UTC" },
      { name: "Shop\u0000", country: "US", timeZone: "UTC" },
      { name: "Shop", country: "XX", timeZone: "UTC" },
      { name: "Shop", country: "US", timeZone: "Mars/Base" },
      { name: "Shop", country: "US", timeZone: "+05:00" },
      { name: "Shop", country: "US", timeZone: "UTC", plan: "pro" },
      { name: 42, country: null, timeZone: [] },
      {},
    ]) {
      const e = await expectStatus(await s.api("/account/profile", { method: "PUT", json: body }), 400);
      expect(e.code).toBe("VALIDATION_ERROR");
      expect(e.details?.fields?.length ?? e.details?.errors?.length ?? 1).toBeGreaterThan(0);
    }
    const all = await expectStatus(await s.api("/account/profile", { method: "PUT", json: { name: 42, country: null, timeZone: [] } }), 400);
    expect(JSON.stringify(all)).toContain("business name");
    expect(JSON.stringify(all)).toContain("country");
    expect(JSON.stringify(all)).toContain("time zone");
    expect((await expectStatus(await s.api("/account/profile"), 200)).data).toEqual(before);
    await expectStatus(await s.api("/account/profile", { method: "PUT", body: "not json", headers: { "Content-Type": "application/json" } }), 400);
  });

  test("settings permissions: a standard key may neither read nor change the profile; each account sees its own", async () => {
    expect((await expectStatus(await s.api("/account/profile", { key: standardKey }), 403)).code).toBeDefined();
    await expectStatus(await s.api("/account/profile", { method: "PUT", key: standardKey, json: { name: "Hijack", country: "US", timeZone: "UTC" } }), 403);
    await expectStatus(await s.api("/account/profile", { key: null }), 401);
    const other = newAccount(s, { name: "Other Shop" });
    expect((await expectStatus(await s.api("/account/profile", { key: other.apiKey }), 200)).data.name).toBe("Other Shop");
    await expectStatus(await s.api("/account/profile", { method: "PUT", key: other.apiKey, json: { name: "Other Shop 2", country: "FR", timeZone: "Europe/Paris" } }), 200);
    expect((await expectStatus(await s.api("/account/profile"), 200)).data.name).toBe("Rosa's Bakery");
  });
});
