/**
 * The access log of a real `textwire serve` process: stopped with SIGTERM, it has written every
 * request's line, keys redacted. Moved from the HTTP API tests: it spawns the server.
 */
import { describe, expect, test } from "bun:test";

describe("access log of a spawned serve", () => {
  test("a serve that is stopped with SIGTERM has written every request's line, keys redacted", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const root = join(import.meta.dir, "..", "..", "..");
    const dir = mkdtempSync(join(tmpdir(), "textwire-log-"));
    const proc = Bun.spawn([join(root, "node_modules", ".bin", "bun"), "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--db", join(dir, "t.db"), "--log-format", "json"], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!/listening on (http:\/\/\S+)/.test(out)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`server exited: ${out}`);
        out += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      const url = out.match(/listening on (http:\/\/\S+)/)![1].replace("localhost", "127.0.0.1");
      const bad = "txwire_sk_" + "A".repeat(40);
      const statuses = await Promise.all(
        // A key in the path (SMSGate-style messages routes) is what the log must not show.
        Array.from({ length: 15 }, (_, i) => fetch(`${url}/v1/messages/${bad}/next?i=${i}`).then((r) => r.status)),
      );
      expect(statuses.every((st) => st >= 400)).toBe(true);
      proc.kill("SIGTERM");
      const stderr = await new Response(proc.stderr).text();
      expect(await proc.exited).toBe(0);
      const lines = stderr.split("\n").filter((l) => l.includes('"msg":"request"'));
      expect(lines.length).toBe(15);
      expect(stderr).toContain("txwire_sk_…AAAA");
      expect(stderr).not.toContain(bad);
    } finally {
      proc.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
