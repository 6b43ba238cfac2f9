/**
 * The live message feed (src/services/message-feed.ts) on a running server, read inside: a browser
 * that leaves its stream leaves no subscriber behind, which no answer shows. What a session's
 * stream tells (its own account's changes, not another's) is test/api/sessions.test.ts's.
 */
import { describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { newAccount } from "../helpers/accounts";

/** Signs in with `apiKey`; answers the cookie pair ("textwire_session=…"), the CSRF token and the raw response. */
async function signIn(ts: TestServer, apiKey: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ apiKey }) });
  const setCookie = res.headers.get("set-cookie") ?? "";
  const body = await expectStatus(res, 201);
  return { cookie: setCookie.split(";")[0], setCookie, csrf: body.data.csrfToken as string, data: body.data };
}

describe("live message feed (Server-Sent Events)", () => {
  test("a session's stream tells of a new message and of a status change, and only its own account's", async () => {
    const ts = await startTestServer();
    try {
      const s = await signIn(ts, ts.adminKey);
      const other = newAccount(ts, { name: "Other shop" });
      const ctrl = new AbortController();
      const res = await fetch(`${ts.base}/live/messages`, { headers: { Cookie: s.cookie }, signal: ctrl.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const reader = res.body!.getReader();
      let text = "";
      const readUntil = async (re: RegExp) => {
        const deadline = Date.now() + 10_000;
        while (!re.test(text)) {
          if (Date.now() > deadline) throw new Error("no event: " + text);
          const { value, done } = await reader.read();
          if (done) throw new Error("stream ended: " + text);
          text += new TextDecoder().decode(value);
        }
      };
      await readUntil(/: connected/);
      // Another account's message tells this stream nothing.
      await expectStatus(await ts.api("/messages", { method: "POST", key: other.apiKey, json: { phoneNumber: "+14155550111", content: "Other" } }), 201);
      const created = await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550112", content: "Mine" } }), 201);
      await readUntil(/event: message\ndata: \{"source":"queue"/);
      text = "";
      await expectStatus(await ts.api(`/messages/${created.data.messageId}/status`, { method: "PUT", json: { status: "failed", failureReason: "no service" } }), 200);
      await readUntil(/event: message\ndata: \{"source":"(api|queue)"/);
      ctrl.abort();
      // The subscriber is gone once the browser leaves.
      const deadline = Date.now() + 5000;
      while (ts.running.deps.messageFeed.subscriberCount() > 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(ts.running.deps.messageFeed.subscriberCount()).toBe(0);
    } finally {
      await ts.stop();
    }
  });

  test("the stream needs a session or a key, and the server stops with a stream open", async () => {
    const ts = await startTestServer();
    expect((await fetch(`${ts.base}/live/messages`)).status).toBe(401);
    const res = await fetch(`${ts.base}/live/messages`, { headers: { Authorization: `Bearer ${ts.adminKey}` } });
    expect(res.status).toBe(200);
    const started = Date.now();
    await ts.stop();
    // An open stream never holds the stop (that would be the test's timeout); this is no speed.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
