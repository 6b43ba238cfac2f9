import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, screenshot, startServerProcess, watchErrors, type ServerProcess, expectAccessible, openContext, signIn as signInAt, DESKTOP, PHONE } from "./browser";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";

/**
 * The Devices page and the "Add a phone" wizard in a real browser against a real server process:
 * the empty state, the wizard's token read off the page and used by an emulated SMSGate app
 * (test/helpers/smsgate-emulator.ts, the app's own protocol), "Connected: <name>", the phone
 * listed online with today's count updated live, renaming, the Overview's phones tile, removal
 * with confirmation. axe and screenshots at 1280 and 390 px.
 */
let server: ServerProcess;
let browser: Browser;
let phone: SmsGateEmulator | undefined;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  phone?.disconnect();
  await browser?.close();
  await server?.stop();
});

const signIn = (page: Page, key: string, then: string) => signInAt(page, server.url, key, then);


const fitsWidth = async (page: Page, width: number) => expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(width);

describe("Devices at 1280 px", () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    context = await openContext(browser, DESKTOP);
    page = await context.newPage();
    errors = watchErrors(page);
  });
  afterAll(() => context.close());

  test("with no phone: an empty state that says in plain words what a phone does, and offers the wizard", async () => {
    await signIn(page, server.adminKey, "/devices");
    await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();
    await page.getByRole("heading", { name: "No phones yet" }).waitFor();
    const text = await page.locator("main").textContent();
    expect(text).toContain("Textwire does not send texts by itself");
    expect(text).toContain("SMSGate");
    await expectAccessible(page, "Devices, empty");
    await screenshot(page, "devices-empty-1280");
  }, 30_000);

  test("the wizard shows the address and a fresh token (text and QR), links the CA certificate, waits, and reports the phone connected", async () => {
    await page.getByRole("link", { name: "Add a phone" }).click();
    await page.getByRole("heading", { level: 1, name: "Devices: add a phone" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/devices/add");
    const tokenEl = page.getByTestId("registration-token");
    await tokenEl.waitFor();
    const token = (await tokenEl.textContent())!.trim();
    expect(token).toMatch(/^txwire_reg_\S+$/);
    // The QR codes are drawn (uqr, loaded on demand) and named for screen readers.
    await page.getByRole("img", { name: "QR code of the private token" }).waitFor();
    await page.getByRole("img", { name: "QR code of the server address" }).waitFor();
    const address = await page.locator(".pair-item code.secret").first().textContent();
    expect(address).toMatch(/^https?:\/\/\S+\/api\/mobile\/v1$/);
    // This server has no local CA (no `textwire tls init`): the wizard says when one is needed.
    expect(await page.locator("main").textContent()).toContain("textwire tls init");
    // Served over plain HTTP: the wizard says HTTPS must come first.
    await page.getByRole("heading", { name: "Turn on HTTPS first" }).waitFor();
    await page.getByText("Waiting for the phone to connect").waitFor();
    await expectAccessible(page, "Add a phone");
    await screenshot(page, "devices-wizard-1280");

    // The phone registers with the token read off the page, as SMSGate does.
    phone = new SmsGateEmulator({ base: `${server.url}/api/mobile/v1`, name: "Pixel 7" });
    await phone.register(token);
    expect(await phone.patchDevice()).toBe(204);
    await phone.loadSettings();
    await phone.connect();
    await page.getByRole("heading", { name: "Connected: Pixel 7" }).waitFor({ timeout: 15_000 });
    await expectAccessible(page, "Add a phone, connected");
    await screenshot(page, "devices-wizard-connected-1280");
    expect(errors).toEqual([]);
  }, 45_000);

  test("the phone is listed online; a text it sends updates today's count without reload; it can be renamed", async () => {
    await page.getByRole("link", { name: "See your phones" }).click();
    const row = page.getByRole("row", { name: /Pixel 7/ });
    await row.waitFor();
    expect(await row.textContent()).toContain("Online");
    expect(await row.getByRole("cell").nth(3).textContent()).toBe("0");
    // A text is queued; the phone hears MessageEnqueued, takes it and reports it sent.
    await server.api("/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Your order is ready" } });
    // Well inside the page's own 30 s re-read, so only the live feed can make it in time. (The
    // page's CSP forbids eval, so no waitForFunction with a string: poll the cell.)
    const sentToday = row.getByRole("cell").nth(3);
    const until = Date.now() + 8_000;
    while ((await sentToday.textContent()) !== "1" && Date.now() < until) await Bun.sleep(100);
    expect(await sentToday.textContent()).toBe("1");
    await expectAccessible(page, "Devices, one phone");
    await screenshot(page, "devices-list-1280");

    await page.getByRole("button", { name: "Change Pixel 7" }).click();
    const dialog = page.getByRole("dialog", { name: /^Change / });
    await dialog.waitFor();
    await expectAccessible(page, "Change a phone");
    await screenshot(page, "devices-change-1280");
    await dialog.getByLabel("Name").fill("Shop phone");
    await dialog.getByLabel("Texts a minute, at most").fill("0");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByRole("alert").waitFor();
    expect(await dialog.getByRole("alert").textContent()).toContain("from 1 to");
    await dialog.getByLabel("Texts a minute, at most").fill("20");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByRole("row", { name: /Shop phone/ }).waitFor();
    const listed = (await server.api("/devices")).data.devices;
    expect(listed).toMatchObject([{ name: "Shop phone", sendRatePerMinute: 20, sentToday: 1, online: true }]);
    // Back to the server's default (--send-rate-per-minute, 50).
    await page.getByRole("button", { name: "Change Shop phone" }).click();
    await dialog.getByLabel("Use the server's default rate instead").check();
    await dialog.getByRole("button", { name: "Save" }).click();
    // The phone's own budget (20 parts a minute by default) is below the server's 50.
    await page.getByText("Saved: Shop phone sends at most 20 texts a minute and 200 an hour.").waitFor();
    expect((await server.api("/devices")).data.devices[0].sendRatePerMinute).toBe(50);
    expect(errors).toEqual([]);
  }, 45_000);

  test("the phone's day: \"1 of 200 this hour\"; its limits change in plain words, a bad one is refused by name", async () => {
    const row = page.getByRole("row", { name: /Shop phone/ });
    expect(await row.textContent()).toContain("1 of 200 this hour");
    await page.getByRole("button", { name: "Change Shop phone" }).click();
    const dialog = page.getByRole("dialog", { name: /^Change / });
    await dialog.getByRole("group", { name: /At most this many texts/ }).waitFor();
    expect(await dialog.getByLabel("Per minute").inputValue()).toBe("20");
    await dialog.getByLabel("Per hour").fill("10");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByRole("alert").waitFor();
    // 20 a minute but 10 an hour: the server names what is wrong.
    expect(await dialog.getByRole("alert").textContent()).toContain("partsPerMinute must not be more than partsPerHour");
    await dialog.getByLabel("Per hour").fill("150");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved: Shop phone sends at most 20 texts a minute and 150 an hour.").waitFor();
    await page.getByRole("row", { name: /Shop phone/ }).filter({ hasText: "1 of 150 this hour" }).waitFor();
    expect((await server.api("/devices")).data.devices[0].limits).toEqual({ limits: { partsPerHour: 150 }, sims: [] });
    await expectAccessible(page, "Devices, limits");
    await screenshot(page, "devices-limits-1280");
    expect(errors).toEqual([]);
  }, 30_000);

  test("the Overview shows phones online (n of m) and the backup state", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview", exact: true }).click();
    await page.getByText("Last 7 days").waitFor();
    const tile = page.locator(".tile", { hasText: "Phones online" });
    expect(await tile.locator(".tile-value").textContent()).toBe("1 of 1");
    expect(await page.locator(".tile", { hasText: "Last backup" }).locator(".tile-value").textContent()).toBe("off");
    await expectAccessible(page, "Overview with a phone");
    await screenshot(page, "overview-devices-1280");
  }, 30_000);
});

