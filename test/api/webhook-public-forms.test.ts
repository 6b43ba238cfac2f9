/**
 * Public forms that are safe to put on a website. Real server processes on temp
 * databases; every refusal is checked to write nothing (row counts before/after).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { listTotal, messageOf, newApiKey, raiseApiLimits } from "../helpers/reads";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

type Form = { id: string; webhookUrl: string; name: string; settings: Record<string, any> };

async function createForm(t: TestServer, overrides: Record<string, unknown> = {}): Promise<Form> {
  return (await expectStatus(await t.api("/forms", { method: "POST", json: formBody(overrides) }), 201)).data.form;
}

function post(url: string, body: Record<string, string>, headers: Record<string, string> = {}, json = true) {
  return fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": json ? "application/json" : "application/x-www-form-urlencoded", ...headers },
    body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
  });
}

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** What the account holds, as the API counts it: a refused post writes nothing, so nothing more is counted. */
async function totals(t: TestServer) {
  raiseApiLimits(t); // these reads run many requests a minute
  return { messages: await listTotal(t, "/messages"), contacts: await listTotal(t, "/contacts"), submissions: await listTotal(t, "/submissions") };
}

let phoneCounter = 2000;
/** The contact's custom fields as GET /v1/contacts/:id shows them. */
const customFieldsOf = async (t: TestServer, id: string) => (await expectStatus(await t.api(`/contacts/${id}`), 200)).data.contact.customFields;
const nextPhone = () => `+1415555${String(phoneCounter++).padStart(4, "0")}`;

describe("browser posts get pages, not JSON", () => {
  test("success: 303 to successUrl, and the browser lands on the owner's page", async () => {
    const site = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => new Response(`thanks page ${new URL(req.url).pathname}`) });
    try {
      const form = await createForm(s, { settings: { successUrl: `http://127.0.0.1:${site.port}/thanks`, errorUrl: `http://127.0.0.1:${site.port}/oops` } });
      const before = (await totals(s));
      const res = await post(form.webhookUrl, { phoneNumber: nextPhone(), firstName: "Ann" }, { Accept: BROWSER_ACCEPT }, false);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`http://127.0.0.1:${site.port}/thanks`);
      expect((await totals(s)).messages).toBe(before.messages + 1);
      // Followed as a browser does: a GET of the Location.
      const followed = await fetch(form.webhookUrl, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: BROWSER_ACCEPT },
        body: new URLSearchParams({ phoneNumber: nextPhone() }).toString(),
      });
      expect(followed.status).toBe(200);
      expect(followed.url).toBe(`http://127.0.0.1:${site.port}/thanks`);
      expect(await followed.text()).toBe("thanks page /thanks");
    } finally {
      site.stop(true);
    }
  });

  test("refusal: 303 to errorUrl with ?error=<CODE>&field=<name>; nothing written", async () => {
    const form = await createForm(s, { settings: { errorUrl: "https://shop.example/oops?lang=en" } });
    const before = (await totals(s));
    const res = await post(form.webhookUrl, { phoneNumber: "12" }, { Accept: BROWSER_ACCEPT }, false);
    expect(res.status).toBe(303);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe("https://shop.example/oops");
    expect(loc.searchParams.get("lang")).toBe("en");
    expect(loc.searchParams.get("error")).toBe("VALIDATION_ERROR");
    expect(loc.searchParams.get("field")).toBe("phoneNumber");
    expect((await totals(s))).toEqual(before);
  });

  test("without the settings: Textwire's own thank-you and error pages, with the form name and a link back", async () => {
    const form = await createForm(s, { name: "Bakery <Contact>" });
    const ok = await post(form.webhookUrl, { phoneNumber: nextPhone() }, { Accept: BROWSER_ACCEPT, Referer: "https://bakery.example/contact" }, false);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toStartWith("text/html");
    const page = await ok.text();
    expect(page).toContain("Bakery &lt;Contact&gt;");
    expect(page).toContain("Thank you");
    expect(page).toContain('href="https://bakery.example/contact"');
    expect(page).not.toMatch(/<script|src=|https:\/\/fonts/);

    const before = (await totals(s));
    const bad = await post(form.webhookUrl, { phoneNumber: "not a number" }, { Accept: BROWSER_ACCEPT, Referer: "https://bakery.example/contact" }, false);
    expect(bad.status).toBe(400);
    const errPage = await bad.text();
    expect(errPage).toContain("was not sent");
    // The visitor reads plain words, not the field's name (docs/api-decisions.md, "Plain words for visitors").
    expect(errPage).toContain("Please enter a mobile phone number.");
    expect(errPage).not.toContain("phoneNumber");
    expect(errPage).toContain('href="https://bakery.example/contact"');
    expect((await totals(s))).toEqual(before);
  });

  test("API clients keep JSON (Accept: application/json or none)", async () => {
    const form = await createForm(s, { settings: { successUrl: "https://shop.example/thanks" } });
    for (const accept of [undefined, "application/json", "application/json, text/html;q=0.5"]) {
      const res = await post(form.webhookUrl, { phoneNumber: nextPhone() }, accept ? { Accept: accept } : {});
      const body = await expectStatus(res, 200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(body.status).toBe("success");
    }
  });

  test("successUrl and errorUrl must be http(s) URLs", async () => {
    const res = await s.api("/forms", { method: "POST", json: formBody({ settings: { successUrl: "javascript:alert(1)", errorUrl: "/relative" } }) });
    const body = await expectStatus(res, 400);
    expect(body.errors.map((e: any) => e.field)).toEqual(["settings.successUrl", "settings.errorUrl"]);
  });
});

