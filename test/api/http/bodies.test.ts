import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

/** A body sent without Content-Length (chunked), in `n` bytes of spaces or the given text. */
function chunked(content: string | number): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  if (typeof content === "string") {
    const mid = Math.floor(content.length / 2);
    return new ReadableStream({
      start(c) {
        c.enqueue(enc.encode(content.slice(0, mid)));
        c.enqueue(enc.encode(content.slice(mid)));
        c.close();
      },
    });
  }
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= content) return c.close();
      c.enqueue(enc.encode(" ".repeat(65_536)));
      sent += 65_536;
    },
  });
}

describe("request bodies over the limits always get the envelope, never Bun's bare 413", () => {
  test("a declared size far beyond every limit: 413 PAYLOAD_TOO_LARGE with details", async () => {
    const res = await fetch(`${s.base}/contacts/import`, {
      method: "POST",
      body: new Uint8Array(60 * 1024 * 1024),
      headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "text/csv" },
    });
    const body = await expectStatus(res, 413);
    expect(body).toMatchObject({ status: "error", code: "PAYLOAD_TOO_LARGE", details: { limit: 50 * 1_048_576, provided: 60 * 1024 * 1024 } });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("a chunked JSON body past 1 MiB is refused while it is read", async () => {
    const res = await fetch(`${s.base}/forms`, { method: "POST", body: chunked(3 * 1024 * 1024), headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" } });
    const body = await expectStatus(res, 413);
    expect(body.details.limit).toBe(1_048_576);
  });

  test("chunked bodies within the limit work, with a Bearer key and with the key in the path", async () => {
    await expectStatus(
      await fetch(`${s.base}/forms`, { method: "POST", body: chunked(JSON.stringify(formBody())), headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" } }),
      201,
    );
    await expectStatus(
      await fetch(`${s.base}/messages/${s.adminKey}`, { method: "POST", body: chunked(JSON.stringify({ phoneNumber: "+12015550123", content: "hi" })), headers: { "Content-Type": "application/json" } }),
      201,
    );
  });
});
