/**
 * The dashboard sizes quoted in docs/development.md, written from the bundle the build makes (never typed by hand):
 * the first load (index.html, its stylesheet and script, compressed as served) and what loads
 * later, between the `dashboard-sizes` markers of docs/development.md, "How the dashboard is built and
 * served".
 *
 *   bun scripts/dashboard-size.ts           bundle web/ and rewrite the guide's figures
 *   bun scripts/dashboard-size.ts --check   write nothing; exit 1 when they are stale
 *
 * `npm run build` (scripts/build.ts) rewrites them too; test/api/ops/dashboard-size.test.ts fails
 * when they differ from what the build computes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildWeb, loadSizes, type LoadSizes, type WebFile } from "../src/dashboard/build";

export const SIZES_DOC = join(import.meta.dir, "..", "docs", "development.md");
const START = "<!-- dashboard-sizes: written by scripts/build.ts from the bundle -->";
const END = "<!-- /dashboard-sizes -->";

/** What each lazily loaded package is, and when a page asks for it. */
const LATER: Record<string, { what: string; when: string }> = {
  uplot: { what: "the chart library `uplot`", when: "loads with the Overview" },
  uqr: { what: "the QR code library `uqr`", when: 'loads with the "Add a phone" wizard' },
  "libphonenumber-js": { what: "the phone number formatter `libphonenumber-js` (its smallest metadata)", when: "loads with the first page that shows a number" },
};

const kb = (bytes: number) => `${Math.max(1, Math.round(bytes / 1024))} KB`;

/** The sentence between the markers. */
export function sizesText(s: LoadSizes): string {
  const later = s.later.map((l) => {
    const known = l.packages.map((p) => LATER[p]).find(Boolean);
    return known ? `${known.what} (${kb(l.bytes)}) ${known.when}` : `\`${l.path.replace(/^.*\//, "")}\` (${kb(l.bytes)}${l.packages.length ? `: ${l.packages.join(", ")}` : ""}) loads when a page needs it`;
  });
  const tail = later.length === 0 ? "" : later.length === 1 ? `; later, ${later[0]}` : `; later, ${later.slice(0, -1).join(", ")}, and ${later.at(-1)}`;
  return `The first load is ${kb(s.firstLoad.bytes)} compressed (brotli: the page, its stylesheet and its script)${tail}.`;
}

/** The guide's text with the figures of `s` between the markers (throws when the markers are missing). */
export function withSizes(doc: string, s: LoadSizes): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/development.md has no ${START} … ${END} markers`);
  return doc.slice(0, a + START.length) + sizesText(s) + doc.slice(b);
}

/** Rewrites the guide's figures from these built files; answers whether it changed. */
export function writeSizes(files: WebFile[]): boolean {
  const have = readFileSync(SIZES_DOC, "utf8");
  const want = withSizes(have, loadSizes(files));
  if (want !== have) writeFileSync(SIZES_DOC, want);
  return want !== have;
}

if (import.meta.main) {
  const files = await buildWeb();
  if (process.argv.includes("--check")) {
    const have = readFileSync(SIZES_DOC, "utf8");
    if (withSizes(have, loadSizes(files)) !== have) {
      console.error("docs/development.md's dashboard sizes are stale: run `bun scripts/dashboard-size.ts` (or `npm run build`)");
      process.exit(1);
    }
  } else console.log(writeSizes(files) ? `wrote ${SIZES_DOC}` : "docs/development.md's dashboard sizes are current");
}
