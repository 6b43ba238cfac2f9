import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OPTIONS, envName } from "../../src/config";

const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");

describe("the README stays in step with the code", () => {
  test("every serve option is in the README's options table", () => {
    const rows = readme.split("\n").filter((l) => l.startsWith("| `--"));
    for (const o of OPTIONS) expect(rows.some((r) => r.includes(`\`--${o.flag}\``))).toBe(true);
    // A number's default is the one config.ts uses (e.g. --auth-failures-per-minute 20).
    for (const o of OPTIONS.filter((x) => typeof x.default === "number")) {
      const row = rows.find((r) => r.includes(`\`--${o.flag}\``))!;
      expect(row.split("|")[2]).toContain(`\`${o.default}\``);
    }
    expect(readme).toContain("TEXTWIRE_<NAME>");
    expect(envName("send-rate-per-minute")).toBe("TEXTWIRE_SEND_RATE_PER_MINUTE");
  });

  test("the two newcomer commands are the ones package.json runs", () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "package.json"), "utf8"));
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm test");
    expect(pkg.scripts.start).toContain("src/main.ts serve");
    expect(pkg.devDependencies.bun ?? pkg.dependencies.bun).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test("every linked doc exists", () => {
    for (const m of readme.matchAll(/\]\((docs\/[^)#]+)/g)) {
      expect(() => readFileSync(join(import.meta.dir, "..", "..", m[1]))).not.toThrow();
    }
  });
});
