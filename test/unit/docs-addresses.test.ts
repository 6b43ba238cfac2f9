import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_PORT, DEFAULT_TLS_PORT } from "../../src/config";

const ROOT = join(import.meta.dir, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

/** The phone guide's addresses are the ones that answer after `tls init` (HTTPS on 8443, plain HTTP on 8080). */
test("docs/phones.md gives HTTPS addresses on the HTTPS port and plain HTTP only on the plain port", () => {
  for (const doc of ["docs/phones.md", "README.md"]) {
    const text = read(doc);
    expect(text).not.toContain(`https://192.168.1.50:${DEFAULT_PORT}`);
    expect(text).not.toMatch(new RegExp(`http://[^\\s\`]+:${DEFAULT_TLS_PORT}`));
  }
  const phones = read("docs/phones.md");
  expect(phones).toContain(`https://192.168.1.50:${DEFAULT_TLS_PORT}/api/mobile/v1`);
  expect(phones).toContain("Devices → Add a");
});