describe("Devices at 390 px (dark)", () => {
  test("the list, the wizard and the Overview fit the screen and pass axe", async () => {
    const context = await openContext(browser, PHONE);
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await signIn(page, server.adminKey, "/devices");
      // Cards instead of a wide table on a phone's screen.
      await page.getByRole("heading", { level: 2, name: /Shop phone/ }).waitFor();
      expect(await page.getByRole("table").count()).toBe(0);
      expect(await page.getByRole("listitem").filter({ hasText: "Shop phone" }).textContent()).toContain("Sent today1");
      expect(await page.getByRole("listitem").filter({ hasText: "Shop phone" }).textContent()).toContain("This hour1 of 150 this hour");
      await page.getByRole("button", { name: "Change Shop phone" }).waitFor();
      await fitsWidth(page, 390);
      await expectAccessible(page, "Devices at 390 px");
      await screenshot(page, "devices-list-390");
      await page.getByRole("link", { name: "Add a phone" }).click();
      await page.getByRole("img", { name: "QR code of the private token" }).waitFor();
      await fitsWidth(page, 390);
      await expectAccessible(page, "Add a phone at 390 px");
      await screenshot(page, "devices-wizard-390");
      await page.goto(`${server.url}/overview`);
      await page.getByText("Last 7 days").waitFor();
      await fitsWidth(page, 390);
      await expectAccessible(page, "Overview at 390 px");
      await screenshot(page, "overview-devices-390");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 45_000);
});

describe("a standard key's session", () => {
  test("sees the phones but no Add, Change or Remove; the wizard's URL says an admin key is needed", async () => {
    const standard = (await server.api("/api-keys", { method: "POST", json: { permission: "standard_access" } })).data.apiKey;
    const context = await openContext(browser, DESKTOP);
    try {
      const page = await context.newPage();
      await signIn(page, standard, "/devices");
      await page.getByRole("row", { name: /Shop phone/ }).waitFor();
      expect(await page.getByRole("button", { name: /Change|Remove/ }).count()).toBe(0);
      expect(await page.getByRole("link", { name: "Add a phone" }).count()).toBe(0);
      await page.getByText("needs an admin key").waitFor();
      await page.goto(`${server.url}/devices/add`);
      await page.getByRole("heading", { level: 1, name: "Devices: add a phone" }).waitFor();
      await page.getByText("Adding a phone needs an admin key").waitFor();
      expect(await page.getByTestId("registration-token").count()).toBe(0);
      await expectAccessible(page, "Devices, standard key");
    } finally {
      await context.close();
    }
  }, 30_000);
});

describe("removing a phone", () => {
  test("asks first; Keep it changes nothing; Remove phone removes it and its token stops working", async () => {
    const context = await openContext(browser, DESKTOP);
    try {
      const page = await context.newPage();
      await signIn(page, server.adminKey, "/devices");
      await page.getByRole("button", { name: "Remove Shop phone" }).click();
      const dialog = page.getByRole("dialog", { name: "Remove Shop phone?" });
      await dialog.waitFor();
      await expectAccessible(page, "Remove a phone");
      await dialog.getByRole("button", { name: "Keep it" }).click();
      expect((await server.api("/devices")).data.devices).toHaveLength(1);
      await page.getByRole("button", { name: "Remove Shop phone" }).click();
      await dialog.getByRole("button", { name: "Remove phone" }).click();
      await page.getByRole("heading", { name: "No phones yet" }).waitFor();
      expect((await server.api("/devices")).data.devices).toEqual([]);
      // The app is told to register again (401) on its next request.
      expect(await phone!.patchDevice()).toBe(401);
    } finally {
      await context.close();
    }
  }, 30_000);
});