describe("honeypot (on by default: _gotcha)", () => {
  test("a filled honeypot is answered like a success and writes nothing; counted on /metrics and in stats", async () => {
    const form = await createForm(s);
    const before = (await totals(s));
    const res = await post(form.webhookUrl, { phoneNumber: nextPhone(), firstName: "Bot", _gotcha: "http://spam.example" });
    const body = await expectStatus(res, 200);
    expect(body.status).toBe("success");
    expect(body.data.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(Number.isInteger(body.data.queuePosition)).toBe(true);
    expect(typeof body.data.estimatedDelivery).toBe("string");
    expect((await totals(s))).toEqual(before);
    expect(await messageOf(s, body.data.messageId)).toBeNull();

    const browser = await post(form.webhookUrl, { phoneNumber: nextPhone(), _gotcha: "x" }, { Accept: BROWSER_ACCEPT }, false);
    expect(browser.status).toBe(200);
    expect(await browser.text()).toContain("Thank you");
    expect((await totals(s))).toEqual(before);

    const stats = await expectStatus(await s.api(`/forms/${form.id}/stats`), 200);
    expect(stats.data.stats.spamBlocked).toBe(2);
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).text();
    expect(metrics).toMatch(/^textwire_webhook_spam_total [1-9]\d*$/m);
  });

  test("an empty honeypot (what people send) is a normal submission and is not stored", async () => {
    const form = await createForm(s);
    const body = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), _gotcha: "" }, {}, false), 200);
    expect(await customFieldsOf(s, body.data.contactId)).toEqual({});
  });

  test("honeypotField: null turns it off; another name moves it; the spam count survives a restart", async () => {
    const off = await createForm(s, { settings: { honeypotField: null } });
    await expectStatus(await post(off.webhookUrl, { phoneNumber: nextPhone(), _gotcha: "kept" }), 200);
    expect((await expectStatus(await s.api("/contacts/search", { method: "POST", json: { customFields: { _gotcha: "kept" } } }), 200)).data.pagination.total).toBe(1);
    // Turned off by an update too (null is "off", not "back to the default").
    const later = await createForm(s);
    const put = await expectStatus(await s.api(`/forms/${later.id}`, { method: "PUT", json: { settings: { honeypotField: null } } }), 200);
    expect(put.data.form.settings.honeypotField).toBeNull();
    const n = (await totals(s)).messages;
    await expectStatus(await post(later.webhookUrl, { phoneNumber: nextPhone(), _gotcha: "a person's value" }), 200);
    expect((await totals(s)).messages).toBe(n + 1);
    const t = await startTestServer();
    try {
      const moved = await createForm(t, { settings: { honeypotField: "website" } });
      const before = (await totals(t));
      await expectStatus(await post(moved.webhookUrl, { phoneNumber: nextPhone(), website: "bot" }), 200);
      expect((await totals(t))).toEqual(before);
      await expectStatus(await post(moved.webhookUrl, { phoneNumber: nextPhone(), _gotcha: "not the trap here" }), 200);
      expect((await totals(t)).messages).toBe(before.messages + 1);
      await t.running.stop();
      const again = await startTestServer({ db: t.dbPath });
      try {
        // The first server's key is in the same database.
        const stats = await expectStatus(await again.api(`/forms/${moved.id}/stats`, { key: t.adminKey }), 200);
        expect(stats.data.stats.spamBlocked).toBe(1);
      } finally {
        await again.stop();
      }
    } finally {
      await t.stop().catch(() => {});
    }
  });
});

