import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { startTestServer } from "../../helpers/server";

// Another process holding SQLite's write lock past the busy timeout (5 s) is the server's state,
// not the client's mistake: every route answers 503 SERVICE_UNAVAILABLE with Retry-After, never 500.
test("a write while another process holds the database lock past the busy timeout is 503 with Retry-After, and changes nothing", async () => {
  const s = await startTestServer();
  const other = new Database(s.dbPath); // arrange: another process's connection
  try {
    const auth = { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" };
    // arrange: that process takes the write lock (the server's own threads, applier and
    // checkpoints, may hold it for a moment: wait for it)
    other.exec("PRAGMA busy_timeout = 10000");
    other.exec("BEGIN IMMEDIATE");
    const res = await fetch(`${s.url}/v1/contacts`, { method: "POST", headers: auth, body: JSON.stringify({ phoneNumber: "+14155550123", firstName: "Ann" }) });
    other.exec("ROLLBACK"); // arrange: and lets it go
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("1");
    const body = (await res.json()) as { status: string; code: string };
    expect(body.status).toBe("error");
    expect(body.code).toBe("SERVICE_UNAVAILABLE");
    const list = (await (await fetch(`${s.url}/v1/contacts`, { headers: auth })).json()) as { data: { contacts: unknown[] } };
    expect(list.data.contacts.length).toBe(0);
  } finally {
    // arrange: (the other connection let go and closed)
    if (other.inTransaction) other.exec("ROLLBACK");
    other.close();
    await s.running.stop();
  }
}, 30_000);
