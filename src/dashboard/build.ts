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
}

export const WEB_ENTRY = join(import.meta.dir, "../../web/main.tsx");

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
  });
  if (!result.success) throw new Error("dashboard build failed:\n" + result.logs.map(String).join("\n"));
  const files: WebFile[] = [];
  let entry: string | undefined;
  for (const out of result.outputs) {
    const name = out.path.replace(/^.*[\\/]/, "");
    if (name.endsWith(".map")) continue;
    files.push({ path: `/assets/${name}`, bytes: new Uint8Array(await out.arrayBuffer()) });
    if (out.kind === "entry-point" && name.endsWith(".js")) entry = `/assets/${name}`;
  }
  const styles = files.filter((f) => f.path.endsWith(".css"));
  if (!entry) throw new Error("dashboard build: no entry script");
  files.push({ path: "/index.html", bytes: new TextEncoder().encode(indexHtml(entry, styles.map((s) => s.path))) });
  return files;
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
