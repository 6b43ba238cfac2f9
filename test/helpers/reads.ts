import { expectStatus, type TestServer } from "./server";

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
  ts.running.deps.accounts.updateAccount(accountId, { apiBurstPerMinute: 100_000, apiLimitPerHour: 1_000_000 });
}
