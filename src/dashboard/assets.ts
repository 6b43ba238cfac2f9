import { AppError } from "../errors";
import { EMBEDDED_WEB } from "./embedded.gen";

/**
 * Serves the dashboard: the bundled files embedded in the binary (`npm run build`), or — when
 * none are, as under `npm start` — bundled in-process once, on first use (`warmDashboard()` at
 * start). Every page URL answers index.html (the app routes in the browser), so reload and back
 * work; hashed assets are cached for a year, index.html never.
 */
export const DASHBOARD_PAGES = ["overview", "inbox", "forms", "messages", "conversations", "contacts", "broadcasts", "automations", "devices", "settings", "sign-in", "setup", "invite", "welcome"] as const;

/** default-src 'self' and nothing inline: the dashboard's own files are all it may load or run. */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const IMMUTABLE = "public, max-age=31536000, immutable";

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
};

export interface Asset {
  bytes: Uint8Array;
  br?: Uint8Array;
  gzip?: Uint8Array;
  type: string;
}

const PAGE_RE = new RegExp(`^/(?:${DASHBOARD_PAGES.join("|")})(?:/[^/]*)*$`);

/** Whether a GET for this path is the dashboard's (a page of the app, or one of its assets). */
export function isDashboardPath(path: string): boolean {
  return path === "/" || path === "/index.html" || path.startsWith("/assets/") || PAGE_RE.test(path);
}

let loading: Promise<Map<string, Asset>> | undefined;

/** The dashboard's files, loaded or bundled once per process. */
export function dashboardAssets(): Promise<Map<string, Asset>> {
  loading ??= load().catch((err) => {
    loading = undefined; // a failed bundle (a syntax error while editing) is tried again next time
    throw err;
  });
  return loading;
}

/** Starts bundling at server start so the first visitor does not wait for it. */
export function warmDashboard(onError: (err: unknown) => void): void {
  dashboardAssets().catch(onError);
}

async function load(): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  if (EMBEDDED_WEB.length > 0) {
    const raw = new Map<string, Uint8Array>();
    for (const f of EMBEDDED_WEB) raw.set(f.path, await Bun.file(f.file).bytes());
    for (const [path, bytes] of raw) {
      if (path.endsWith(".br") || path.endsWith(".gz")) continue;
      assets.set(path, { bytes, br: raw.get(path + ".br"), gzip: raw.get(path + ".gz"), type: typeOf(path) });
    }
    return assets;
  }
  // Not embedded: bundle web/ now (imported lazily, so the binary never loads the bundler path).
  const { buildWeb, precompress } = await import("./build");
  for (const f of await buildWeb()) assets.set(f.path, { bytes: f.bytes, ...precompress(f.bytes), type: typeOf(f.path) });
  return assets;
}

function typeOf(path: string): string {
  return TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream";
}

/** The answer for a dashboard GET: the asset, or index.html for a page URL. */
export async function serveDashboard(path: string, acceptEncoding: string | null): Promise<Response> {
  const assets = await dashboardAssets();
  const isAsset = path.startsWith("/assets/");
  const asset = isAsset ? assets.get(path) : assets.get("/index.html");
  if (!asset) throw new AppError("NOT_FOUND", { message: "No such dashboard file; reload the page to get the current version" });
  const headers: Record<string, string> = {
    "Content-Type": asset.type,
    "Cache-Control": isAsset ? IMMUTABLE : "no-cache",
    Vary: "Accept-Encoding",
    "X-Content-Type-Options": "nosniff",
  };
  if (!isAsset) {
    headers["Content-Security-Policy"] = DASHBOARD_CSP;
    headers["Referrer-Policy"] = "same-origin";
    headers["X-Frame-Options"] = "DENY";
  }
  const accepts = parseAcceptEncoding(acceptEncoding);
  let body = asset.bytes;
  if (asset.br && accepts.has("br")) {
    body = asset.br;
    headers["Content-Encoding"] = "br";
  } else if (asset.gzip && accepts.has("gzip")) {
    body = asset.gzip;
    headers["Content-Encoding"] = "gzip";
  }
  return new Response(body, { status: 200, headers });
}

/** Codings the client accepts (a `;q=0` refuses one). */
export function parseAcceptEncoding(header: string | null): Set<string> {
  const set = new Set<string>();
  for (const part of (header ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (q && Number(q.slice(2)) === 0) continue;
    set.add(name);
  }
  return set;
}
