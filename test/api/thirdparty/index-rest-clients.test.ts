/**
 * SMSGate's own clients against a test server, for devices, health, settings, inbox export and
 * logs: the published npm package `android-sms-gateway` (pinned dev dependency) calling through
 * its own methods, and the exact requests client-go makes (its smsgateway/client.go: plural
 * paths, Basic auth, JSON bodies as Go's encoder writes them, integer error codes)
 * (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Client, { HealthStatus, LimitPeriod, SimSelectionMode, type HttpClient } from "android-sms-gateway";
import { expectStatus, startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";

let ts: TestServer;
const phones: SmsGateEmulator[] = [];
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  for (const p of phones) p.disconnect();
  await ts.stop();
});

/** An error as a client sees it: the status and SMSGate's body. */
class ApiError extends Error {
  constructor(readonly status: number, readonly body: unknown) {
    super(`HTTP ${status}: ${JSON.stringify(body)}`);
  }
}

/** A fetch-based HttpClient as the package's README writes one, tolerant of empty 202/204 answers. */
function fetchClient(): HttpClient & { calls: Array<{ method: string; url: string }> } {
  const calls: Array<{ method: string; url: string }> = [];
  const go = async (method: string, url: string, headers: Record<string, string> = {}, body?: unknown) => {
    calls.push({ method, url });
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (!res.ok) throw new ApiError(res.status, parsed);
    return parsed;
  };
  return {
    calls,
    get: (url, headers) => go("GET", url, headers),
    post: (url, body, headers) => go("POST", url, headers, body),
    put: (url, body, headers) => go("PUT", url, headers, body),
    patch: (url, body, headers) => go("PATCH", url, headers, body),
    delete: (url, headers) => go("DELETE", url, headers),
  };
}

async function phone(name: string) {
  const token = (await expectStatus(await ts.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  const p = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, name });
  await p.register(token);
  await p.loadSettings();
  phones.push(p);
  return p;
}

async function until<T>(what: string, fn: () => T | undefined | false): Promise<T> {
  const end = Date.now() + 10_000;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

describe("the npm client android-sms-gateway 3.0", () => {
  test("getDevices, getHealth, getSettings / updateSettings / patchSettings, exportInbox, getLogs, deleteDevice", async () => {
    const http = fetchClient();
    const api = new Client(ts.accountId, ts.adminKey, http, `${ts.url}/3rdparty/v1`);
    const p = await phone("Shop phone");
    await p.connect();

    const devices = await api.getDevices();
    expect(devices.map((d) => d.id)).toEqual([p.id]);
    expect(devices[0]).toMatchObject({ name: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String), lastSeen: expect.any(String) });

    const health = await api.getHealth();
    expect(health.status).toBe(HealthStatus.Pass);
    expect(Object.keys(health.checks).sort()).toEqual(["applier", "database", "queue"]);

    // An admin key reads the account's signing key in the document (docs/api-decisions.md, "SMSGate: signing key in the settings document, and re-sent history").
    // SMSGate's server answers snake_case (its API description), whatever the npm client's types say.
    expect(await api.getSettings()).toEqual({ webhooks: { signing_key: expect.any(String) } } as never);
    await api.updateSettings({ messages: { limitPeriod: LimitPeriod.PerHour, limitValue: 120, simSelectionMode: SimSelectionMode.RoundRobin }, ping: { intervalSeconds: 30 } });
    await api.patchSettings({ webhooks: { retryCount: 3 } });
    expect(await api.getSettings()).toEqual({ messages: { limit_period: LimitPeriod.PerHour, limit_value: 120, sim_selection_mode: SimSelectionMode.RoundRobin }, ping: { interval_seconds: 30 }, webhooks: { retry_count: 3, signing_key: expect.any(String) } } as never);
    await until("SettingsUpdated", () => p.events.some((e) => e.event === "SettingsUpdated"));
    const refused = await api.patchSettings({ messages: { limitValue: -1 } }).catch((e) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 400, data: "VALIDATION_ERROR" });

    await api.exportInbox({ deviceId: p.id, since: new Date("2026-11-01T00:00:00Z"), until: new Date("2026-11-20T00:00:00Z") });
    const asked = await until("MessagesExportRequested", () => p.events.find((e) => e.event === "MessagesExportRequested"));
    expect(JSON.parse(asked.data)).toMatchObject({ since: "2026-11-01T00:00:00Z", until: "2026-11-20T00:00:00Z" });

    const logs = await api.getLogs(new Date("2026-11-01T00:00:00Z"), new Date("2026-11-02T00:00:00Z")).catch((e) => e);
    expect(logs).toBeInstanceOf(ApiError);
    expect(logs.status).toBe(501);
    expect(Number.isInteger(logs.body.code)).toBe(true);

    await api.deleteDevice(p.id);
    expect(await api.getDevices()).toEqual([]);
    const gone = await api.deleteDevice(p.id).catch((e) => e);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ code: 404, data: "DEVICE_NOT_FOUND" });

    // The package's own paths: singular where it uses them, nothing outside /3rdparty/v1.
    for (const c of http.calls) expect(new URL(c.url).pathname.startsWith("/3rdparty/v1/")).toBe(true);
  });
});

