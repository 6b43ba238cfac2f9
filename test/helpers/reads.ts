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
