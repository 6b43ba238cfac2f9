/**
 * The dashboard sizes in docs/development.md are the build's: the figures between its `dashboard-sizes` markers
 * are what scripts/build.ts computes from the bundle (first load = index.html, what it references
 * and their static imports, brotli as served), never prose typed by hand.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { buildWeb, loadSizes, precompress, type WebFile } from "../../../src/dashboard/build";
import { SIZES_DOC, sizesText, withSizes } from "../../../scripts/dashboard-size";
import { startTestServer } from "../../helpers/server";

let files: WebFile[];
beforeAll(async () => {
  // As in a running server (`npm start` bundles in-process after its own modules loaded): the
  // server's CSV export has imported papaparse's Node build before the dashboard is bundled.
  await import("papaparse");
  files = await buildWeb();
}, 60_000);

const file = (path: string, text: string, imports: WebFile["imports"] = [], packages: string[] = []): WebFile => ({ path, bytes: new TextEncoder().encode(text), imports, packages });
const br = (text: string) => precompress(new TextEncoder().encode(text)).br.length;

describe("the dashboard sizes in docs/development.md come from the build", () => {
  test("docs/development.md carries exactly the figures the build computes (`bun scripts/dashboard-size.ts` rewrites them)", () => {
    const doc = readFileSync(SIZES_DOC, "utf8");
    const want = withSizes(doc, loadSizes(files));
    if (doc !== want) throw new Error(`docs/development.md's dashboard sizes are stale: run \`bun scripts/dashboard-size.ts\`.\nThe build says: ${sizesText(loadSizes(files))}`);
    expect(doc).toContain(sizesText(loadSizes(files)));
  }, 60_000);

  test("the first load is the page, its stylesheet and script, counted as the server sends them; lazy chunks come later", () => {
    const s = loadSizes(files);
    const html = new TextDecoder().decode(files.find((f) => f.path === "/index.html")!.bytes);
    const named = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(s.firstLoad.files.sort()).toEqual(["/index.html", ...named].sort());
    // The bytes the server sends for each (src/dashboard/assets.ts serves precompress()'s brotli).
    const served = s.firstLoad.files.reduce((n, p) => n + precompress(files.find((f) => f.path === p)!.bytes).br.length, 0);
    expect(s.firstLoad.bytes).toBe(served);
    expect(s.later.map((l) => l.packages).flat().sort()).toEqual(["libphonenumber-js", "uplot", "uqr"]);
  });

  test("a running server sends exactly that many bytes for its first page (brotli accepted)", async () => {
    const s = await startTestServer();
    try {
      const raw = (path: string) => fetch(`${s.url}${path}`, { headers: { "Accept-Encoding": "gzip, br" }, decompress: false } as RequestInit);
      const first = loadSizes(files).firstLoad;
      let sent = 0;
      for (const p of first.files) {
        const res = await raw(p === "/index.html" ? "/" : p);
        expect(`${p} ${res.status} ${res.headers.get("content-encoding")}`).toBe(`${p} 200 br`);
        sent += (await res.arrayBuffer()).byteLength;
      }
      expect(sent).toBe(first.bytes);
    } finally {
      await s.stop();
    }
  });

  test("the bundle made in a process that already loaded the server's modules takes the browser builds: no Node polyfill", () => {
    expect(files.flatMap((f) => (f.packages ?? []).filter((p) => p.startsWith("node:")))).toEqual([]);
    expect(files.find((f) => f.path.endsWith(".js") && f.packages?.includes("papaparse"))).toBeDefined();
  });

  test("static imports are followed transitively; a dynamic import and its own imports come later", () => {
    const files = [
      file("/index.html", '<link rel="stylesheet" href="/assets/a.css"><script type="module" src="/assets/main.js"></script>'),
      file("/assets/a.css", "body{color:red}"),
      file("/assets/main.js", "main", [{ path: "/assets/shared.js", kind: "static" }, { path: "/assets/chart.js", kind: "dynamic" }]),
      file("/assets/shared.js", "shared", [{ path: "/assets/deep.js", kind: "static" }]),
      file("/assets/deep.js", "deep"),
      file("/assets/chart.js", "chart", [{ path: "/assets/chart-dep.js", kind: "static" }, { path: "/assets/shared.js", kind: "static" }], ["uplot"]),
      file("/assets/chart-dep.js", "dep", [], ["uplot"]),
    ];
    const s = loadSizes(files);
    expect(s.firstLoad.files.sort()).toEqual(["/assets/a.css", "/assets/deep.js", "/assets/main.js", "/assets/shared.js", "/index.html"]);
    expect(s.later).toEqual([{ path: "/assets/chart.js", bytes: br("chart") + br("dep"), packages: ["uplot"] }]);
    expect(sizesText(s)).toBe(`The first load is 1 KB compressed (brotli: the page, its stylesheet and its script); later, the chart library \`uplot\` (1 KB) loads with the Overview.`);
    expect(() => withSizes("no markers here", s)).toThrow("markers");
  });
});
