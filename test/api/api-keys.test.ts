import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { newAccount, operatorKey } from "../helpers/accounts";

describe("/v1/api-keys: the account's keys for its admins", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("create shows the key once; the list shows only its last 4 characters; the new key works", async () => {
    const created = await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission: "standard_access" } }), 201);
    expect(created.data.apiKey).toMatch(/^txwire_sk_[A-Za-z0-9]{40}$/);
    expect(created.data.permission).toBe("standard_access");
    expect(created.data.operator).toBe(false);
    const list = await expectStatus(await ts.api("/api-keys"), 200);
    const row = list.data.keys.find((k: any) => k.keyId === created.data.keyId);
    expect(row.key).toBe(`txwire_sk_…${created.data.apiKey.slice(-4)}`);
    expect(JSON.stringify(list)).not.toContain(created.data.apiKey);
    await expectStatus(await ts.api("/forms", { key: created.data.apiKey }), 200);
    // Default permission is standard.
    const dflt = await expectStatus(await ts.api("/api-keys", { method: "POST", json: {} }), 201);
    expect(dflt.data.permission).toBe("standard_access");
  });

  test("a bad permission is 400 and creates nothing; operator keys cannot be made here", async () => {
    const before = (await expectStatus(await ts.api("/api-keys"), 200)).data.keys.length;
    for (const permission of ["operator", "ADMIN", 1, ""]) {
      const b = await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission } }), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
    }
    expect((await expectStatus(await ts.api("/api-keys"), 200)).data.keys.length).toBe(before);
  });

  test("revoke ends the key at once; an unknown, revoked or other account's key is 404", async () => {
    const k = await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission: "admin_access" } }), 201);
    await expectStatus(await ts.api(`/api-keys/${k.data.keyId}`, { method: "DELETE" }), 200);
    expect((await ts.api("/forms", { key: k.data.apiKey })).status).toBe(401);
    expect((await expectStatus(await ts.api(`/api-keys/${k.data.keyId}`, { method: "DELETE" }), 404)).code).toBe("KEY_NOT_FOUND");
    expect((await expectStatus(await ts.api(`/api-keys/nope`, { method: "DELETE" }), 404)).code).toBe("KEY_NOT_FOUND");
    const other = newAccount(ts, { name: "Other" });
    expect((await expectStatus(await ts.api(`/api-keys/${other.keyId}`, { method: "DELETE" }), 404)).code).toBe("KEY_NOT_FOUND");
    expect((await ts.api("/forms", { key: other.apiKey })).status).toBe(200);
  });

  test("the account's last admin key cannot be revoked (409), and a standard key may not manage keys (403)", async () => {
    const other = newAccount(ts, { name: "Solo" });
    const b = await expectStatus(await ts.api(`/api-keys/${other.keyId}`, { method: "DELETE", key: other.apiKey }), 409);
    expect(b.code).toBe("INVALID_STATE");
    expect(b.details.reason).toBe("last-admin-key");
    const std = operatorKey(ts, other.account.id, "standard_access");
    for (const [method, path] of [["GET", "/api-keys"], ["POST", "/api-keys"], ["DELETE", `/api-keys/${other.keyId}`]] as const) {
      const res = await ts.api(path, { method, key: std.apiKey, json: method === "POST" ? {} : undefined });
      expect((await expectStatus(res, 403)).code).toBe("PERMISSION_ERROR");
    }
  });
});
