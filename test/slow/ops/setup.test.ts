import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { accessSync, constants, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import type { CliIO } from "../../../src/cli/common";
import { lockPathOf } from "../../../src/services/backups";
import { OPTIONS, envName } from "../../../src/config";
import { startTestServer, tempDir } from "../../helpers/server";

const ROOT = join(import.meta.dir, "../../..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const freshDb = () => {
  const d = tempDir("textwire-setup-");
  dirs.push(d);
  return join(d, "textwire.db");
};
/** The environment without TEXTWIRE_* (so the test's flags decide) and with node_modules/.bin first. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TEXTWIRE_") && v !== undefined) env[k] = v;
  env.PATH = `${join(ROOT, "node_modules/.bin")}:${env.PATH ?? ""}`;
  return env;
}
function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = s.port!;
  s.stop(true);
  return port;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm install gives a textwire command (package.json bin)", () => {
  test("bin points at an executable entry with a bun shebang, and `npx textwire --version` runs it", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.bin.textwire).toBe("src/main.ts");
    const entry = join(ROOT, pkg.bin.textwire);
    expect(readFileSync(entry, "utf8").split("\n")[0]).toBe("#!/usr/bin/env bun");
    expect(() => accessSync(entry, constants.X_OK)).not.toThrow();
    const p = Bun.spawnSync(["npx", "--no-install", "textwire", "--version"], { cwd: ROOT, env: cleanEnv() });
    expect(p.stdout.toString()).toMatch(/^textwire \d+\.\d+\.\d+ \(schema \d+\)/);
    expect(p.exitCode).toBe(0);
  }, 60_000);
});

describe("npm start forwards SIGTERM and SIGINT: no orphan server keeps the port or the lock", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(signal, async () => {
      const db = freshDb();
      const port = freePort();
      const npm = Bun.spawn(["npm", "start", "--", "--port", String(port), "--host", "127.0.0.1", "--db", db, "--log-format", "json"], {
        cwd: ROOT,
        env: cleanEnv(),
        stdout: "pipe",
        stderr: "pipe",
      });
      let serverPid = 0;
      try {
        const reader = npm.stdout.getReader();
        let out = "";
        while (!/Textwire listening on/.test(out)) {
          const { done, value } = await reader.read();
          if (done) throw new Error("npm start exited: " + out + (await new Response(npm.stderr).text()));
          out += new TextDecoder().decode(value);
        }
        void (async () => {
          for (;;) if ((await reader.read()).done) return;
        })();
        serverPid = JSON.parse(readFileSync(lockPathOf(db), "utf8")).pid;
        expect(serverPid).not.toBe(npm.pid);
        expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);

        npm.kill(signal);
        await npm.exited;
        const deadline = Date.now() + 10_000;
        while (alive(serverPid) && Date.now() < deadline) await Bun.sleep(50);
        expect(alive(serverPid)).toBe(false);
        expect(existsSync(lockPathOf(db))).toBe(false);
        let refused = false;
        try {
          await fetch(`http://127.0.0.1:${port}/health`);
        } catch {
          refused = true;
        }
        expect(refused).toBe(true);
      } finally {
        npm.kill("SIGKILL");
        if (serverPid && alive(serverPid)) process.kill(serverPid, "SIGKILL");
      }
    }, 60_000);
  }
});

describe("first start binds before it creates the first account", () => {
  test("port taken: exit 1 with a clear message, no key printed, no account created, no lock left; the next start prints the key", async () => {
    const db = freshDb();
    const squatter = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("someone else") });
    const out: string[] = [];
    const err: string[] = [];
    const cli: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, isTTY: false };
    try {
      expect(await runCli(["serve", "--port", String(squatter.port), "--host", "127.0.0.1", "--db", db], cli)).toBe(1);
    } finally {
      squatter.stop(true);
    }
    expect(out.join("\n")).not.toMatch(/txwire_sk_/);
    expect(err.join("\n")).toContain("already in use");
    expect(err.join("\n")).toContain("Nothing was created");
    expect(existsSync(lockPathOf(db))).toBe(false);
    const sqlite = new Database(db, { readonly: true });
    expect((sqlite.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n).toBe(0);
    sqlite.close();

    const s = await startTestServer({ db }, { dir: join(db, "..") });
    try {
      expect(s.adminKey).toMatch(/^txwire_sk_/);
      expect((await s.api("/forms")).status).toBe(200);
    } finally {
      await s.running.stop();
    }
  });

  test("the redirect port taken: the HTTPS listener is closed again and nothing is created", async () => {
    const db = freshDb();
    expect(await runCli(["tls", "init", "--db", db], { out() {}, err() {}, env: {}, isTTY: false })).toBe(0);
    const squatter = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("someone else") });
    const port = freePort();
    const err: string[] = [];
    try {
      const code = await runCli(["serve", "--port", String(port), "--redirect-port", String(squatter.port), "--host", "127.0.0.1", "--db", db], {
        out() {},
        err: (l) => err.push(l),
        env: {},
        isTTY: false,
      });
      expect(code).toBe(1);
    } finally {
      squatter.stop(true);
    }
    expect(err.join("\n")).toContain("already in use");
    // The main port was released: it can be bound again at once.
    const again = Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response("") });
    again.stop(true);
    const sqlite = new Database(db, { readonly: true });
    expect((sqlite.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n).toBe(0);
    sqlite.close();
  });
});

describe("the systemd unit takes every setting from the env file; the operations guide works top to bottom", () => {
  const unit = readFileSync(join(ROOT, "scripts/textwire.service"), "utf8");
  const readme = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");
  const lines = unit.split("\n").filter((l) => !l.startsWith("#"));

  test("ExecStart passes no options; defaults are Environment= lines of real options, overridable by the env file", () => {
    const exec = lines.filter((l) => l.startsWith("ExecStart="));
    expect(exec).toEqual(["ExecStart=/usr/local/bin/textwire serve"]);
    const envNames = new Set(OPTIONS.map((o) => envName(o.flag)));
    const defaults = lines.filter((l) => l.startsWith("Environment=")).map((l) => l.slice("Environment=".length).split("=")[0]);
    expect(defaults.sort()).toEqual(["TEXTWIRE_DB", "TEXTWIRE_LOG_FORMAT"]);
    for (const d of defaults) expect(envNames.has(d)).toBe(true);
    // systemd: EnvironmentFile= overrides Environment=, so it must be there (after them, for readers).
    const fileLine = lines.findIndex((l) => l.startsWith("EnvironmentFile=-/etc/textwire/textwire.env"));
    expect(fileLine).toBeGreaterThan(lines.findLastIndex((l) => l.startsWith("Environment=")));
  });

  test("every TEXTWIRE_ variable the operations guide puts in the env file is a real option", () => {
    const envNames = new Set(OPTIONS.map((o) => envName(o.flag)));
    for (const m of readme.matchAll(/^(TEXTWIRE_[A-Z_]+)=/gm)) expect(envNames.has(m[1])).toBe(true);
    for (const m of unit.matchAll(/#\s+(TEXTWIRE_[A-Z_]+)=/g)) expect(envNames.has(m[1])).toBe(true);
  });

  test("ProtectSystem=strict leaves every backup folder the operations guide gives the service writable", () => {
    const writable = lines.filter((l) => l.startsWith("ReadWritePaths=")).flatMap((l) => l.slice("ReadWritePaths=".length).split(/\s+/));
    expect(lines).toContain("ProtectSystem=strict");
    const dirs = [...readme.matchAll(/--backup-dir (\S+)|TEXTWIRE_BACKUP_DIR=(\/\S+)/g)].map((m) => m[1] ?? m[2]);
    expect(dirs.length).toBeGreaterThan(0);
    for (const d of dirs) expect(writable.some((w) => d === w || d.startsWith(w + "/"))).toBe(true);
  });

  test("the operations guide creates the textwire user (textwire service install does) before anything is chowned to it", () => {
    const created = readme.indexOf("sudo textwire service install");
    expect(created).toBeGreaterThan(0);
    for (const m of readme.matchAll(/chown textwire|sudo -u textwire/g)) expect(m.index!).toBeGreaterThan(created);
  });

  test("the openssl recipe makes what iPhones accept: serverAuth, subjectAltName, at most 825 days", () => {
    const recipe = readme.slice(readme.indexOf("**The same with openssl**"), readme.indexOf("### Your own certificate"));
    expect(recipe).toContain("extendedKeyUsage=serverAuth");
    expect(recipe).toContain("subjectAltName=IP:192.168.1.50");
    const days = [...recipe.matchAll(/-days (\d+)/g)].map((m) => Number(m[1]));
    expect(days).toContain(825);
    expect(recipe).toMatch(/-CA ca\.crt[^\n]*-days 825/);
  });
});

describe("the start line and the plain-HTTP warning", () => {
  /** Runs `textwire serve` until its start line, stops it, and returns stdout's start line and all of stderr. */
  async function startOnce(args: string[], db: string) {
    const proc = Bun.spawn([join(ROOT, "node_modules/.bin/bun"), join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", ...args], {
      cwd: ROOT,
      env: cleanEnv(),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!/Textwire listening on .*\n/.test(out)) {
        const { done, value } = await reader.read();
        if (done) throw new Error("serve exited: " + out + (await new Response(proc.stderr).text()));
        out += new TextDecoder().decode(value);
      }
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      const err = await new Response(proc.stderr).text();
      return { line: /Textwire listening on .*/.exec(out)![0], err };
    } finally {
      proc.kill("SIGKILL");
    }
  }

  test("plain HTTP warns; --trust-proxy does not, and says the proxy does HTTPS", async () => {
    const plain = await startOnce([], freshDb());
    expect(plain.err).toContain("warning: serving plain HTTP");
    const proxied = await startOnce(["--trust-proxy"], freshDb());
    expect(proxied.err).not.toContain("serving plain HTTP");
    expect(proxied.line).toContain("--trust-proxy: forwarded headers honoured from 127.0.0.0/8, ::1");
    const listed = await startOnce(["--trust-proxy", "10.0.0.2,fd00::/8"], freshDb());
    expect(listed.line).toContain("forwarded headers honoured from 10.0.0.2, fd00::/8");
  }, 60_000);

  test("with TLS and --redirect-port the start line names the plain-HTTP port and the HTTPS port", async () => {
    const db = freshDb();
    expect(await runCli(["tls", "init", "--db", db], { out() {}, err() {}, env: {}, isTTY: false })).toBe(0);
    const { line, err } = await startOnce(["--redirect-port", "0"], db);
    expect(line).toMatch(/^Textwire listening on https:\/\/127\.0\.0\.1:\d+ \(.*local CA.*\); plain HTTP on port \d+ forwards to HTTPS on port \d+$/);
    expect(err).not.toContain("serving plain HTTP");
  }, 60_000);
});