describe("links rule and value cap (on by default)", () => {
  test("a link in a value the template inserts is 400 naming the field; nothing written", async () => {
    const form = await createForm(s, { messageTemplate: "Hi {{firstName}}, about {{company}}: we'll call you." });
    const before = (await totals(s));
    for (const company of ["Verify now at http://evil.example/login", "evil.example/login", "see www.bank-secure.net", "my-bank.com"]) {
      const body = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), company }), 400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.details.field).toBe("company");
      expect(body.details.requirement).toBe("no links");
    }
    const first = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), firstName: "Your bank.", company: "Acme Inc." }), 200);
    expect(first.status).toBe("success");
    expect((await totals(s)).messages).toBe(before.messages + 1);
  });

  test("the issue's phishing text is refused through a normal form", async () => {
    const form = await createForm(s, { messageTemplate: "Hi {{firstName}}, thanks! {{company}}" });
    const body = await expectStatus(
      await post(form.webhookUrl, { phoneNumber: nextPhone(), firstName: "Your bank", company: "… your locked account. Verify now at http://evil.example/login" }),
      400,
    );
    expect(body.details).toMatchObject({ field: "company", requirement: "no links" });
  });

  test("values not inserted into the message, url-type fields and allowLinksInValues: true are not refused", async () => {
    const plain = await createForm(s, { messageTemplate: "Hi {{firstName}}" });
    await expectStatus(await post(plain.webhookUrl, { phoneNumber: nextPhone(), company: "http://acme.example" }), 200);
    const withUrl = await createForm(s, { messageTemplate: "Your site {{site}}", fields: [{ name: "site", type: "url" }] });
    await expectStatus(await post(withUrl.webhookUrl, { phoneNumber: nextPhone(), site: "https://acme.example/shop" }), 200);
    const allowed = await createForm(s, { messageTemplate: "Re {{company}}", settings: { allowLinksInValues: true } });
    await expectStatus(await post(allowed.webhookUrl, { phoneNumber: nextPhone(), company: "acme.com" }), 200);
  });

  test("inserted values are capped at 100 characters unless the field allows more", async () => {
    const form = await createForm(s, { messageTemplate: "Re {{company}} {{note}}", fields: [{ name: "note", type: "text", validation: { maxLength: 300 } }] });
    const before = (await totals(s));
    const body = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), company: "x".repeat(101) }), 400);
    expect(body.details).toMatchObject({ field: "company", requirement: "max 100 characters" });
    expect((await totals(s))).toEqual(before);
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), company: "x".repeat(100), note: "y".repeat(300) }), 200);
  });
});

describe("allowedCountries", () => {
  test("a number elsewhere is 400 on phoneNumber with the list as requirement; nothing written", async () => {
    const form = await createForm(s, { settings: { allowedCountries: ["US"] } });
    const before = (await totals(s));
    const body = await expectStatus(await post(form.webhookUrl, { phoneNumber: "+44 7400 123456" }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.details).toMatchObject({ field: "phoneNumber", requirement: "a number in US" });
    expect((await totals(s))).toEqual(before);
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
    const two = await createForm(s, { settings: { allowedCountries: ["us", "GB"] } });
    expect(two.settings.allowedCountries).toEqual(["US", "GB"]);
    await expectStatus(await post(two.webhookUrl, { phoneNumber: "+44 7400 123456" }), 200);
    const fr = await expectStatus(await post(two.webhookUrl, { phoneNumber: "+33 6 12 34 56 78" }), 400);
    expect(fr.details.requirement).toBe("a number in US, GB");
  });

  test("bad country lists are 400", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { allowedCountries: ["USA", "XX"] } }) }), 400);
    expect(body.errors.map((e: any) => e.field)).toEqual(["settings.allowedCountries[0]", "settings.allowedCountries[1]"]);
    const empty = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { allowedCountries: [] } }) }), 400);
    expect(empty.details.field).toBe("settings.allowedCountries");
  });
});

