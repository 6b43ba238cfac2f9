/**
 * The document's `webhooks` section is true: a server is driven until it has emitted every event
 * type it can (form posts, the API, a phone over the SMSGate protocol, the queue watch, an
 * endpoint failing for 3 days, the test ping), and every body it emitted validates against the
 * schema the document gives for its type, with every object closed (no undeclared field). The
 * typed receivers in test/openapi/receivers.ts, compiled by `tsc`, handle each one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { EVENT_TYPES } from "../../../src/domain/outbound-events";
import type { QueueWatch } from "../../../src/services/queue-watch";
import { emitReplicationStalled } from "../../../src/services/replication-settings";
import { closed } from "../../helpers/closed-schema";
import { waitFor } from "../../helpers/event-receiver-client";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { raiseApiLimits } from "../../helpers/reads";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";
import { RECEIVERS, receive } from "../../openapi/receivers";

type Json = Record<string, any>;

const ALL_TYPES = [...EVENT_TYPES, "ping"] as const;

/** An in-process receiver: every body it was sent; answers `status()`. */
function receiver(status: () => number = () => 200) {
  const bodies: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      bodies.push(await req.text());
      return new Response("ok", { status: status() });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, bodies, stop: () => server.stop(true) };
}

let ts: TestServer;
let doc: Json;
// The server's clock runs with real time, `offset` ms ahead (3 days of failures, the stuck queue).
let offset = 0;
const clock = () => Date.now() + offset;
const good = receiver();
const bad = receiver(() => 500);
/** What the "*" endpoint's receiver got: every event the server sent, as sent. */
const onWire = () => good.bodies.map((b) => ({ type: JSON.parse(b).type as string, payload: b }));
const emitted = (type: string) => onWire().filter((e) => e.type === type);

beforeAll(async () => {
  ts = await startTestServer({ allowPrivateWebhookUrls: true, eventRetryScheduleMs: Array(7).fill(1_000), deviceOfflineAfterMs: 120_000 }, { clock });
  // The API limiter refills by the server's clock; the jumps below must not starve it.
  raiseApiLimits(ts);
  doc = await expectStatus(await fetch(`${ts.base}/openapi.json`), 200);
});
afterAll(async () => {
  await ts.stop();
  good.stop();
  bad.stop();
});

