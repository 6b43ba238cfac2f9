import { expectStatus, type TestServer } from "./server";
import { updateAccount } from "./accounts";

/**
 * Reading back through the API what a request changed (docs/api-decisions.md, "The house, round
 * two: tests through the API"): a test asserts on these answers, not on SQL.
 */

/**
 * A message as the API shows it: GET /messages/:id (its status, failureReason, retryCount,
 * scheduledFor, metadata, timeline) with the `stage` the messages list gives it ("with-phone"
 * while a phone holds it); null when the key's account has no such message.
 */
export async function messageOf(ts: TestServer, id: string, key = ts.adminKey): Promise<Record<string, any> | null> {
  const res = await ts.api(`/messages/${id}`, { key });
  if (res.status === 404) return null;
  const body = await expectStatus(res, 200);
  for (let page = 1; ; page++) {
    const d = (await expectStatus(await ts.api(`/messages?limit=100&page=${page}`, { key }), 200)).data;
    const listed = d.messages.find((m: { id: string }) => m.id === id);
    if (listed) return { ...body.data.message, stage: listed.stage, timeline: body.data.timeline };
    if (page * 100 >= d.pagination.total) return { ...body.data.message, timeline: body.data.timeline };
  }
}

/** A contact as GET /contacts/:id shows it (null when the key's account has no such contact). */
export async function contactOf(ts: TestServer, id: string, key = ts.adminKey): Promise<Record<string, any> | null> {
  const res = await ts.api(`/contacts/${id}`, { key });
  if (res.status === 404) return null;
  return (await expectStatus(res, 200)).data.contact;
}

/** The total a list answers with (`/messages?formId=…`, `/contacts`, `/submissions`). */
export async function listTotal(ts: TestServer, path: string, key = ts.adminKey): Promise<number> {
  return (await expectStatus(await ts.api(path, { key }), 200)).data.pagination.total as number;
}

/**
 * The operator's `textwire accounts update --api-burst … --api-limit …` (no API changes it): a
 * test that reads back through the API many times while its clock stands still would otherwise
 * spend its key's per-minute burst.
 */
export function raiseApiLimits(ts: TestServer, accountId = ts.accountId): void {
  updateAccount(ts, accountId, { apiBurstPerMinute: 100_000, apiLimitPerHour: 1_000_000 });
}

/** The contact with this number, as GET /contacts/:id shows it (undefined when the account has none). */
export async function contactByPhone(ts: TestServer, phone: string, key = ts.adminKey): Promise<Record<string, any> | undefined> {
  const found = (await expectStatus(await ts.api(`/contacts?limit=100&search=${encodeURIComponent(phone.replace(/^\+1/, ""))}`, { key }), 200)).data.contacts as any[];
  const c = found.find((x) => x.phoneNumber === phone);
  return c && (await contactOf(ts, c.id, key))!;
}

/** Every text to the number's contact, oldest first, each as messageOf shows it. */
export async function messagesToPhone(ts: TestServer, phone: string, key = ts.adminKey): Promise<Array<Record<string, any>>> {
  const c = await contactByPhone(ts, phone, key);
  if (!c) return [];
  const list = (await expectStatus(await ts.api(`/messages?limit=100&order=asc&contactId=${c.id}`, { key }), 200)).data.messages as Array<{ id: string }>;
  return Promise.all(list.map(async (m) => (await messageOf(ts, m.id, key))!));
}

/** Cancels every queued text of the account, as the dashboard's bulk cancel does (a test clearing the queue). */
export async function cancelAllQueued(ts: TestServer, key = ts.adminKey): Promise<void> {
  const ids = (await expectStatus(await ts.api("/messages?status=queued&limit=100", { key }), 200)).data.messages.map((m: { id: string }) => m.id);
  if (ids.length) await expectStatus(await ts.api("/messages/bulk", { method: "PUT", key, json: { messageIds: ids, status: "cancelled" } }), 200);
}

/** A new API key of the server's first account, made as its owner makes one (POST /v1/api-keys with the admin key). */
export async function newApiKey(ts: TestServer, permission: "admin_access" | "standard_access" = "standard_access"): Promise<string> {
  return (await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission } }), 201)).data.apiKey as string;
}

/**
 * Waits until a broadcast has written a text for each of its recipients (its queuing runs after
 * the 202) and returns it as GET /broadcasts/:id shows it.
 */
export async function broadcastQueued(ts: TestServer, id: string, key = ts.adminKey): Promise<Record<string, any>> {
  for (let i = 0; ; i++) {
    const b = (await expectStatus(await ts.api(`/broadcasts/${id}`, { key }), 200)).data.broadcast;
    if (b.status !== "queuing" && b.messages.total + b.skipped >= b.recipients) return b;
    if (i > 1000) throw new Error(`broadcast ${id} still queuing: ${JSON.stringify(b)}`);
    await Bun.sleep(10);
  }
}

/**
 * How many texts wait in the account's queue, as a tool sending through the API sees it: a probe
 * text queued last in line (low priority, scheduled centuries ahead: after every other text in
 * queue order) answers with its `queuePosition`, one more than the texts ahead of it, and is
 * cancelled at once. `to` names a contact the test already has (by id or phone), so the probe
 * makes no contact; it must not be opted out.
 */
export async function queueLength(ts: TestServer, to: { contactId: string } | { phoneNumber: string }, key = ts.adminKey): Promise<number> {
  const r = (await expectStatus(await ts.api("/messages", { method: "POST", key, json: { ...to, content: "queue probe", priority: "low", scheduledFor: "2999-01-01T00:00:00.000Z" } }), 201)).data;
  await expectStatus(await ts.api("/messages/bulk", { method: "PUT", key, json: { messageIds: [r.messageId], status: "cancelled" } }), 200);
  return r.queuePosition - 1;
}
