import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { tlsPathsFor } from "../../../src/tls/local-ca";
import { tempDir } from "../../helpers/server";
import { freePort } from "../../helpers/pebble";

const root = join(import.meta.dir, "..", "..", "..");
const bun = join(root, "node_modules", ".bin", "bun");
const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(() => procs.forEach((p) => p.kill()));

/**
 * `textwire serve --port P` as the README suggests for a busy 8080, then `tls init` and a restart:
 * the old http://…:P address keeps answering, with 308 to HTTPS, and the start line names both.
 */
describe("forwarding on every port after tls init", () => {
  test("a custom --port keeps answering plain HTTP with 308 to HTTPS; the start line and tls init name the real ports", async () => {
    const dir = tempDir("textwire-https-ports-");
    const db = join(dir, "textwire.db");
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), env: {}, isTTY: false };
    expect(await runCli(["tls", "init", "--db", db], io)).toBe(0);
    expect(lines.join("\n")).toContain("the same --port");
    const plain = freePort();
    const https = freePort();
    const proc = Bun.spawn([bun, "src/main.ts", "serve", "--db", db, "--host", "127.0.0.1", "--port", String(plain), "--https-port", String(https), "--log-format", "json"], {
      cwd: root,
      stdout: "pipe",
      stderr: "ignore",
    });
    procs.push(proc);
    const reader = proc.stdout.getReader();
    let out = "";
    const deadline = Date.now() + 20_000;
    while (!out.includes("Textwire listening on")) {
      if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
      const { done, value } = await reader.read();
      if (done) throw new Error(`server exited: ${out}`);
      out += new TextDecoder().decode(value);
    }
    await Bun.sleep(50);
    const start = out.split("\n").find((l) => l.includes("Textwire listening on"))!;
    expect(start).toContain(`https://127.0.0.1:${https}`);
    expect(start).toContain(`plain HTTP on port ${plain} forwards to HTTPS on port ${https}`);
    // A form published with the old http:// address: the POST is answered 308 (a POST stays a POST).
    const r = await fetch(`http://127.0.0.1:${plain}/v1/forms/abc/webhook?ref=site`, { method: "POST", body: "{}", redirect: "manual" });
    expect(r.status).toBe(308);
    expect(r.headers.get("location")).toBe(`https://127.0.0.1:${https}/v1/forms/abc/webhook?ref=site`);
    // The phone's first step, the CA, is still served on the plain port.
    const ca = await fetch(`http://127.0.0.1:${plain}/ca.crt`);
    expect(ca.status).toBe(200);
    expect(await ca.text()).toBe(await Bun.file(tlsPathsFor(db).caCert).text());
    const health = await fetch(`https://127.0.0.1:${https}/health`, { tls: { ca: await Bun.file(tlsPathsFor(db).caCert).text() } } as RequestInit);
    expect(health.status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });
});
