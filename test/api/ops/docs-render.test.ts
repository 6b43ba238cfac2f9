import { afterAll, beforeAll, expect, test } from "bun:test";
import { DOCS_HTML } from "../../../src/http/docs-page";
import { startTestServer, type TestServer } from "../../helpers/server";

/** Just enough DOM to run the docs page's script outside a browser. */
class FakeElement {
  attrs: Record<string, string> = {};
  children: Array<FakeElement | FakeText> = [];
  style: Record<string, string> = {};
  listeners: Record<string, Array<(e: unknown) => void>> = {};
  value = "";
  private text = "";
  constructor(readonly tag: string) {}
  setAttribute(k: string, v: string) {
    this.attrs[k] = v;
  }
  getAttribute(k: string) {
    return this.attrs[k] ?? null;
  }
  appendChild(c: FakeElement | FakeText) {
    this.children.push(c);
    return c;
  }
  set textContent(v: string) {
    this.text = v;
    this.children = [];
  }
  get textContent(): string {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  addEventListener(type: string, fn: (e: unknown) => void) {
    (this.listeners[type] ??= []).push(fn);
  }
  all(): FakeElement[] {
    return this.children.flatMap((c) => (c instanceof FakeElement ? [c, ...c.all()] : []));
  }
  querySelectorAll(sel: string): FakeElement[] {
    const m = /^(\w+)(?:\.([\w-]+))?(?:\[([\w-]+)\])?$/.exec(sel)!;
    return this.all().filter((e) => e.tag === m[1] && (!m[2] || (e.attrs.class ?? "").split(" ").includes(m[2])) && (!m[3] || m[3] in e.attrs));
  }
  visible(): boolean {
    return this.style.display !== "none";
  }
}
class FakeText {
  constructor(readonly textContent: string) {}
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

test("the docs page renders every operation of the document, with parameters and error codes, and filters", async () => {
  const body = new FakeElement("body");
  const byId: Record<string, FakeElement> = {};
  for (const id of ["sub", "filter", "intro", "ops"]) body.appendChild((byId[id] = new FakeElement(id === "filter" ? "input" : "div")));
  const document = {
    createElement: (t: string) => new FakeElement(t),
    createTextNode: (t: string) => new FakeText(t),
    getElementById: (id: string) => byId[id],
    querySelectorAll: (sel: string) => body.querySelectorAll(sel),
  };
  let fetched = "";
  const fakeFetch = (url: string) => {
    fetched = url;
    return fetch(`${s.url}${url}`);
  };
  const js = /<script>([\s\S]*?)<\/script>/.exec(DOCS_HTML)![1];
  new Function("document", "location", "fetch", js)(document, { pathname: "/v1/docs" }, fakeFetch);
  for (let i = 0; i < 100 && !byId.sub.textContent.startsWith("Textwire"); i++) await Bun.sleep(10);
  expect(fetched).toBe("/v1/openapi.json");
  expect(byId.sub.textContent).toContain("OpenAPI 3.1.0");

  const doc = (await (await fetch(`${s.base}/openapi.json`)).json()) as any;
  const ops = byId.ops.querySelectorAll("details.op");
  const count = Object.values<any>(doc.paths).reduce((n, p) => n + Object.keys(p).length, 0);
  expect(ops.length).toBe(count);
  const text = byId.ops.textContent;
  expect(text).toContain("/v1/forms/{id}");
  expect(text).toContain("Create a form");
  expect(text).toContain("limit");
  expect(text).toContain("messageTemplate");
  expect(text).toContain("FORM_NOT_FOUND");
  expect(text).toContain("admin_access");
  expect(byId.intro.textContent).toContain("RATE_LIMIT_EXCEEDED");

  // Typing in the filter hides what does not match.
  byId.filter.listeners.input[0]({ target: { value: "health" } });
  const shown = ops.filter((o) => o.visible());
  expect(shown.length).toBe(1);
  expect(shown[0].textContent).toContain("/health");
});
