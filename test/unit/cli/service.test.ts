import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../../src/main";
import { systemdUnit } from "../../../src/domain/systemd-unit";
import { runningCommand } from "../../../src/cli/service";

const root = join(import.meta.dir, "..", "..", "..");

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, isTTY: false });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("textwire service install --dry-run", () => {
  test("prints a unit for the running program and database: own user, restart on failure, ports 80/443, the --domain setting, and where the setup link appears", async () => {
    const r = await cli(["service", "install", "--dry-run", "--db", "/var/lib/textwire/textwire.db", "--domain", "sms.example.com", "--acme-email", "owner@example.com"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("User=textwire");
    expect(r.out).toContain("Restart=on-failure");
    expect(r.out).toContain("AmbientCapabilities=CAP_NET_BIND_SERVICE");
    expect(r.out).toContain("Environment=TEXTWIRE_DB=/var/lib/textwire/textwire.db");
    expect(r.out).toContain("Environment=TEXTWIRE_DOMAIN=sms.example.com");
    expect(r.out).toContain("Environment=TEXTWIRE_ACME_EMAIL=owner@example.com");
    expect(r.out).toContain(`ExecStart=${runningCommand().join(" ")} serve`);
    expect(r.out).toContain("ReadWritePaths=/var/lib/textwire");
    expect(r.out).toContain("setup link");
    expect(r.out).toContain("systemctl enable --now textwire");
    expect(r.out).toContain("useradd --system");
    expect(r.out).not.toMatch(/API key/i);
  });

  test("a relative --db is made absolute; a database under /home keeps home folders visible; another --user is used", async () => {
    const r = await cli(["service", "install", "--dry-run", "--db", "/home/rosa/textwire/shop.db", "--user", "sms"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("User=sms");
    expect(r.out).toContain("ProtectHome=no");
    expect(r.out).toContain("WorkingDirectory=/home/rosa/textwire");
    const rel = await cli(["service", "install", "--dry-run", "--db", "data/x.db"]);
    expect(rel.out).toContain(`Environment=TEXTWIRE_DB=${join(process.cwd(), "data/x.db")}`);
  });

  test("refuses a bad user name or an unknown option, changing nothing", async () => {
    expect((await cli(["service", "install", "--dry-run", "--user", "Bad Name"])).code).toBe(2);
    expect((await cli(["service", "install", "--dry-run", "--no-such-flag", "x"])).code).toBe(2);
    expect((await cli(["service", "frobnicate"])).code).toBe(2);
  });

  test("uninstall --dry-run names what it would stop and remove", async () => {
    const r = await cli(["service", "uninstall", "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("systemctl disable --now textwire");
    expect(r.out).toContain("rm -f /etc/systemd/system/textwire.service");
  });

  test("scripts/textwire.service is what install writes for /usr/local/bin/textwire and /var/lib/textwire", () => {
    const unit = systemdUnit({ exec: ["/usr/local/bin/textwire"], db: "/var/lib/textwire/textwire.db", user: "textwire", env: [["TEXTWIRE_LOG_FORMAT", "json"]], writable: [] });
    expect(readFileSync(join(root, "scripts/textwire.service"), "utf8")).toBe(unit);
  });
});
