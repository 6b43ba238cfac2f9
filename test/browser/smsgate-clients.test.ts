import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * Settings → SMSGate clients at 390 and 1280 px, checked with axe: the login, where the password
 * comes from, copy buttons, and the rules for texts from SMSGate apps (docs/api-decisions.md,
 * "SMSGate third-party API").
 */
let server: ServerProcess;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("Settings: SMSGate clients", () => {
  for (const [label, screen, width] of [["1280", DESKTOP, 1280], ["390", PHONE, 390]] as const) {
    test(`at ${label} px: the login and server address with copy buttons; the rules are saved, a bad limit refused in plain words`, async () => {
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        await signIn(page, server.url, server.adminKey, "/settings/developers");
        await page.getByRole("heading", { name: "SMSGate clients" }).waitFor();
        const view = (await server.api("/account/smsgate-clients")).data;
        await page.getByText(view.login, { exact: true }).waitFor();
        await page.getByText(`${server.url}/3rdparty/v1`, { exact: true }).waitFor();
        expect(await page.getByText("An API key of this account", { exact: false }).count()).toBeGreaterThan(0);
        for (const what of ["server address", "login", "webhook signing key"]) await page.getByRole("button", { name: `Copy the ${what}` }).waitFor();

        const limit = page.getByLabel("Most texts to one number per 24 hours");
        await limit.fill("0");
        await page.getByRole("button", { name: "Save SMSGate rules" }).click();
        await page.getByText("must be a whole number from 1 to 1000").first().waitFor();
        await limit.fill("4");
        await page.getByLabel("Quiet hours: texts wait until they end").check();
        await page.getByLabel("Quiet from").fill("22:00");
        await page.getByLabel("Quiet until").fill("07:30");
        await page.getByRole("button", { name: "Save SMSGate rules" }).click();
        await page.getByText("Saved. Texts sent from SMSGate apps follow these rules from now on.").waitFor();
        expect((await server.api("/account/smsgate-clients")).data).toMatchObject({ recipientLimitPerDay: 4, quietHours: { start: "22:00", end: "07:30" } });

        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await expectAccessible(page, `SMSGate clients at ${label} px`);
        await screenshot(page, `settings-smsgate-${label}`);
        expect(errors).toEqual([]);
        await server.api("/account/smsgate-clients", { method: "PUT", json: { recipientLimitPerDay: null, quietHours: null } });
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