describe("allowedOrigins", () => {
  test("another Origin (or Referer origin) is 403 ORIGIN_NOT_ALLOWED and writes nothing; CORS echoes only listed origins", async () => {
    const form = await createForm(s, { settings: { allowedOrigins: ["https://Shop.example/"] } });
    expect(form.settings.allowedOrigins).toEqual(["https://shop.example"]);
    const before = (await totals(s));
    const evil = await post(form.webhookUrl, { phoneNumber: nextPhone() }, { Origin: "https://evil.example" });
    const body = await expectStatus(evil, 403);
    expect(body.code).toBe("ORIGIN_NOT_ALLOWED");
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    const byReferer = await post(form.webhookUrl, { phoneNumber: nextPhone() }, { Referer: "https://evil.example/contact" });
    await expectStatus(byReferer, 403);
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 403); // neither header
    expect((await totals(s))).toEqual(before);

    const ok = await post(form.webhookUrl, { phoneNumber: nextPhone() }, { Origin: "https://shop.example" });
    await expectStatus(ok, 200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    expect(ok.headers.get("vary")).toContain("Origin");
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }, { Referer: "https://shop.example/contact?x=1" }), 200);

    const pre = await fetch(form.webhookUrl, { method: "OPTIONS", headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const preOk = await fetch(form.webhookUrl, { method: "OPTIONS", headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "POST" } });
    expect(preOk.headers.get("access-control-allow-origin")).toBe("https://shop.example");
  });

  test("a form without the list still answers any origin with *", async () => {
    const form = await createForm(s);
    const res = await post(form.webhookUrl, { phoneNumber: nextPhone() }, { Origin: "https://anywhere.example" });
    await expectStatus(res, 200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("origins with a path are refused at create", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { allowedOrigins: ["https://shop.example/contact"] } }) }), 400);
    expect(body.details.field).toBe("settings.allowedOrigins[0]");
  });
});

describe("per-IP limit behind --trust-proxy", () => {
  test("each forwarded client address has its own bucket; 429 with details.scope ip; nothing written", async () => {
    let now = Date.parse("2026-05-01T12:00:00.000Z");
    const t = await startTestServer({ trustProxy: true }, { clock: () => now });
    try {
      const form = await createForm(t, { settings: { ipLimitPerMinute: 2 } });
      const from = (ip: string) => ({ "X-Forwarded-For": `198.51.100.9, ${ip}` });
      await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }, from("203.0.113.1")), 200);
      await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }, from("203.0.113.1")), 200);
      const before = (await totals(t));
      const res = await post(form.webhookUrl, { phoneNumber: nextPhone() }, from("203.0.113.1"));
      const body = await expectStatus(res, 429);
      expect(body.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(body.details).toMatchObject({ scope: "ip", limit: 2, window: "1 minute" });
      expect(res.headers.get("Retry-After")).toBe(String(body.retryAfter));
      expect((await totals(t))).toEqual(before);
      // Another visitor of the same form is not affected; the form's own limit is "form".
      await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }, from("203.0.113.2")), 200);
      now += 30_000; // one token back
      await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }, from("203.0.113.1")), 200);
    } finally {
      await t.stop();
    }
  });
});

describe("recipientLimitPerDay", () => {
  test("past the limit the contact is saved but no message is queued: messageId null, suppressed", async () => {
    let now = Date.parse("2026-05-01T12:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const form = await createForm(t, { settings: { recipientLimitPerDay: 2 } });
      const phone = nextPhone();
      await expectStatus(await post(form.webhookUrl, { phoneNumber: phone, firstName: "A" }), 200);
      now += 60_000;
      await expectStatus(await post(form.webhookUrl, { phoneNumber: phone, firstName: "B" }), 200);
      const before = (await totals(t));
      now += 60_000;
      const body = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone, firstName: "C" }), 200);
      expect(body.data.messageId).toBeNull();
      expect(body.data.suppressed).toBe("recipient-limit");
      expect(body.data.contactId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await totals(t))).toEqual({ ...before, submissions: before.submissions + 1 });
      expect((await expectStatus(await t.api(`/contacts/${body.data.contactId}`), 200)).data.contact.firstName).toBe("C");
      // Another number is unaffected; a day later the number gets texts again.
      await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
      now += 24 * 3_600_000;
      const later = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone }), 200);
      expect(later.data.messageId).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await t.stop();
    }
  });
});