async function driveEveryEvent() {
  const api = (path: string, method: string, json?: unknown) => ts.api(path, { method, json });
  const all = (await expectStatus(await api("/webhook-endpoints", "POST", { url: good.url, events: ["*"], allowInsecure: true }), 201)).data.endpoint;
  await expectStatus(await api(`/webhook-endpoints/${all.id}/test`, "POST"), 202); // ping

  // A form post: contact.created, message.queued, form.submission; a second post: contact.updated.
  const form = (await expectStatus(await api("/forms", "POST", formBody()), 201)).data.form;
  const post = (body: Json, formId = form.id) => fetch(`${ts.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  // Automations: Ann's run starts with her first post and stops at her reply below; a run whose
  // only step's date has passed completes at once.
  await expectStatus(await api("/automations", "POST", { name: "Review", formId: form.id, steps: [{ template: "How did we do, {{firstName}}?", delay: "2d", sendAt: "10:00" }] }), 201);
  const dated = (await expectStatus(await api("/forms", "POST", formBody({ fields: [{ name: "visit", type: "date" }] })), 201)).data.form;
  await expectStatus(await api("/automations", "POST", { name: "Reminder", formId: dated.id, steps: [{ template: "See you tomorrow", relativeTo: "visit", offset: "-1d" }] }), 201);
  await expectStatus(await post({ phoneNumber: "+14155550106", visit: "2020-01-02" }, dated.id), 200);
  await expectStatus(await post({ phoneNumber: "+14155550101", firstName: "Ann", company: "Acme" }), 200);
  await expectStatus(await post({ phoneNumber: "+14155550101", firstName: "Ann", company: "Acme Ltd" }), 200);

  // The API: opt a contact out (its queued text is cancelled) and back in.
  const c = (await expectStatus(await api("/contacts", "POST", { phoneNumber: "+14155550102", firstName: "Bo" }), 201)).data.contact;
  await expectStatus(await api("/messages", "POST", { phoneNumber: "+14155550102", content: "Your order is ready" }), 201);
  await expectStatus(await api(`/contacts/${c.id}`, "PUT", { optedOut: true }), 200);
  await expectStatus(await api(`/contacts/${c.id}`, "PUT", { optedOut: false }), 200);

  // A reply from a customer.
  await expectStatus(await api("/messages/inbound", "POST", { from: "+14155550101", body: "Thanks!", externalId: "sms-1" }), 201);

  // A phone: sends and delivers one text, fails another for good; then goes quiet and comes back.
  await expectStatus(await api("/messages", "POST", { phoneNumber: "+14155550103", content: "Last try", maxAttempts: 1 }), 201);
  const token = (await expectStatus(await api("/devices/registration-tokens", "POST", {}), 201)).data.token;
  const phone = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1` });
  await phone.register(token);
  const mobile = (method: string, body?: unknown) =>
    fetch(`${ts.url}/api/mobile/v1/message`, { method, headers: { Authorization: `Bearer ${phone.token}`, "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const held: Array<{ id: string; phoneNumbers: string[] }> = await expectStatus(await mobile("GET"), 200);
  const at = (ms: number) => new Date(clock() + ms).toISOString();
  const reports = held.map((m) =>
    m.phoneNumbers.includes("+14155550103")
      ? { id: m.id, state: "Failed", recipients: [{ phoneNumber: "+14155550103", state: "Failed", error: "no signal" }], states: { Failed: at(0) } }
      : { id: m.id, state: "Delivered", recipients: [], states: { Sent: at(0), Delivered: at(1000) } },
  );
  await expectStatus(await mobile("PATCH", reports), 204);
  await waitFor("message.sent and .delivered sent", () => emitted("message.sent").length > 0 && emitted("message.delivered").length > 0 && emitted("message.failed").length > 0, 10_000);
  // arrange: the presence check's timer ticks, run at once at the test's clock.
  const devices = ts.running.deps.devices;
  devices.notePresence(clock());
  offset += 200_000; // past --device-offline-after with no request
  devices.notePresence(clock()); // arrange: a presence tick
  await expectStatus(await mobile("GET"), 200);
  devices.notePresence(clock()); // arrange: a presence tick
  // Android's own limit refuses a text: the phone is paused for its minute, then resumes.
  await expectStatus(await api("/messages", "POST", { phoneNumber: "+14155550106", content: "Over the limit" }), 201);
  const limited: Array<{ id: string }> = await expectStatus(await mobile("GET"), 200);
  const failure = "Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)";
  await expectStatus(await mobile("PATCH", limited.map((m) => ({ id: m.id, state: "Failed", recipients: [{ phoneNumber: "+14155550106", state: "Failed", error: failure }], states: { Failed: at(0) } }))), 204);
  offset += 61_000;
  devices.failures.sweep(clock()); // arrange: the pause sweep's tick

  // The queue: a due message and no phone asking for work for --stuck-after (10 min).
  await expectStatus(await api("/messages", "POST", { phoneNumber: "+14155550104", content: "Anyone there?" }), 201);
  offset += 11 * 60_000;
  (ts.running.deps.lifecycle.find((l) => l.name === "queue-watch") as QueueWatch).check(clock()); // arrange: the queue watch's tick

  // The replica more than 60 s behind: what the replication supervisor reports on a stall
  // (replication itself is off here; test/slow/ops/replication.test.ts stalls a real one).
  // arrange: the supervisor's stall report, made without a replica (no request makes one)
  emitReplicationStalled(ts.running.deps.sqlite, clock(), { target: "file:///mnt/usb/textwire", lagSeconds: 75, lastSyncAt: new Date(clock() - 75_000).toISOString(), lastError: null });

  // An endpoint failing every delivery for 3 days is disabled; the "*" endpoint is told.
  const failing = (await expectStatus(await api("/webhook-endpoints", "POST", { url: bad.url, events: ["contact.created"], allowInsecure: true }), 201)).data.endpoint;
  await expectStatus(await api("/contacts", "POST", { phoneNumber: "+14155550105" }), 201);
  // The first failed attempt is logged (it starts the 3 days) before the clock jumps; the next
  // attempt, a second later, finds them over.
  await waitFor("a first failed attempt logged", async () => (await expectStatus(await api(`/webhook-endpoints/${failing.id}/deliveries`, "GET"), 200)).data.deliveries[0]?.attempts >= 1, 10_000);
  offset += 3 * 86_400_000 + 1_000;
  await waitFor("endpoint.disabled", () => emitted("endpoint.disabled").length > 0, 20_000);
  await api(`/webhook-endpoints/${failing.id}`, "DELETE");
}

describe("the webhooks section of the document describes every event body the server sends", () => {
  test("each event type the server can emit has its webhook, and nothing else has", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...ALL_TYPES].sort());
    for (const type of ALL_TYPES) {
      const op = doc.webhooks[type].post;
      const ref = op.requestBody.content["application/json"].schema.$ref as string;
      const schema = doc.components.schemas[ref.split("/").pop()!];
      expect(schema.properties.type).toMatchObject({ const: type });
      expect(schema.required).toEqual(["type", "timestamp", "data"]);
      expect(op.parameters.map((p: Json) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    }
  });

  test("every body emitted while the server is driven through every kind of event validates against its type's schema, every object closed", async () => {
    await driveEveryEvent();
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    const components = closed(doc.components) as Json;
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    for (const type of ALL_TYPES) {
      const ref = doc.webhooks[type].post.requestBody.content["application/json"].schema.$ref;
      validators.set(type, ajv.compile({ $ref: ref, $id: `urn:textwire:event:${type}`, components }));
    }
    const problems: string[] = [];
    // Every type reached the "*" endpoint: its bodies, as sent, are what is checked.
    const typesOnWire = () => new Set(onWire().map((e) => e.type));
    await waitFor("one delivery of each type to the '*' endpoint", () => ALL_TYPES.every((t) => typesOnWire().has(t)), 20_000);
    const events = onWire();
    for (const e of events) {
      const validate = validators.get(e.type);
      if (!validate) {
        problems.push(`${e.type}: no webhook in the document`);
        continue;
      }
      const body = JSON.parse(e.payload);
      if (!validate(body)) {
        for (const err of validate.errors ?? []) problems.push(`${e.type}: ${err.instancePath || "/"} ${err.message}${err.params && "additionalProperty" in err.params ? ` (${err.params.additionalProperty})` : ""}`);
      }
      // The typed receiver for the type takes the body.
      expect(receive(body)).toStartWith(`${e.type}:`);
    }
    expect([...new Set(problems)]).toEqual([]);
    expect(ALL_TYPES.filter((t) => !events.some((e) => e.type === t))).toEqual([]);

  }, 60_000);

  test("test/openapi/receivers.ts has one typed receiver per event type", () => {
    expect(Object.keys(RECEIVERS).sort()).toEqual([...ALL_TYPES].sort());
  });
});
