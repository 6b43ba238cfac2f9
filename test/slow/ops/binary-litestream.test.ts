import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../helpers/server";
import { freePort, PEBBLE_MISSING, pebbleInstalled, startPebble } from "../../helpers/pebble";

/**
 * One file that carries everything (docs/operations.md): the compiled executable embeds its
 * target's Litestream. linux-x64: the binary alone, copied to an empty folder, replicates.
 * linux-arm64 (the Raspberry Pi): the build embeds the Litestream it finds — the npm package
 * when the registry has it, or a file given with --litestream-linux-arm64 — and says so plainly
 * when it has none.
 */
const ROOT = join(import.meta.dir, "../../..");
const dir = tempDir("textwire-bin-ls-");
const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(() => {
  for (const p of procs) p.kill();
  rmSync(dir, { recursive: true, force: true });
});
const build = (...args: string[]) => {
  const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts/build.ts"), "--no-readme", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
};

describe("the executable carries Litestream", () => {
  test("linux-x64: the executable alone in an empty folder replicates, with Litestream put in place from inside it", async () => {
    const b = build();
    expect(b.code).toBe(0);
    expect(b.out).toContain("Litestream for linux-x64 embedded");
    // The generated module is empty again after the build (the work tree stays as committed).
    expect(await Bun.file(join(ROOT, "src/services/litestream-embedded.gen.ts")).text()).toContain("= null;");
    const alone = join(dir, "alone");
    Bun.spawnSync(["mkdir", "-p", alone]);
    copyFileSync(join(ROOT, "dist/textwire"), join(alone, "textwire"));
    Bun.spawnSync(["chmod", "755", join(alone, "textwire")]);
    const replica = join(dir, "replica");
    const tmp = join(dir, "tmp");
    Bun.spawnSync(["mkdir", "-p", tmp]);
    const env: Record<string, string> = { PATH: "/usr/bin:/bin", TMPDIR: tmp, HOME: dir };
    const proc = Bun.spawn([join(alone, "textwire"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", join(alone, "t.db"), "--replicate", `file://${replica}`], { cwd: alone, env, stdout: "pipe", stderr: "pipe" });
    procs.push(proc);
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(replica, "generations")) && Date.now() < deadline) await Bun.sleep(100);
    expect(existsSync(join(replica, "generations"))).toBe(true);
    const extracted = readdirSync(join(tmp, `textwire-${process.getuid!()}`)).filter((f) => f.startsWith("litestream-"));
    expect(extracted.length).toBe(1);
    const sha = createHash("sha256").update(readFileSync(join(ROOT, "node_modules/@flydotio/litestream-linux-x64/litestream"))).digest("hex");
    expect(extracted[0]).toBe(`litestream-${sha.slice(0, 16)}`);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 180_000);

  test("the compiled executable gets a public certificate (acme-client inside it) from Pebble and serves HTTPS with it", async () => {
    if (!pebbleInstalled()) return console.warn(PEBBLE_MISSING);
    const d = join(dir, "acme");
    Bun.spawnSync(["mkdir", "-p", d]);
    const plain = freePort();
    const https = freePort();
    const ca = (await startPebble(d, { httpPort: plain }))!;
    const proc = Bun.spawn([join(ROOT, "dist/textwire"), "serve", "--db", join(d, "t.db"), "--host", "127.0.0.1", "--domain", "localhost", "--port", String(plain), "--https-port", String(https), "--acme-directory", ca.directoryUrl, "--acme-ca-file", ca.caFile], { stdout: "ignore", stderr: "ignore" });
    procs.push(proc);
    try {
      const root = await ca.issuingRoot();
      let status = 0;
      // The compiled start, the ACME order and Pebble's checks take seconds on a quiet machine and
      // far longer on a busy one: the test waits for HTTPS, it does not time it.
      const deadline = Date.now() + 150_000;
      while (status !== 200 && Date.now() < deadline) {
        try {
          status = (await fetch(`https://localhost:${https}/health`, { tls: { ca: root } } as RequestInit)).status;
        } catch {
          await Bun.sleep(100);
        }
      }
      expect(status).toBe(200);
    } finally {
      proc.kill();
      ca.stop();
    }
  }, 180_000);

  test("linux-arm64: the build embeds the Litestream it is given, or says plainly that it has none", () => {
    const registryHasIt = Bun.spawnSync(["npm", "view", "@flydotio/litestream-linux-arm64@1.0.1", "version"], { stdout: "pipe", stderr: "pipe" }).exitCode === 0;
    const plain = build("--target", "linux-arm64");
    expect(plain.code).toBe(0);
    if (registryHasIt) expect(plain.out).toContain("Litestream for linux-arm64 embedded");
    else {
      console.warn("this machine's npm registry has no @flydotio/litestream-linux-arm64: checked the plain message, and the embedding with --litestream-linux-arm64");
      expect(plain.out).toContain("No Litestream for linux-arm64");
      expect(plain.out).toContain("--litestream-linux-arm64");
    }
    // Given a file (as a Pi owner would pass Litestream's own linux-arm64 release), the executable carries those exact bytes.
    const given = join(ROOT, "node_modules/@flydotio/litestream-linux-x64/litestream");
    const withFile = build("--target", "linux-arm64", "--litestream-linux-arm64", given);
    expect(withFile.code).toBe(0);
    expect(withFile.out).toContain("Litestream for linux-arm64 embedded");
    const bin = readFileSync(join(ROOT, "dist/textwire-linux-arm64"));
    expect(bin.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    expect(bin[18]).toBe(0xb7); // e_machine = EM_AARCH64
    const bytes = readFileSync(given);
    const slice = bytes.subarray(Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 4096);
    expect(bin.indexOf(slice)).toBeGreaterThan(0);
  }, 240_000);
});
