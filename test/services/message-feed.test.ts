/**
 * The live message feed (src/services/message-feed.ts) on a running server, read inside: a browser
 * that leaves its stream leaves no subscriber behind, which no answer shows. What a session's
 * stream tells (its own account's changes, not another's), who may open it and that an open
 * stream never holds the stop are test/api/sessions.test.ts's.
 */
import { describe, expect, test } from "bun:test";
import { expectStatus, startTestServer } from "../helpers/server";

describe("live message feed (Server-Sent Events)", () => {
  test("a browser's stream is one subscriber while it is open and none once the browser leaves", async () => {
    const ts = await startTestServer();
    try {
      const signedIn = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: ts.adminKey }) });
      const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0];
      await expectStatus(signedIn, 201);
      const feed = ts.running.deps.messageFeed;
      expect(feed.subscriberCount()).toBe(0);
      const ctrl = new AbortController();
      const res = await fetch(`${ts.base}/live/messages`, { headers: { Cookie: cookie }, signal: ctrl.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = "";
      while (!/: connected/.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error("stream ended: " + text);
        text += new TextDecoder().decode(value);
      }
      expect(feed.subscriberCount()).toBe(1);
      ctrl.abort();
      const deadline = Date.now() + 5000;
      while (feed.subscriberCount() > 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(feed.subscriberCount()).toBe(0);
    } finally {
      await ts.stop();
    }
  });
});
