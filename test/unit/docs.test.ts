import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { OPTIONS, envName } from "../../src/config";

const ROOT = join(import.meta.dir, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const readme = read("README.md");
// The `serve` options table is reference: it lives in the operator's guide, not in the README
// (docs/api-decisions.md, "The README is a guide; the reference lives in docs/").
const operations = read("docs/operations.md");
/** The README and every guide in docs/, by path from the repository's root. */
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces become hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}
function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (m) out.add(anchor(m[1]!.trim()));
  }
  return out;
}

describe("the README and the guides stay in step with the code", () => {
  test("every serve option is in the options table of docs/operations.md", () => {
    const rows = operations.split("\n").filter((l) => l.startsWith("| `--"));
    for (const o of OPTIONS) expect(rows.some((r) => r.includes(`\`--${o.flag}\``))).toBe(true);
    // A number's default is the one config.ts uses (e.g. --auth-failures-per-minute 20).
    for (const o of OPTIONS.filter((x) => typeof x.default === "number")) {
      const row = rows.find((r) => r.includes(`\`--${o.flag}\``))!;
      expect(row.split("|")[2]).toContain(`\`${o.default}\``);
    }
    expect(operations).toContain("TEXTWIRE_<NAME>");
    expect(envName("send-rate-per-minute")).toBe("TEXTWIRE_SEND_RATE_PER_MINUTE");
  });

  test("the two newcomer commands are the ones package.json runs", () => {
    const pkg = JSON.parse(read("package.json"));
    expect(readme).toContain("```sh\nnpm install && npm start\n```");
    expect(readme).toContain("```sh\nnpm test\n```");
    expect(pkg.scripts.start).toContain("src/main.ts serve");
    expect(pkg.devDependencies.bun ?? pkg.dependencies.bun).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test("the README is a guide: at most 250 lines, SMSGate named before any hand-built recipe", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
    const smsgate = readme.indexOf("SMSGate");
    expect(smsgate).toBeGreaterThan(0);
    for (const other of ["Shortcuts", "Tasker", "MacroDroid"]) {
      const at = readme.indexOf(other);
      if (at >= 0) expect(at).toBeGreaterThan(smsgate);
    }
    for (const guide of ["forms", "phones", "contacts", "operations", "events", "development", "api"]) {
      expect(readme).toContain(`](docs/${guide}.md)`);
    }
  });

  test("every relative link in the README and the guides points at a file and heading that exist", () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      const text = read(doc).replace(/```[\s\S]*?```/g, "");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const href = m[1]!;
        if (/^[a-z]+:/.test(href)) continue; // https:, mailto:
        const [file, hash] = href.split("#") as [string, string | undefined];
        const target = file === "" ? doc : join(dirname(doc), file);
        let body: string;
        try {
          body = read(target);
        } catch {
          broken.push(`${doc}: ${href} (no such file)`);
          continue;
        }
        if (hash !== undefined && target.endsWith(".md") && !anchorsOf(body).has(hash)) broken.push(`${doc}: ${href} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
