/**
 * The layers of src/ (docs/api-decisions.md, "Layers: dependencies point down"), checked on the
 * import graph read from the source:
 * - no run-time import cycle (type-only imports are erased and cannot make one);
 * - src/db imports nothing from src/services or src/http, not even a type;
 * - src/services imports nothing from src/http, nor the container (deps.ts, app.ts);
 * - the leaf layers (domain, lib, queue, limits) import from no layer above them.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The file a relative specifier names, or null for a package (or a file outside src/). */
function resolveSpecifier(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) {
    if (c.startsWith(SRC + "/") && existsSync(c) && statSync(c).isFile()) return c;
  }
  return null;
}

/**
 * Every import, type-only ones included: `import … from`, `import type …`, `export … from`,
 * side-effect `import "…"` and `import("…")` (also as a type). Anchored at a line's start, so a
 * comment that quotes an import does not count.
 */
const ANY_IMPORT = /^[ \t]*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]*?\s+from\s+)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;

const transpilers = { ts: new Bun.Transpiler({ loader: "ts" }), tsx: new Bun.Transpiler({ loader: "tsx" }) };

interface Graph {
  /** Imports that exist when the code runs (Bun erases the type-only ones). Static only: an `import()` runs after both modules have loaded. */
  runtime: Map<string, string[]>;
  /** Every import, types included. */
  all: Map<string, string[]>;
}

function importGraph(): Graph {
  const runtime = new Map<string, string[]>();
  const all = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8").replace(/^#!.*/, "");
    const scanned = transpilers[file.endsWith(".tsx") ? "tsx" : "ts"].scanImports(text);
    runtime.set(file, scanned.filter((i) => i.kind !== "dynamic-import").flatMap((i) => resolveSpecifier(file, i.path) ?? []));
    all.set(file, [...text.matchAll(ANY_IMPORT)].flatMap((m) => resolveSpecifier(file, m[1] ?? m[2]) ?? []));
  }
  return { runtime, all };
}

/** One cycle per strongly connected component (Tarjan), as a path `a → b → … → a`. */
function findCycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  // A concrete path through each component: breadth-first from its first node back to itself.
  return components.map((component) => {
    const inside = new Set(component);
    const start = component[component.length - 1];
    const prev = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!inside.has(w)) continue;
        if (w === start) {
          const path = [start];
          for (let x: string | undefined = v; x !== undefined && x !== start; x = prev.get(x)) path.splice(1, 0, x);
          return [...path, start];
        }
        if (!prev.has(w)) prev.set(w, v), queue.push(w);
      }
    }
    return component;
  });
}

const rel = (p: string) => relative(SRC, p);
const layerOf = (p: string) => rel(p).split("/")[0];

/** `from → to` for each import from a file in `from` layers into a file in `banned` (layer dirs or root files). */
function crossings(graph: Map<string, string[]>, from: string[], banned: string[]): string[] {
  const found: string[] = [];
  for (const [file, deps] of graph) {
    if (!from.includes(layerOf(file))) continue;
    for (const d of deps) if (banned.includes(layerOf(d))) found.push(`${rel(file)} → ${rel(d)}`);
  }
  return found;
}

const graph = importGraph();

describe("the import graph of src/", () => {
  test("is read from the source (sanity: known imports are found, types included)", () => {
    expect(graph.runtime.size).toBeGreaterThan(100);
    const deps = graph.all.get(join(SRC, "deps.ts"))!;
    expect(deps).toContain(join(SRC, "services/messages.ts"));
    // A type-only import is in the full graph but not the run-time one.
    const context = join(SRC, "http/context.ts");
    expect(graph.all.get(context)).toContain(join(SRC, "db/stores/sessions.ts"));
    expect(graph.runtime.get(context)).not.toContain(join(SRC, "db/stores/sessions.ts"));
  });

  test("the cycle finder reports a cycle as a path, and none in a tree", () => {
    const g = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
    ]);
    expect(findCycles(g)).toEqual([["a", "b", "c", "a"]]);
    expect(findCycles(new Map([["a", ["b"]], ["b", []]]))).toEqual([]);
  });

  test("has no run-time import cycle", () => {
    const cycles = findCycles(graph.runtime).map((c) => c.map(rel).join(" → "));
    expect(cycles).toEqual([]);
  });

  test("src/db imports nothing from src/services or src/http (types included)", () => {
    expect(crossings(graph.all, ["db"], ["services", "http", "cli", "deps.ts", "app.ts", "server.ts", "main.ts"])).toEqual([]);
  });

  test("src/services imports nothing from src/http nor the container (types included)", () => {
    expect(crossings(graph.all, ["services"], ["http", "cli", "deps.ts", "app.ts", "server.ts", "main.ts"])).toEqual([]);
  });

  test("domain, lib, queue and limits import from no layer above them (types included)", () => {
    expect(crossings(graph.all, ["domain", "lib", "queue", "limits"], ["db", "services", "http", "cli", "dashboard", "deps.ts", "app.ts", "server.ts", "main.ts"])).toEqual([]);
  });
});
