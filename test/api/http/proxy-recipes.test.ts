import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { LOOPBACK_PROXIES } from "../../../src/config";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";

/**
 * docs/operations.md, "Behind a reverse proxy or a tunnel": each recipe's proxy in front of the
 * real server (--trust-proxy), replayed by a small reverse proxy on loopback that passes the
 * headers that proxy passes. Forms must be given https://<public name>, and a request the proxy
 * marks as plain http must be sent on to https.
 */
const PUBLIC = "sms.example.com";
type Recipe = { name: string; headers: (clientIp: string, proto: string) => Record<string, string> };
const RECIPES: Recipe[] = [
  // Caddy's reverse_proxy: Host kept, X-Forwarded-For/-Proto/-Host set.
  { name: "Caddy", headers: (ip, proto) => ({ Host: PUBLIC, "X-Forwarded-For": ip, "X-Forwarded-Proto": proto, "X-Forwarded-Host": PUBLIC }) },
  // cloudflared: the original Host, X-Forwarded-For and X-Forwarded-Proto, Cf-Connecting-Ip; no X-Forwarded-Host.
  { name: "Cloudflare Tunnel", headers: (ip, proto) => ({ Host: PUBLIC, "X-Forwarded-For": ip, "X-Forwarded-Proto": proto, "Cf-Connecting-Ip": ip }) },
  // Tailscale serve/funnel: the original Host, X-Forwarded-Host/-Proto/-For.
  { name: "Tailscale Funnel", headers: (ip, proto) => ({ Host: PUBLIC, "X-Forwarded-Host": PUBLIC, "X-Forwarded-Proto": proto, "X-Forwarded-For": ip }) },
];

let s: TestServer;
const proxies: Server<unknown>[] = [];
beforeAll(async () => {
  s = await startTestServer({ trustProxy: true, trustedProxies: [...LOOPBACK_PROXIES] });
});
afterAll(async () => {
  for (const p of proxies) p.stop(true);
  await s.stop();
});

/** A reverse proxy on loopback that forwards to the server with the recipe's headers; `proto` is what the visitor used. */
function proxyFor(recipe: Recipe, proto: "https" | "http"): string {
  const upstream = new URL(s.url);
  const p = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const u = new URL(req.url);
      const headers = new Headers(req.headers);
      for (const [k, v] of Object.entries(recipe.headers("203.0.113.7", proto))) headers.set(k, v);
      return fetch(`${upstream.origin}${u.pathname}${u.search}`, { method: req.method, headers, body: req.body, redirect: "manual" });
    },
  });
  proxies.push(p);
  return `http://127.0.0.1:${p.port}`;
}

describe("the proxy and tunnel recipes", () => {
  for (const recipe of RECIPES) {
    test(`${recipe.name}: forms are given https://${PUBLIC}, and a visitor's plain-http request is sent on to https`, async () => {
      const via = proxyFor(recipe, "https");
      const created = await expectStatus(
        await fetch(`${via}/v1/forms`, { method: "POST", headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" }, body: JSON.stringify(formBody()) }),
        201,
      );
      const form = created.data.form;
      expect(form.webhookUrl).toBe(`https://${PUBLIC}/v1/forms/${form.id}/webhook`);
      const submitted = await fetch(`${via}/v1/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+12015550123", firstName: "Ann" }) });
      expect([200, 201, 202]).toContain(submitted.status);
      const plain = proxyFor(recipe, "http");
      const r = await fetch(`${plain}/v1/forms/${form.id}/webhook?src=site`, { method: "POST", body: "{}", redirect: "manual" });
      expect(r.status).toBe(308);
      expect(r.headers.get("location")).toBe(`https://${PUBLIC}/v1/forms/${form.id}/webhook?src=site`);
    });
  }
});
