import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";
import { MAX_PAGE, MAX_PAGE_SIZE } from "../../../src/domain/query-params";
import { raiseApiLimits } from "../../helpers/reads";

/**
 * Every paginated list reads page and limit through the one shared parser: any value out of range,
 * negative, fractional or not a number is a 400 in the envelope naming the parameter and its range
 * (docs/api-decisions.md, "Hostile input, round two: bodies, paging and proxies").
 */
let s: TestServer;
const ids: Record<string, string> = {};
beforeAll(async () => {
  s = await startTestServer({ allowPrivateWebhookUrls: true });
  raiseApiLimits(s);
  const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
  ids.form = form.id;
  const contact = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550123", firstName: "Ann" } }), 201)).data.contact;
  ids.contact = contact.id;
  const ep = await expectStatus(await s.api("/webhook-endpoints", { method: "POST", json: { url: "http://127.0.0.1:9/hook", events: ["*"], allowInsecure: true } }), 201);
  ids.endpoint = ep.data.endpoint.id;
  const automation = await expectStatus(await s.api("/automations", { method: "POST", json: { name: "Follow-up", formId: form.id, steps: [{ template: "Hi", delay: "1d" }] } }), 201);
  ids.automation = automation.data.automation.id;
});
afterAll(() => s.stop());

const PAGING = new Set(["page", "limit", "offset"]);
const BAD = ["99999999999999999999", "-1", "0", "1.5", "abc", "1e3", "0x10", " 1", "Infinity", "NaN", "-0", "1,2", String(Number.MAX_SAFE_INTEGER + 2)];

/** A real id for each path parameter, so the list itself is reached (not a 404). */
function fill(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (path.startsWith("/v1/contacts/") || path.startsWith("/v1/conversations/")) return ids.contact;
    if (path.startsWith("/v1/webhook-endpoints/")) return ids.endpoint;
    if (path.startsWith("/v1/forms/")) return ids.form;
    if (path.startsWith("/v1/automations/")) return ids.automation;
    throw new Error(`paging test: no id for {${name}} in ${path}; add one to fill()`);
  });
}

describe("paging is safe on every paginated route of the OpenAPI document", () => {
  test("huge, negative, fractional and non-numeric page/limit/offset: 400 naming the parameter, never 500", async () => {
    const doc = await expectStatus(await fetch(`${s.base}/openapi.json`), 200);
    const lists: Array<{ path: string; params: string[] }> = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      const params = (ops.get?.parameters ?? []).filter((p: any) => p.in === "query" && PAGING.has(p.name)).map((p: any) => p.name as string);
      if (params.length) lists.push({ path, params });
    }
    // The lists known today; a new one is walked as soon as the document lists it.
    expect(lists.map((l) => l.path)).toEqual(
      expect.arrayContaining(["/v1/forms", "/v1/messages", "/v1/contacts", "/v1/broadcasts", "/v1/inbound", "/v1/conversations", "/v1/webhook-endpoints/{id}/deliveries"]),
    );
    const failures: string[] = [];
    for (const { path, params } of lists) {
      const url = fill(path);
      // The list answers with no paging at all, and with the largest values allowed.
      await expectStatus(await s.api(url.slice(3)), 200);
      const max = await s.api(`${url.slice(3)}?page=${MAX_PAGE}&limit=${MAX_PAGE_SIZE}`);
      if (max.status !== 200) failures.push(`${path} page=${MAX_PAGE}&limit=${MAX_PAGE_SIZE} → ${max.status} ${(await max.text()).slice(0, 200)}`);
      for (const name of params) {
        const range = name === "page" ? `1 to ${MAX_PAGE}` : name === "limit" ? `1 to ${MAX_PAGE_SIZE}` : "";
        for (const v of [...BAD, name === "page" ? String(MAX_PAGE + 1) : String(MAX_PAGE_SIZE + 1)]) {
          const res = await s.api(`${url.slice(3)}?${name}=${encodeURIComponent(v)}`);
          const body = (await res.json().catch(() => null)) as any;
          const ok =
            res.status === 400 &&
            body?.status === "error" &&
            body.code === "VALIDATION_ERROR" &&
            body.details?.field === name &&
            String(body.message).includes(name) &&
            (range === "" || String(body.message).includes(range));
          if (!ok) failures.push(`${path} ${name}=${JSON.stringify(v)} → ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  test("the reported repro: deliveries?page=99999999999999999999 is a 400 with a plain message", async () => {
    const r = await expectStatus(await s.api(`/webhook-endpoints/${ids.endpoint}/deliveries?page=99999999999999999999`), 400);
    expect(r.message).toBe(`page must be an integer from 1 to ${MAX_PAGE}`);
    expect(r.details).toMatchObject({ field: "page", provided: "99999999999999999999" });
  });

  test("an empty value means the default, on every list alike", async () => {
    for (const p of ["/forms", "/messages", "/contacts", `/webhook-endpoints/${ids.endpoint}/deliveries`]) {
      const r = await expectStatus(await s.api(`${p}?page=&limit=`), 200);
      expect(JSON.stringify(r.data)).toContain('"limit":50');
    }
  });

  test("page and limit in the contacts search body are read the same way", async () => {
    for (const page of [1.5, -1, 1e21, "2", true]) {
      const res = await s.api("/contacts/search", { method: "POST", json: { customFields: { company: "Acme" }, page } });
      if (page === "2") await expectStatus(res, 200);
      else expect((await expectStatus(res, 400)).details.field).toBe("page");
    }
  });
});
