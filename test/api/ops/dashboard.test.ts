import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliDecompressSync } from "node:zlib";
import { startTestServer, type TestServer } from "../../helpers/server";
import { DASHBOARD_PAGES, parseAcceptEncoding } from "../../../src/dashboard/assets";

/** The budget for the JavaScript of a first load, compressed. */
const FIRST_LOAD_JS_BUDGET = 150 * 1024;

/** fetch without Bun's automatic decompression, so the encoding and sizes are the wire's. */
const raw = (url: string, encoding: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { "Accept-Encoding": encoding, ...(init.headers as Record<string, string>) }, decompress: false } as RequestInit);

describe("the dashboard is served at /", () => {
  let ts: TestServer;
  let html: string;
  beforeAll(async () => {
    ts = await startTestServer();
    html = await (await fetch(`${ts.url}/`)).text();
  });
  afterAll(() => ts.stop());

  test("/ and every page URL answer the app's page with a strict CSP and no caching", async () => {
    for (const p of ["/", ...DASHBOARD_PAGES.map((x) => `/${x}`), "/messages/0196f1f0-0000-7000-8000-000000000000", "/contacts/abc"]) {
      const res = await fetch(`${ts.url}${p}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      expect(await res.text()).toBe(html);
    }
  });

  test("the page has no inline script or style, and names its assets by content hash", () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((a) => /^\/assets\/main-[a-z0-9]{6,}\.js$/.test(a))).toBe(true);
    expect(assets.some((a) => /^\/assets\/main-[a-z0-9]{6,}\.css$/.test(a))).toBe(true);
    expect(html).not.toMatch(/https?:\/\//); // no CDN, no external font
  });

  test("hashed assets are cached for a year, immutable; brotli or gzip when accepted, identity otherwise", async () => {
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
    const plain = await raw(`${ts.url}${js}`, "identity");
    expect(plain.status).toBe(200);
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    const source = new Uint8Array(await plain.arrayBuffer());

    const br = await raw(`${ts.url}${js}`, "gzip, deflate, br");
    expect(br.headers.get("content-encoding")).toBe("br");
    const brBytes = new Uint8Array(await br.arrayBuffer());
    expect(brBytes.length).toBeLessThan(source.length / 2);
    expect(new Uint8Array(brotliDecompressSync(brBytes))).toEqual(source);

    const gz = await raw(`${ts.url}${js}`, "gzip");
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(new Uint8Array(Bun.gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toEqual(source);

    const refused = await raw(`${ts.url}${js}`, "br;q=0, gzip;q=0");
    expect(refused.headers.get("content-encoding")).toBeNull();
  });

  test(`the first load's JavaScript is under ${FIRST_LOAD_JS_BUDGET / 1024} KB compressed`, async () => {
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
    const preloads = [...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    let total = 0;
    for (const s of [...scripts, ...preloads]) {
      const res = await raw(`${ts.url}${s}`, "gzip, br");
      total += (await res.arrayBuffer()).byteLength;
    }
    expect(scripts.length).toBeGreaterThan(0);
    expect(total).toBeGreaterThan(1000);
    expect(total).toBeLessThan(FIRST_LOAD_JS_BUDGET);
  });

  test("HEAD answers like GET without a body; an unknown asset is 404; other methods are not served", async () => {
    const head = await fetch(`${ts.url}/overview`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await head.text()).toBe("");
    const missing = await fetch(`${ts.url}/assets/main-nothere.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).code).toBe("NOT_FOUND");
    expect((await fetch(`${ts.url}/`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${ts.url}/nowhere`)).status).toBe(404);
  });

  test("the API is unchanged beside it", async () => {
    expect((await ts.api("/forms")).status).toBe(200);
    expect((await fetch(`${ts.url}/health`)).status).toBe(200);
  });
});

describe("Accept-Encoding parsing", () => {
  test("names, q=0 refusals and case", () => {
    expect([...parseAcceptEncoding("gzip, deflate, br")]).toEqual(["gzip", "deflate", "br"]);
    expect(parseAcceptEncoding("BR;q=0.5, gzip;q=0").has("br")).toBe(true);
    expect(parseAcceptEncoding("br;q=0, gzip;q=0.0").size).toBe(0);
    expect(parseAcceptEncoding(null).size).toBe(0);
  });
});
