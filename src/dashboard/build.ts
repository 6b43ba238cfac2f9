import { join } from "node:path";
import { brotliCompressSync, constants as zlib } from "node:zlib";

/**
 * Bundles the dashboard (web/) with Bun's bundler: every asset gets a content hash in its name
 * (cached forever by browsers), and index.html — the one file that is never cached — names them.
 * Used in-process by `npm start` and by scripts/build.ts, which embeds the result in the binary.
 */
export interface WebFile {
  /** URL path: "/index.html" or "/assets/<name>-<hash>.<ext>". */
  path: string;
  bytes: Uint8Array;
  /** Other files this one loads: static imports at once, dynamic ones when the code asks (the bundler's metafile). */
  imports?: Array<{ path: string; kind: "static" | "dynamic" }>;
  /** The npm packages whose code is in this file. */
  packages?: string[];
}

export const WEB_ENTRY = join(import.meta.dir, "../../web/main.tsx");

/**
 * Packages whose browser build (package.json "browser") the bundle must take. Bun.build running in
 * a process that already imported the package (the server's CSV export imports papaparse) reuses
 * the runtime's resolution, its Node build, and then bundles node:stream and node:buffer
 * polyfills: 33 KB more for every first load under `npm start` than in the built binary. Naming
 * the file makes the bundle the same wherever it is made.
 */
const BROWSER_BUILDS: Record<string, string> = { papaparse: "papaparse/papaparse.min.js" };

const browserBuilds: import("bun").BunPlugin = {
  name: "browser-builds",
  setup(build) {
    build.onResolve({ filter: new RegExp(`^(?:${Object.keys(BROWSER_BUILDS).join("|")})$`) }, (args) => ({ path: Bun.resolveSync(BROWSER_BUILDS[args.path], import.meta.dir) }));
  },
};

export async function buildWeb(): Promise<WebFile[]> {
  const result = await Bun.build({
    entrypoints: [WEB_ENTRY],
    target: "browser",
    format: "esm",
    minify: true,
    // The chart library is loaded by the Overview when it draws, not on every first load.
    splitting: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    // Which file loads which, and what is in each: the first-load size below is read from it.
    metafile: true,
    plugins: [browserBuilds],
  });
  if (!result.success) throw new Error("dashboard build failed:\n" + result.logs.map(String).join("\n"));
  const meta = (result as unknown as { metafile?: Metafile }).metafile;
  const files: WebFile[] = [];
  let entry: string | undefined;
  for (const out of result.outputs) {
    const name = out.path.replace(/^.*[\\/]/, "");
    if (name.endsWith(".map")) continue;
    const m = meta?.outputs[`./${name}`];
    files.push({
      path: `/assets/${name}`,
      bytes: new Uint8Array(await out.arrayBuffer()),
      ...(m
        ? {
            imports: m.imports.map((i) => ({ path: `/assets/${i.path.replace(/^\.\//, "")}`, kind: i.kind === "dynamic-import" ? ("dynamic" as const) : ("static" as const) })),
            packages: [...new Set(Object.keys(m.inputs).flatMap((p) => packageOf(p) ?? []))].sort(),
          }
        : {}),
    });
    if (out.kind === "entry-point" && name.endsWith(".js")) entry = `/assets/${name}`;
  }
  const styles = files.filter((f) => f.path.endsWith(".css"));
  if (!entry) throw new Error("dashboard build: no entry script");
  files.push({ path: "/index.html", bytes: new TextEncoder().encode(indexHtml(entry, styles.map((s) => s.path))) });
  return files;
}

/** The part of Bun's metafile read here (esbuild's format). */
interface Metafile {
  outputs: Record<string, { imports: Array<{ path: string; kind: string }>; inputs: Record<string, unknown> }>;
}

/** "node_modules/@preact/signals/dist/x.js" → "@preact/signals"; a Node built-in polyfill → "node:stream"; the app's own files → null. */
function packageOf(input: string): string | null {
  if (input.startsWith("node:")) return input;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  return m ? m[1] : null;
}

/** What a browser downloads, compressed as the server sends it (brotli). */
export interface LoadSizes {
  /** The first page: index.html, the stylesheets and scripts it names and everything they import at once. */
  firstLoad: { bytes: number; files: string[] };
  /** Files fetched only when the code asks for them (a dynamic import), with the packages in each. */
  later: Array<{ path: string; bytes: number; packages: string[] }>;
}

/**
 * The sizes a browser downloads (brotli at the quality the server sends): the first load is
 * index.html plus what it references and their static imports, transitively; what is only
 * imported dynamically comes later. docs/development.md, "How the dashboard is built and served"
 * quotes these figures,
 * written there by scripts/build.ts (test/api/ops/dashboard-size.test.ts fails when they are stale).
 */
export function loadSizes(files: WebFile[]): LoadSizes {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const br = (path: string) => precompress(byPath.get(path)!.bytes).br.length;
  const html = new TextDecoder().decode(byPath.get("/index.html")?.bytes ?? new Uint8Array());
  const first = new Set<string>(["/index.html"]);
  const queue = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
  const dynamic = new Set<string>();
  while (queue.length) {
    const p = queue.shift()!;
    if (first.has(p) || !byPath.has(p)) continue;
    first.add(p);
    for (const i of byPath.get(p)!.imports ?? []) {
      if (i.kind === "static") queue.push(i.path);
      else dynamic.add(i.path);
    }
  }
  // A dynamic chunk's own static imports come with it (unless the first load has them already).
  const later: LoadSizes["later"] = [];
  for (const p of dynamic) {
    if (first.has(p) || !byPath.has(p)) continue;
    const group = new Set<string>([p]);
    for (const q of group) for (const i of byPath.get(q)!.imports ?? []) if (i.kind === "static" && !first.has(i.path)) group.add(i.path);
    later.push({ path: p, bytes: [...group].reduce((n, q) => n + br(q), 0), packages: [...new Set([...group].flatMap((q) => byPath.get(q)!.packages ?? []))].sort() });
  }
  return { firstLoad: { bytes: [...first].reduce((n, p) => n + br(p), 0), files: [...first] }, later };
}

/** The page every dashboard URL answers with: no inline script or style (the CSP forbids them). */
export function indexHtml(script: string, styles: string[]): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    "<title>Textwire</title>",
    '<link rel="icon" href="data:,">',
    ...styles.map((s) => `<link rel="stylesheet" href="${s}">`),
    `<script type="module" src="${script}"></script>`,
    "</head>",
    "<body>",
    '<div id="app"><noscript>The Textwire dashboard needs JavaScript.</noscript></div>',
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** Brotli at its best quality and gzip at level 9: done once per build, never per request. */
export function precompress(bytes: Uint8Array): { br: Uint8Array; gzip: Uint8Array } {
  const br = new Uint8Array(brotliCompressSync(Buffer.from(bytes), { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
  const gzip = Bun.gzipSync(new Uint8Array(bytes), { level: 9 });
  return { br, gzip };
}
