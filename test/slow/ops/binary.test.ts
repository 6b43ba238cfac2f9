import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../helpers/server";
import { inspectDatabase } from "../../../src/services/backups";

const ROOT = join(import.meta.dir, "../../..");
const dir = tempDir("textwire-bin-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the compiled binary starts from an empty folder, ignoring a stray .env and bunfig.toml, and answers /health and the embedded dashboard; backups (a Worker) work from it", async () => {
  const build = Bun.spawnSync([process.execPath, join(ROOT, "scripts/build.ts"), "--no-readme"], { cwd: ROOT });
  expect(build.exitCode).toBe(0);
  const bin = join(ROOT, "dist/textwire");
  expect(existsSync(bin)).toBe(true);
  // The build resets the generated module it compiled with (the work tree stays as committed).
  expect(await Bun.file(join(ROOT, "src/dashboard/embedded.gen.ts")).text()).toContain("= [];");

  // If either file were read, the server would fail to start or listen elsewhere.
  writeFileSync(join(dir, ".env"), "TEXTWIRE_PORT=1\nTEXTWIRE_LOG_FORMAT=bogus\nTEXTWIRE_DB=/nonexistent/dir/x.db\n");
  writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./does-not-exist.ts"]\n[serve]\nport = 1\n');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TEXTWIRE_") && v !== undefined) env[k] = v;
  const backupDir = join(dir, "scheduled");
  // A headless install: the account and an operator key from the binary's own commands.
  const cli = (args: string[]) => {
    const r = Bun.spawnSync([bin, ...args, "--json", "--db", join(dir, "x.db")], { cwd: dir, env });
    if (r.exitCode !== 0) throw new Error(`${args.join(" ")}: ${r.stderr.toString()}`);
    return JSON.parse(r.stdout.toString());
  };
  const accountId = cli(["accounts", "create", "--name", "Shop"]).accountId as string;
  const adminKey = cli(["keys", "create", "--account", accountId, "--operator"]).apiKey as string;
  const owner = cli(["users", "add", "--account", accountId, "--email", "owner@shop.example", "--role", "owner", "--name", "Owner"]) as { password: string };
  const proc = Bun.spawn([bin, "serve", "--port", "0", "--host", "127.0.0.1", "--db", join(dir, "x.db"), "--backup-dir", backupDir, "--backup-every", "1s"], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
  try {
    const reader = proc.stdout.getReader();
    let out = "";
    while (!/Textwire listening on \S+/.test(out)) {
      const { done, value } = await reader.read();
      if (done) throw new Error("binary exited: " + out + (await new Response(proc.stderr).text()));
      out += new TextDecoder().decode(value);
    }
    const port = Number(/listening on http:\/\/[^:]+:(\d+)/.exec(out)![1]);
    expect(port).not.toBe(1);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as any).database).toBe("ok");
    // Passwords are checked on their own thread: its entry point is in the binary too.
    const signIn = (password: string) =>
      fetch(`http://127.0.0.1:${port}/v1/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: "owner@shop.example", password }) });
    expect((await signIn(owner.password)).status).toBe(201);
    expect((await signIn("not-the-password")).status).toBe(401);
    const docs = await fetch(`http://127.0.0.1:${port}/v1/docs`);
    expect(docs.status).toBe(200);
    // The dashboard is embedded: its page, and its hashed script precompressed, from the binary alone.
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await page.text();
    const script = /<script[^>]*src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`http://127.0.0.1:${port}${script}`, { headers: { "Accept-Encoding": "br" }, decompress: false } as RequestInit);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-encoding")).toBe("br");
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`http://127.0.0.1:${port}/messages`)).status).toBe(200);

    // Backups run on a Worker: the binary must carry the worker's entry point.
    expect(adminKey).toMatch(/^txwire_sk_/);
    const backup = await fetch(`http://127.0.0.1:${port}/v1/admin/backup`, { method: "POST", headers: { Authorization: `Bearer ${adminKey}` } });
    expect(backup.status).toBe(200);
    const copy = join(dir, "download.db");
    writeFileSync(copy, new Uint8Array(await backup.arrayBuffer()));
    expect(inspectDatabase(copy).integrity).toBe("ok");
    for (let i = 0; i < 100 && !(existsSync(backupDir) && readdirSync(backupDir).some((f) => f.endsWith(".db"))); i++) await Bun.sleep(100);
    const scheduled = readdirSync(backupDir).filter((f) => /^textwire-.*\.db$/.test(f));
    expect(scheduled.length).toBeGreaterThan(0);
    expect(inspectDatabase(join(backupDir, scheduled[0])).integrity).toBe("ok");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(existsSync(join(dir, "x.db"))).toBe(true);
  } finally {
    proc.kill();
  }
}, 120_000);

test("the compiled binary makes a local CA (tls init) and serves HTTPS with it; a client trusting only that CA connects", async () => {
  const bin = join(ROOT, "dist/textwire");
  expect(existsSync(bin)).toBe(true); // built by the test above
  const db = join(dir, "tls", "y.db");
  const init = Bun.spawnSync([bin, "tls", "init", "--ip", "192.168.1.50", "--db", db], { cwd: dir });
  expect(init.stderr.toString()).toBe("");
  expect(init.exitCode).toBe(0);
  const ca = readFileSync(join(dir, "tls", "tls", "ca.crt"), "utf8");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TEXTWIRE_") && v !== undefined) env[k] = v;
  const proc = Bun.spawn([bin, "serve", "--port", "0", "--host", "127.0.0.1", "--db", db], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
  try {
    const reader = proc.stdout.getReader();
    let out = "";
    while (!/Textwire listening on .*\n/.test(out)) {
      const { done, value } = await reader.read();
      if (done) throw new Error("binary exited: " + out + (await new Response(proc.stderr).text()));
      out += new TextDecoder().decode(value);
    }
    const port = Number(/listening on https:\/\/[^:]+:(\d+)/.exec(out)![1]);
    const health = await fetch(`https://127.0.0.1:${port}/health`, { tls: { ca } } as RequestInit);
    expect(health.status).toBe(200);
    expect(((await health.json()) as any).tls.daysLeft).toBeGreaterThan(800);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  } finally {
    proc.kill();
  }
}, 60_000);