describe("client-go's exact requests", () => {
  /** client-go's rest.Client: Content-Type only with a body; its Authorization header; Go's default User-Agent. */
  const goRequest = (method: string, path: string, payload?: unknown) =>
    fetch(`${ts.url}/3rdparty/v1${path}`, {
      method,
      headers: {
        Authorization: "Basic " + Buffer.from(`${ts.accountId}:${ts.adminKey}`).toString("base64"),
        "User-Agent": "Go-http-client/1.1",
        "Accept-Encoding": "gzip",
        ...(payload === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });

  test("ListDevices, CheckHealth, ExportInbox, RefreshInbox, GetLogs, GetSettings / UpdateSettings / ReplaceSettings, DeleteDevice", async () => {
    const p = await phone("Back office phone");
    await p.connect();

    const devices = await expectStatus(await goRequest("GET", "/devices"), 200);
    expect(devices.some((d: { id: string }) => d.id === p.id)).toBe(true);

    const health = await expectStatus(await goRequest("GET", "/health"), 200);
    expect(health).toMatchObject({ status: "pass", releaseId: expect.any(Number) });

    // Go's time.Time encodes as RFC 3339 with nanoseconds when there are any.
    const exportRes = await goRequest("POST", "/inbox/export", { deviceId: p.id, since: "2026-11-01T00:00:00Z", until: "2026-11-01T23:59:59.5Z" });
    expect(exportRes.status).toBe(202);
    await until("MessagesExportRequested", () => p.events.find((e) => e.event === "MessagesExportRequested"));
    // RefreshInbox: deviceId and triggerWebhooks are omitted when empty (omitempty).
    expect((await goRequest("POST", "/inbox/refresh", { since: "2026-11-01T00:00:00Z", until: "2026-11-02T00:00:00Z" })).status).toBe(202);
    expect((await goRequest("POST", "/inbox/refresh", { deviceId: p.id, since: "2026-11-01T00:00:00Z", until: "2026-11-02T00:00:00Z", messageTypes: ["SMS"], triggerWebhooks: true })).status).toBe(202);

    const logs = await goRequest("GET", "/logs?from=2026-11-01T00%3A00%3A00Z&to=2026-11-02T00%3A00%3A00Z");
    expect(logs.status).toBe(501);
    const logsBody = (await logs.json()) as { code: unknown };
    expect(Number.isInteger(logsBody.code)).toBe(true);

    // UpdateSettings is a PATCH and ReplaceSettings a PUT, both with client-go's snake_case keys.
    const patched = await expectStatus(await goRequest("PATCH", "/settings", { messages: { limit_period: "PerMinute", limit_value: 15 }, webhooks: { retry_count: 2 } }), 200);
    expect(patched).toMatchObject({ messages: { limit_period: "PerMinute", limit_value: 15 }, webhooks: { retry_count: 2 } });
    const replaced = await expectStatus(await goRequest("PUT", "/settings", { ping: { interval_seconds: 45 }, receiver: { content_provider_enabled: true } }), 200);
    expect(replaced).toEqual({ ping: { interval_seconds: 45 }, receiver: { content_provider_enabled: true }, webhooks: { signing_key: expect.any(String) } });
    expect(await expectStatus(await goRequest("GET", "/settings"), 200)).toEqual(replaced);
    const bad = await goRequest("PATCH", "/settings", { messages: { limit_period: "Hourly" } });
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as { code: unknown };
    expect(badBody).toMatchObject({ code: 400, data: "VALIDATION_ERROR" });
    expect(Number.isInteger(badBody.code)).toBe(true);

    // DeleteDevice: url.PathEscape(id); 204 with no body (client-go skips decoding on 204).
    const del = await goRequest("DELETE", `/devices/${encodeURIComponent(p.id)}`);
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
    const again = await goRequest("DELETE", `/devices/${encodeURIComponent(p.id)}`);
    expect(again.status).toBe(404);
    expect(Number.isInteger(((await again.json()) as { code: unknown }).code)).toBe(true);
  });
});