describe("duplicateWindowMinutes", () => {
  test("a double click inside the window updates the contact and answers the first message with duplicate: true", async () => {
    let now = Date.parse("2026-05-01T12:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const form = await createForm(t, { settings: { duplicateWindowMinutes: 10 } });
      const phone = nextPhone();
      const first = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone, firstName: "Ann" }), 200);
      expect(first.data.duplicate).toBeUndefined();
      const before = (await totals(t));
      now += 5 * 60_000;
      const again = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone, firstName: "Anne" }), 200);
      expect(again.data).toMatchObject({
        messageId: first.data.messageId,
        queuePosition: first.data.queuePosition,
        duplicate: true,
      });
      expect(typeof again.data.estimatedDelivery).toBe("string");
      expect((await totals(t)).messages).toBe(before.messages);
      expect((await expectStatus(await t.api(`/contacts/${first.data.contactId}`), 200)).data.contact.firstName).toBe("Anne");
      now += 6 * 60_000;
      const later = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone }), 200);
      expect(later.data.messageId).not.toBe(first.data.messageId);
      expect(later.data.duplicate).toBeUndefined();
    } finally {
      await t.stop();
    }
  });

  test("off by default: a v1 form queues every submission", async () => {
    const form = await createForm(s);
    const phone = nextPhone();
    const a = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone }), 200);
    const b = await expectStatus(await post(form.webhookUrl, { phoneNumber: phone }), 200);
    expect(a.data.messageId).not.toBe(b.data.messageId);
  });
});

describe("protection: recommended", () => {
  test("fills in the recommended values; explicit values win; the account's default country (US)", async () => {
    const form = await createForm(s, { settings: { protection: "recommended", ipLimitPerMinute: 30 } });
    expect(form.settings).toMatchObject({
      duplicateWindowMinutes: 10,
      ipLimitPerMinute: 30,
      recipientLimitPerDay: 5,
      allowedCountries: ["US"],
      honeypotField: "_gotcha",
      allowLinksInValues: false,
    });
    expect(form.settings.protection).toBeUndefined();
  });

  test("every bad protection setting is listed in one 400", async () => {
    const body = await expectStatus(
      await s.api("/forms", {
        method: "POST",
        json: formBody({
          settings: {
            protection: "max",
            duplicateWindowMinutes: -1,
            ipLimitPerMinute: 0,
            recipientLimitPerDay: 1.5,
            honeypotField: "firstName",
            captcha: { provider: "other" },
            allowLinksInValues: "no",
            quietHours: { start: "21:00", end: "25:00" },
          },
        }),
      }),
      400,
    );
    expect(body.errors.map((e: any) => e.field)).toEqual([
      "settings.protection",
      "settings.duplicateWindowMinutes",
      "settings.ipLimitPerMinute",
      "settings.recipientLimitPerDay",
      "settings.honeypotField",
      "settings.captcha.provider",
      "settings.captcha.secret",
      "settings.allowLinksInValues",
      "settings.quietHours",
    ]);
  });
});

describe("rotating the webhook address", () => {
  test("a new address; the old one 404s at once; contacts, messages and stats stay with the form", async () => {
    const form = await createForm(s);
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
    const res = await expectStatus(await s.api(`/forms/${form.id}/rotate-webhook`, { method: "POST" }), 200);
    const newUrl: string = res.data.webhookUrl;
    expect(newUrl).not.toBe(form.webhookUrl);
    expect(newUrl).toMatch(/\/v1\/forms\/[0-9a-f-]{36}\/webhook$/);
    expect(res.data.formId).toBe(form.id);
    const before = (await totals(s));
    expect((await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 404)).code).toBe("NOT_FOUND");
    expect((await totals(s))).toEqual(before);
    await expectStatus(await post(newUrl, { phoneNumber: nextPhone() }), 200);

    const got = await expectStatus(await s.api(`/forms/${form.id}`), 200);
    expect(got.data.form.id).toBe(form.id);
    expect(got.data.form.webhookUrl).toBe(newUrl);
    const list = await expectStatus(await s.api(`/forms?search=${encodeURIComponent(form.name)}`), 200);
    expect(list.data.forms[0].webhookUrl).toBe(newUrl);
    const stats = await expectStatus(await s.api(`/forms/${form.id}/stats`), 200);
    expect(stats.data.stats.totalSubmissions).toBe(2);
    expect(stats.data.stats.totalMessages).toBe(2);
    expect(stats.data.stats.totalContacts).toBe(2);
  });

  test("admin only; another account's form is 404", async () => {
    const form = await createForm(s);
    const standard = await newApiKey(s, "standard_access");
    for (const [method, path] of [["POST", "rotate-webhook"], ["GET", "embed"]]) {
      const res = await s.api(`/forms/${form.id}/${path}`, { method, key: standard });
      expect((await expectStatus(res, 403)).code).toBe("PERMISSION_ERROR");
    }
    expect((await s.api(`/forms/${form.id}/rotate-webhook`, { method: "POST", key: null })).status).toBe(401);
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
    expect((await expectStatus(await s.api(`/forms/${crypto.randomUUID()}/rotate-webhook`, { method: "POST" }), 404)).code).toBe("FORM_NOT_FOUND");
  });
});

