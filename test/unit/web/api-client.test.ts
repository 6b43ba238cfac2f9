import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { address } from "../../../web/api";
import { blankComments } from "../source-text";

describe("the dashboard's typed client: the address it asks", () => {
  test("path parameters are filled in by name and encoded", () => {
    expect(address("/v1/automations/{id}/runs/{runId}/stop", { path: { id: "a/b", runId: "r 1" } })).toBe("/v1/automations/a%2Fb/runs/r%201/stop");
  });
  test("the query keeps its order, writes numbers and booleans as text, and leaves out what is undefined", () => {
    expect(address("/v1/forms", { query: { limit: 100, counts: true, search: undefined } })).toBe("/v1/forms?limit=100&counts=true");
    expect(address("/v1/contacts", { query: { search: "Ann & Bob" } })).toBe("/v1/contacts?search=Ann+%26+Bob");
    expect(address("/v1/session")).toBe("/v1/session");
  });
  test("a missing path parameter is refused before anything is asked", () => {
    expect(() => address("/v1/forms/{id}", {})).toThrow("No value for {id}");
  });
});

/** Every .ts/.tsx file of web/ but the generated types. */
function webFiles(dir = join(import.meta.dir, "../../../web")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? webFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) && !e.name.endsWith(".gen.ts") ? [join(dir, e.name)] : [],
  );
}

describe("every dashboard call is checked by tsc -p web (docs/api-decisions.md, \"The house, round two: a typed dashboard\")", () => {
  const files = webFiles().map((f) => ({ f, text: blankComments(readFileSync(f, "utf8")) }));
  test("is read from the source (sanity: the pages call the typed client)", () => {
    expect(files.filter((x) => /\bapi\s*\.get\(/.test(x.text)).length).toBeGreaterThan(20);
  });
  test("no call of the API but through api.get/post/put/patch/delete (the backup download, /health and /ca.crt are not JSON answers of /v1)", () => {
    const untyped = files.flatMap(({ f, text }) =>
      [...text.matchAll(/fetch\(\s*["`](\/v1\/[^"`]*)["`]/g)].map((m) => `${f}: fetch ${m[1]}`).filter((x) => !x.endsWith("fetch /v1/admin/backup")),
    );
    expect(untyped).toEqual([]);
  });
  test("no API shape written by hand: no `api<…>` type argument, no answer typed as { data: … }", () => {
    const found = files.flatMap(({ f, text }) => [...text.matchAll(/\bapi<|<\{\s*data:/g)].map((m) => `${f}: ${m[0]}`));
    expect(found).toEqual([]);
  });
});
