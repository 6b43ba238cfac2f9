import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import type { Browser } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";
import { tempDir } from "../helpers/server";

/**
 * Settings → Business, Server address, HTTPS and the backup schedule, at 390 and 1280 px, checked
 * with axe: docs/api-decisions.md, "The business's name, the server address and HTTPS without
 * breaking forms".
 */
let server: ServerProcess;
let browser: Browser;
let dir: string;
beforeAll(async () => {
  dir = tempDir("textwire-web-settings-");
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  // An install from before the business name was asked for: its account still has the first
  // start's placeholder name, never chosen by a person (as migration 0028 leaves such accounts).
  const db = new Database(server.dbPath);
  db.exec("PRAGMA busy_timeout = 5000; UPDATE accounts SET name = 'Default account', name_set_at = NULL");
  db.close();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("Settings: business, server address, HTTPS, backups", () => {
  for (const [label, screen, width] of [["1280", DESKTOP, 1280], ["390", PHONE, 390]] as const) {
    test(`at ${label} px: the replies follow the name as it is typed; saving names the business; operators set the address and backups`, async () => {
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        await signIn(page, server.url, server.adminKey, "/");
        if (label === "1280") {
          // Overview asks for the name until it is set.
          await page.getByRole("link", { name: "Add your business name" }).waitFor();
        }
        await page.goto(`${server.url}/settings/business`);
        const name = page.getByLabel("Business name");
        await name.waitFor();
        const help = page.getByTestId("preview-helpReply");
        if (label === "1280") expect(await help.textContent()).toStartWith("this number:");
        await name.fill(`Rosa's Bakery ${label}`);
        expect(await help.textContent()).toBe(`Rosa's Bakery ${label}: texts about your requests. Reply STOP to unsubscribe, START to resubscribe.`);
        expect(await page.getByTestId("preview-optOutReply").textContent()).toBe(`You're unsubscribed from Rosa's Bakery ${label}. Reply START to resubscribe.`);
        await page.getByLabel("Time zone").fill("Europe/London");
        await page.getByRole("button", { name: "Save business details" }).click();
        await page.getByText("Saved. Replies now carry your business name.").waitFor();
        const profile = (await server.api("/account/profile")).data;
        expect(profile).toMatchObject({ name: `Rosa's Bakery ${label}`, nameSet: true, timeZone: "Europe/London" });

        await expectAccessible(page, `settings → business at ${label} px`);
        // The server address (Settings → Server): a bad one is refused in plain words, a good one is used for forms.
        await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Server", exact: true }).click();
        const address = page.getByLabel("Server address", { exact: true });
        await page.getByTestId("server-address-status").waitFor(); // loaded: the saved address is not put in after typing
        await address.fill("https://sms.example.com/v1/forms");
        await page.getByRole("button", { name: "Save server address" }).click();
        await page.getByText("without a path").first().waitFor();
        await address.fill(`https://sms-${label}.example.com`);
        await page.getByRole("button", { name: "Save server address" }).click();
        await page.getByText(`In use: https://sms-${label}.example.com`).waitFor();
        await page.getByTestId("https-status").waitFor();

        // Get a certificate: an IP address is refused in plain words, beside its field (a valid
        // name would ask Let's Encrypt itself: the flow is tested against Pebble in test/slow/ops/acme.test.ts).
        await page.getByRole("heading", { name: "Get a certificate" }).waitFor();
        await page.getByLabel("Public name").fill("192.168.1.20");
        await page.getByRole("button", { name: "Get a certificate" }).click();
        await page.getByText("is an IP address").first().waitFor();
        expect((await server.api("/admin/certificate")).data).toMatchObject({ source: null, state: "off" });

        // Backups: a folder that cannot be written is said at once; a good one is saved.
        const file = join(dir, `file-${label}`);
        writeFileSync(file, "x");
        const folder = page.getByLabel("Backup folder");
        await folder.fill(join(file, "sub"));
        await page.getByRole("button", { name: "Save backup schedule" }).click();
        await page.getByText("cannot write to this folder").first().waitFor();
        await folder.fill(join(dir, `backups-${label}`));
        await page.getByRole("button", { name: "Save backup schedule" }).click();
        await page.getByText("Saved. A backup was made now; the next ones follow this schedule.").waitFor();
        expect((await server.api("/admin/backups")).data).toMatchObject({ scheduled: true, directory: join(dir, `backups-${label}`), source: "setting" });
        // The first backup is made when the schedule is saved, not a day later.
        expect((await server.api("/admin/backups")).data.backups.length).toBeGreaterThanOrEqual(1);

        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await expectAccessible(page, `settings at ${label} px`);
        await screenshot(page, `settings-server-${label}`);
        // Overview no longer asks.
        await page.goto(`${server.url}/`);
        await page.getByRole("heading", { name: "Overview" }).waitFor();
        await page.getByText("Queued").first().waitFor();
        expect(await page.getByRole("link", { name: "Add your business name" }).count()).toBe(0);
        expect(errors).toEqual([]);
        await server.api("/admin/backups", { method: "PUT", json: { directory: null } });
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
