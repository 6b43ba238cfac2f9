/**
 * The read barrier is bounded and the applier Worker comes back: a stuck
 * applier makes API requests answer 503 + Retry-After after BARRIER_MAX_WAIT_MS instead of
 * hanging, and nothing is lost once it moves again; a dead applier is restarted and drains.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BARRIER_MAX_WAIT_MS } from "../../../src/services/intake/intake";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { listTotal } from "../../helpers/reads";

const logged: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
const logger = {
  info: (msg: string, fields?: Record<string, unknown>) => void logged.push({ level: "info", msg, fields }),
  warn: (msg: string, fields?: Record<string, unknown>) => void logged.push({ level: "warn", msg, fields }),
  error: (msg: string, fields?: Record<string, unknown>) => void logged.push({ level: "error", msg, fields }),
};

let s: TestServer;
let formId: string;
beforeAll(async () => {
  s = await startTestServer({ webhookLimitPerMinute: 1_000_000 }, { logger });
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { timezone: "UTC", duplicateWindowMinutes: 0, recipientLimitPerDay: null } }) }), 201)).data.form.id;
});
afterAll(async () => {
  await s.stop();
});

async function post(i: number): Promise<string> {
  const res = await fetch(`${s.base}/forms/${formId}/webhook`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ phoneNumber: `+1415557${String(1000 + i).padStart(4, "0")}`, firstName: `N${i}` }),
  });
  return (await expectStatus(res, 200)).data.messageId;
}

const health = async () => (await expectStatus(await fetch(`${s.url}/health`), 200)).intake;

describe("a stuck applier", () => {
  test("API requests get 503 + Retry-After within the bound; once it moves, every acknowledged submission is there", async () => {
    const WEDGE_MS = BARRIER_MAX_WAIT_MS + 1_500;
    // arrange: the applier stuck for a while, as a wedged worker leaves it (a test-only hook)
    const intake = s.running.deps.intake;
    intake.wedgeApplierForTest(WEDGE_MS);
    const wedgedAt = performance.now();
    // The webhook still answers: its 200 needs only the intake row.
    const ids = await Promise.all(Array.from({ length: 5 }, (_, i) => post(i)));
    expect((await health()).pending).toBeGreaterThan(0);
    const t0 = performance.now();
    const res = await s.api(`/messages/${ids[0]}`);
    const waited = performance.now() - t0;
    const body = await expectStatus(res, 503);
    expect(body).toMatchObject({ status: "error", code: "SERVICE_UNAVAILABLE", details: { retryAfter: 2 } });
    expect(res.headers.get("retry-after")).toBe("2");
    expect(waited).toBeGreaterThanOrEqual(BARRIER_MAX_WAIT_MS - 50);
    // Bounded: a request that waited for the wedged applier would have got its 200, not this 503.
    if (performance.now() - wedgedAt < WEDGE_MS) expect(await health()).toMatchObject({ pending: 5, applier: "behind" });
    // The applier moves again and applies all of them; the same request now answers 200.
    const after = await expectStatus(await s.api(`/messages/${ids[4]}`), 200);
    expect(after.data.id ?? after.data.message?.id).toBe(ids[4]);
    const list = await expectStatus(await s.api(`/messages?formId=${formId}&limit=100`), 200);
    const listed = new Set((list.data.messages ?? list.data).map((m: { id: string }) => m.id));
    for (const id of ids) expect(listed.has(id)).toBe(true);
    expect(await health()).toMatchObject({ pending: 0, applier: "ok" });
  }, 30_000);
});

describe("a dead applier", () => {
  test("is restarted (one log line) and applies what was acknowledged meanwhile", async () => {
    // arrange: the applier's worker dies, as a crash leaves it (a test-only hook)
    s.running.deps.intake.crashApplierForTest();
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => post(100 + i)));
    let found = 0;
    for (const id of ids) found += (await expectStatus(await s.api(`/messages/${id}`), 200)) ? 1 : 0;
    expect(found).toBe(20);
    // Restarted once: its one log line says so.
    const lines = logged.filter((l) => l.msg.startsWith("submission applier stopped unexpectedly"));
    expect(lines.length).toBe(1);
    expect(lines[0].level).toBe("error");
    expect(await listTotal(s, `/messages?formId=${formId}`)).toBeGreaterThanOrEqual(20);
    expect(await health()).toMatchObject({ pending: 0, applier: "ok" });
  }, 30_000);
});
