import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, sidewaysOverflow, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * The first run and people in a real browser: the setup address `serve` printed on an empty
 * database → the owner signed in on the next steps → "Invite a person" → the invited staff person
 * joins with the link and has no Settings → API keys.
 */
let server: ServerProcess;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess([], { empty: true }), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test("setup → signed in → invite → the invited staff person joins and sees no API keys", async () => {
  expect(server.setupUrl).toMatch(/^http:\/\/\S+:\d+\/setup#[A-Za-z0-9_-]{43}$/);
  const owner = await openContext(browser, DESKTOP);
  const page = await owner.newPage();
  const errors = watchErrors(page);
  await page.goto(server.setupUrl!.replace(/^http:\/\/[^/]+/, server.url));
  await page.getByLabel("Business name").fill("Rosa's Bakery");
  await page.getByLabel("Your name").fill("Rosa Diaz");
  await page.getByLabel("E-mail").fill("rosa@bakery.example");
  await page.getByLabel("Password").fill("warm-bread-at-six");
  await expectAccessible(page, "setup");
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("heading", { level: 1, name: /Welcome/ }).waitFor();
  for (const step of ["Make your first form", "Connect your first phone", "Turn on HTTPS", "Set up backups"]) await page.getByRole("link", { name: step }).waitFor();
  await expectAccessible(page, "next steps");

  await page.getByRole("link", { name: "Settings", exact: true }).click();
  await page.getByRole("link", { name: "Developers", exact: true }).first().click();
  await page.getByRole("heading", { level: 2, name: "API keys" }).waitFor();
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "People", exact: true }).click();
  await page.getByRole("heading", { level: 2, name: "People" }).waitFor();
  await page.getByLabel("Role", { exact: true }).selectOption("staff");
  await page.getByRole("button", { name: "Invite a person" }).click();
  const link = await page.getByLabel("Invitation link").inputValue();
  expect(link).toMatch(/\/invite#[A-Za-z0-9_-]{43}$/);
  await page.getByRole("button", { name: "Copy link" }).waitFor();
  await expectAccessible(page, "settings with people");

  const staff = await openContext(browser, PHONE);
  const p2 = await staff.newPage();
  const errors2 = watchErrors(p2);
  await p2.goto(link);
  await p2.getByLabel("Your name").fill("Sam Staff");
  await p2.getByLabel("E-mail").fill("sam@bakery.example");
  await p2.getByLabel("Password").fill("flour-and-sugar-9");
  await expectAccessible(p2, "invitation");
  expect(await sidewaysOverflow(p2, 390)).toEqual([]);
  await p2.getByRole("button", { name: "Join" }).click();
  await p2.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
  await p2.goto(`${server.url}/settings/me`);
  await p2.getByRole("heading", { level: 2, name: "Your account" }).waitFor();
  expect(await p2.getByRole("heading", { name: "API keys" }).count()).toBe(0);
  expect(await p2.getByRole("heading", { name: "People" }).count()).toBe(0);

  // Signing in again with e-mail and password works (sign out first).
  await p2.getByRole("button", { name: "Sign out", exact: true }).click();
  await p2.getByLabel("E-mail").fill("sam@bakery.example");
  await p2.getByLabel("Password").fill("flour-and-sugar-9");
  await p2.getByRole("button", { name: "Sign in" }).click();
  await p2.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
  expect(errors).toEqual([]);
  expect(errors2).toEqual([]);
  await owner.close();
  await staff.close();
}, 90_000);