describe("quiet hours and the daily limit across a DST change", () => {
  test("inside quiet hours a message waits for their end; a full day defers to the next day's first allowed hour", async () => {
    // Saturday 2026-03-07 22:00 in New York (EST, UTC-5); clocks jump to EDT at 02:00 on the 8th.
    let now = Date.parse("2026-03-08T03:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const form = await createForm(t, {
        settings: { timezone: "America/New_York", quietHours: { start: "21:00", end: "08:00" }, rateLimitPerDay: 1 },
      });
      const scheduled = async (id: string) => (await expectStatus(await t.api(`/messages/${id}`), 200)).data.message.scheduledFor;
      const a = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
      // 08:00 EDT on Sunday the 8th = 12:00Z (not 13:00Z as it would be in EST).
      expect(await scheduled(a.data.messageId)).toBe("2026-03-08T12:00:00.000Z");
      expect(Date.parse(a.data.estimatedDelivery)).toBeGreaterThanOrEqual(Date.parse("2026-03-08T12:00:00.000Z"));
      expect(a.message).toContain("quiet hours");
      // Sunday is full: the next message goes to Monday 08:00 EDT, not Monday 00:00 (inside quiet hours).
      const b = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
      expect(await scheduled(b.data.messageId)).toBe("2026-03-09T12:00:00.000Z");
      expect(b.data.estimatedDelivery >= "2026-03-09T12:00:00.000Z").toBe(true);
      // Daytime outside quiet hours: now (Monday 10:00 EDT), Monday already has one → Tuesday 08:00.
      now = Date.parse("2026-03-09T14:00:00.000Z");
      const c = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
      expect(await scheduled(c.data.messageId)).toBe("2026-03-10T12:00:00.000Z");
    } finally {
      await t.stop();
    }
  });

  test("a form without quiet hours keeps v1 scheduling (daily limit → local midnight)", async () => {
    let now = Date.parse("2026-03-08T03:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const form = await createForm(t, { settings: { timezone: "America/New_York", rateLimitPerDay: 1 } });
      const scheduled = async (id: string) => (await expectStatus(await t.api(`/messages/${id}`), 200)).data.message.scheduledFor;
      const a = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
      expect(await scheduled(a.data.messageId)).toBe("2026-03-08T03:00:00.000Z");
      const b = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 200);
      expect(await scheduled(b.data.messageId)).toBe("2026-03-08T05:00:00.000Z"); // midnight EST
    } finally {
      await t.stop();
    }
  });
});

