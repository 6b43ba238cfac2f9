import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { spawnServer } from "../../helpers/spawn-server";
import { tempDir } from "../../helpers/server";

/**
 * The team is told exactly once across a kill (docs/api-decisions.md, "The owner hears back", the
 * team is told): requests acknowledged, the server killed with SIGKILL before and while the
 * notifier runs, started again — every request is told, in texts to the team's mobile, none twice.
 */
const dir = tempDir("textwire-team-kill-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MOBILE = "+14155550177";

test("requests acknowledged before a kill are told once after the restart", async () => {
  const db = join(dir, "t.db");
  const args = ["--team-notice-gap", "1s"];
  let s = await spawnServer(db, args);
  const key = s.key!;
  const api = async (url: string, path: string, init: { method?: string; json?: unknown; cookie?: string; csrf?: string } = {}) => {
    const headers: Record<string, string> = init.cookie ? { Cookie: init.cookie, "X-CSRF-Token": init.csrf! } : { Authorization: `Bearer ${key}` };
    if (init.json !== undefined) headers["Content-Type"] = "application/json";
    return fetch(`${url}/v1${path}`, { method: init.method ?? "GET", headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
  };
  try {
    const form = ((await (await api(s.url, "/forms", { method: "POST", json: { name: "Contact us", messageTemplate: "Thanks!", fields: [{ name: "message", type: "longText" }], settings: { delayMinutes: 0 } } })).json()) as any).data.form;
    // A staff person with a mobile who wants to hear about requests.
    const inv = ((await (await api(s.url, "/invitations", { method: "POST", json: { role: "staff", email: "sam@bakery.example" } })).json()) as any).data;
    const token = String(inv.url).split("#")[1];
    const joined = await fetch(`${s.url}/v1/invitations/accept`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token, name: "Sam", email: "sam@bakery.example", password: "flour-and-sugar-9" }) });
    expect(joined.status).toBe(201);
    const cookie = (joined.headers.get("set-cookie") ?? "").split(";")[0]!;
    const csrf = ((await joined.json()) as any).data.csrfToken as string;
    expect((await api(s.url, "/people/me", { method: "PATCH", json: { phoneNumber: MOBILE, notifications: { submissions: true } }, cookie, csrf })).status).toBe(200);

    let sent = 0;
    const submit = async (url: string) => {
      const r = await fetch(`${url}/v1/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1415555${String(1000 + sent).padStart(4, "0")}`, message: `Request ${sent}` }) });
      expect(r.status).toBe(200);
      sent++;
    };
    // Kill at once after the 200s (before the notifier's first look), then again a moment later
    // (while it may be writing), each time with new requests acknowledged.
    for (const wait of [0, 4_000, 5_200]) {
      for (let i = 0; i < 5; i++) await submit(s.url);
      await Bun.sleep(wait);
      s.proc.kill("SIGKILL");
      await s.proc.exited;
      s = await spawnServer(db, args);
    }
    // Every request is told; the gap between texts batches what is left, so wait for all of them.
    const deadline = Date.now() + 40_000;
    let texts: any[] = [];
    let told = 0;
    while (Date.now() < deadline) {
      const all = ((await (await api(s.url, "/messages?limit=100")).json()) as any).data.messages as any[];
      texts = all.filter((m) => m.recipientPhone === MOBILE);
      told = texts.reduce((n, m) => n + (m.content.startsWith("New request") ? 1 : Number(m.content.match(/^(\d+) new requests/)?.[1] ?? 0)), 0);
      if (told >= sent) break;
      await Bun.sleep(500);
    }
    expect(told).toBe(sent);
    // Each text is about requests not told before: ids in single texts never repeat.
    const links = texts.map((m) => m.content.match(/\/inbox\/([0-9a-f-]{36})$/)?.[1]).filter(Boolean);
    expect(new Set(links).size).toBe(links.length);
  } finally {
    s.proc.kill("SIGKILL");
    await s.proc.exited;
  }
}, 120_000);
