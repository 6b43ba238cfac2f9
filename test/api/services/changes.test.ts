import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { makeCallers, runScenario, type Callers, type Scenario } from "../../helpers/scenario";

/**
 * What the server announces when a request changes something (src/lib/changes.ts): the live feed,
 * the queue watcher and the phones' streams hear only these, so a change that is not announced
 * never reaches an open dashboard. Each row is a request by one caller, its answer, and exactly
 * the announcements it made (docs/api-decisions.md, "The house, round two: tests through the API").
 */

let s: TestServer;
let callers: Callers;
let formId: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer();
  callers = await makeCallers(s);
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 0, timezone: "UTC" } }) }), 201)).data.form.id;
});
afterAll(() => s.stop());

/** The table; a row's path may name an id an earlier row made ({message}, {contact}). */
const table: Array<Scenario & { keep?: (body: any) => void }> = [
  {
    name: "a visitor's form post queues a text (the intake applies it after the answer)",
    as: "signed out", method: "POST", path: "/v1/forms/{form}/webhook", body: { phoneNumber: "+14155550111", firstName: "Ann" },
    status: 200, content: { status: "success" }, events: { "message.queued": 1 },
    keep: (b) => (ids.webhookMessage = b.data.messageId),
  },
  {
    name: "staff send a text by hand",
    as: "staff", method: "POST", path: "/v1/messages", body: { phoneNumber: "+14155550112", content: "Your order is ready" },
    status: 201, content: { data: { message: { status: "queued", createdBy: { type: "user" } } } }, events: { "message.queued": 1 },
    keep: (b) => (ids.message = b.data.messageId),
  },
  {
    name: "a viewer may not, and nothing is announced",
    as: "viewer", method: "POST", path: "/v1/messages", body: { phoneNumber: "+14155550113", content: "Hi" },
    status: 403, content: { code: "PERMISSION_ERROR" }, events: {},
  },
  {
    name: "reading changes nothing",
    as: "viewer", method: "GET", path: "/v1/messages/{message}",
    status: 200, content: { data: { message: { status: "queued" } } }, events: {},
  },
  {
    name: "a bad body is refused and announces nothing",
    as: "staff", method: "POST", path: "/v1/messages", body: { content: "no number" },
    status: 400, content: { code: "VALIDATION_ERROR" }, events: {},
  },
  {
    // A status change through this route is announced as "updated" (the live feed re-reads the
    // list); deleting, below, as "settled".
    name: "cancelling a queued text by its status",
    as: "staff", method: "PUT", path: "/v1/messages/{message}/status", body: { status: "cancelled" },
    status: 200, content: { data: { status: "cancelled" } }, events: { "message.updated": 1 },
  },
  {
    name: "deleting a queued text",
    as: "admin key", method: "DELETE", path: "/v1/messages/{webhookMessage}",
    status: 200, content: { data: { deletedId: expect.any(String) } }, events: { "message.settled": 1 },
  },
  {
    name: "an unknown message is 404 and announces nothing",
    as: "owner", method: "DELETE", path: "/v1/messages/00000000-0000-0000-0000-000000000000",
    status: 404, content: { code: "MESSAGE_NOT_FOUND" }, events: {},
  },
];

describe("announcements of the changes a request makes", () => {
  for (const row of table) {
    test(row.name!, async () => {
      const path = row.path.replace(/\{(\w+)\}/g, (_, k: string) => (k === "form" ? formId : ids[k]!));
      const res = await runScenario(s, callers, { ...row, path });
      row.keep?.(res.body);
    });
  }

  test("every row ran against what the earlier rows made", () => {
    expect(Object.keys(ids).sort()).toEqual(["message", "webhookMessage"]);
  });
});