describe("captcha (local verifier process)", () => {
  let verifier: ReturnType<typeof Bun.spawn>;
  let t: TestServer;
  beforeAll(async () => {
    verifier = Bun.spawn([process.execPath, join(import.meta.dir, "../fixtures/captcha-verifier.ts"), "s3cret"], { stdout: "pipe", stderr: "inherit" });
    const reader = (verifier.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const port = Number(text.trim());
    t = await startTestServer({ captchaVerifyUrls: { turnstile: `http://127.0.0.1:${port}/siteverify` } });
  });
  afterAll(async () => {
    await t?.stop();
    verifier?.kill();
  });

  test("pass → 200; fail or missing → 400 CAPTCHA_FAILED; slow → 503 CAPTCHA_UNAVAILABLE; refusals write nothing", async () => {
    const form = await createForm(t, { settings: { captcha: { provider: "turnstile", secret: "s3cret", siteKey: "0x4AAA" } } });
    expect(form.settings.captcha).toEqual({ provider: "turnstile", secret: "••••", siteKey: "0x4AAA" });
    const before = (await totals(t));
    const missing = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone() }), 400);
    expect(missing.code).toBe("CAPTCHA_FAILED");
    const failed = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), "cf-turnstile-response": "fail" }), 400);
    expect(failed.code).toBe("CAPTCHA_FAILED");
    const started = performance.now();
    const slow = await post(form.webhookUrl, { phoneNumber: nextPhone(), "cf-turnstile-response": "slow" });
    const slowBody = await expectStatus(slow, 503);
    expect(slowBody.code).toBe("CAPTCHA_UNAVAILABLE");
    expect(performance.now() - started).toBeGreaterThanOrEqual(4_500);
    expect((await totals(t))).toEqual(before);

    const ok = await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), "cf-turnstile-response": "pass" }), 200);
    expect(await customFieldsOf(t, ok.data.contactId)).toEqual({}); // the token is not stored as a value
  }, 20_000);

  test("the secret is write-only: GET shows ••••; posting •••• back keeps it; a new provider needs a secret", async () => {
    const form = await createForm(t, { settings: { captcha: { provider: "turnstile", secret: "s3cret" } } });
    const got = await expectStatus(await t.api(`/forms/${form.id}`), 200);
    expect(got.data.form.settings.captcha.secret).toBe("••••");
    expect(JSON.stringify(got)).not.toContain("s3cret");
    await expectStatus(await t.api(`/forms/${form.id}`, { method: "PUT", json: { settings: { captcha: got.data.form.settings.captcha } } }), 200);
    await expectStatus(await post(form.webhookUrl, { phoneNumber: nextPhone(), "cf-turnstile-response": "pass" }), 200);
    const switched = await expectStatus(await t.api(`/forms/${form.id}`, { method: "PUT", json: { settings: { captcha: { provider: "hcaptcha", secret: "••••" } } } }), 400);
    expect(switched.details.field).toBe("settings.captcha.secret");
  });
});

describe("embed snippet", () => {
  test("a <form> posting to the webhook with labelled, typed inputs, a hidden honeypot and the captcha widget", async () => {
    const form = await createForm(s, {
      fields: [
        { name: "firstName", type: "text", label: "Your name", required: true },
        { name: "email", type: "email" },
        { name: "guests", type: "number", validation: { min: 1, max: 12, integer: true } },
      ],
      settings: { captcha: { provider: "hcaptcha", secret: "x", siteKey: "site-key-1" } },
    });
    const body = await expectStatus(await s.api(`/forms/${form.id}/embed`), 200);
    const html: string = body.data.html;
    expect(body.data.webhookUrl).toBe(form.webhookUrl);
    expect(html).toContain(`action="${form.webhookUrl}"`);
    expect(html).toContain('method="post"');
    expect(html).toMatch(/<label for="tw-firstName">Your name \*<\/label>\s*<input id="tw-firstName" name="firstName" type="text" required/);
    expect(html).toContain('name="email" type="email"');
    expect(html).toContain('name="guests" type="number"');
    expect(html).toContain('name="phoneNumber" type="tel" required');
    expect(html).toMatch(/<input id="tw-_gotcha" name="_gotcha" type="text" value="" tabindex="-1" autocomplete="off">/);
    expect(html).toContain("left:-10000px");
    expect(html).toContain('<script src="https://js.hcaptcha.com/1/api.js" async defer></script>');
    expect(html).toContain('data-sitekey="site-key-1"');
    expect(html).not.toContain('secret');

    const raw = await s.api(`/forms/${form.id}/embed`, { headers: { Accept: "text/html" } });
    expect(raw.headers.get("content-type")).toStartWith("text/html");
    expect(await raw.text()).toBe(html);
  });

  test("the snippet's form, posted as a browser would, is accepted", async () => {
    const form = await createForm(s);
    const html: string = (await expectStatus(await s.api(`/forms/${form.id}/embed`), 200)).data.html;
    const names = [...html.matchAll(/name="([^"]+)"/g)].map((m) => m[1]);
    expect(names).toContain("_gotcha");
    const res = await post(form.webhookUrl, { phoneNumber: nextPhone(), firstName: "Ann", company: "Acme", _gotcha: "" }, { Accept: BROWSER_ACCEPT }, false);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Thank you");
  });
});
