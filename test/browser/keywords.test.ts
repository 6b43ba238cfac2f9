import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * Settings → Automatic replies (keyword phrases, one per line, with what each list matches and a
 * confirmation for everyday words) and Keyword replies (add, edit, switch off, delete with a
 * confirmation), at 1280 and 390 px, checked with axe: docs/api-decisions.md, "Keyword phrases"
 * and "Keyword replies".
 */
let server: ServerProcess;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  await server.api("/account/profile", { method: "PUT", json: { name: "Rosa's Bakery", country: "US", timeZone: "UTC" } });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let phoneSeq = 100;
/** A phone's report of a text it received. */
async function inbound(body: string): Promise<string> {
  const from = `+1415555${String(phoneSeq++).padStart(4, "0")}`;
  const res = await fetch(`${server.url}/v1/messages/${server.adminKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body }) });
  expect(res.status).toBe(201);
  return from;
}
const contactOf = async (phone: string) => (await server.api(`/contacts?search=${encodeURIComponent(phone.slice(1))}`)).data.contacts[0];

/** The keyword lists are on Settings → Texting rules; keyword replies under Automations. */
async function openSettings(page: Page) {
  await signIn(page, server.url, server.adminKey, "/settings/texting");
  await page.getByRole("heading", { level: 1, name: "Texting rules" }).waitFor();
}

describe("Settings: keyword phrases and keyword replies", () => {
  for (const [label, screen, width] of [["1280", DESKTOP, 1280], ["390", PHONE, 390]] as const) {
    test(`at ${label} px: a multi-word opt-out phrase stays one phrase; everyday words ask first; a keyword reply is added, changed, switched off and deleted`, async () => {
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        await openSettings(page);
        const optOut = page.getByLabel("Words that stop all texts");
        await optOut.waitFor();
        // What each list matches, from its own words.
        await page.getByText('"STOP", "stop!", "Stopall" → stops all texts to that number; "stop by later" → nothing').waitFor();
        await optOut.fill("STOP\nstop texting me");
        await page.getByText('"STOP", "stop!", "Stop texting me" → stops all texts to that number; "stop by later" → nothing').waitFor();
        // Try a text before saving.
        await page.getByLabel("Try a customer's text").fill("Stop texting me!");
        await page.getByText("This text stops all texts to that number.").waitFor();
        await page.getByLabel("Try a customer's text").fill("stop by later");
        await page.getByText(/This text is not one of these keywords/).waitFor();
        await page.getByRole("button", { name: "Save words" }).click();
        await page.getByText("Words saved.").waitFor();
        await page.reload();
        await optOut.waitFor();
        expect(await optOut.inputValue()).toBe("STOP\nSTOP TEXTING ME");
        expect((await server.api("/account/settings")).data.settings.optOutKeywords).toEqual(["STOP", "STOP TEXTING ME"]);
        // A text of exactly that phrase opts out; its words alone do not.
        const me = await inbound("me");
        const phrase = await inbound("Stop texting me");
        expect((await contactOf(me)).optedOut).toBe(false);
        expect((await contactOf(phrase)).optedOut).toBe(true);

        // An everyday word asks first; "Go back" saves nothing.
        await optOut.fill("STOP\nstop texting me\nme");
        await page.getByRole("button", { name: "Save words" }).click();
        const ask = page.getByRole("dialog", { name: "Use everyday words as keywords?" });
        await ask.getByText(/"me": a customer who texts just that stops all texts to that number/).waitFor();
        await expectAccessible(page, `the everyday-words question at ${label} px`);
        await ask.getByRole("button", { name: "Go back" }).click();
        expect((await server.api("/account/settings")).data.settings.optOutKeywords).toEqual(["STOP", "STOP TEXTING ME"]);
        await page.getByRole("button", { name: "Save words" }).click();
        await ask.getByRole("button", { name: "Save anyway" }).click();
        await page.getByText("Words saved.").waitFor();
        expect((await server.api("/account/settings")).data.settings.optOutKeywords).toEqual(["STOP", "STOP TEXTING ME", "ME"]);
        await server.api("/account/settings", { method: "PUT", json: { optOutKeywords: null } });

        // Keyword replies (under Automations): a STOP word is refused in plain words, next to the field.
        await page.goto(`${server.url}/automations`);
        await page.getByRole("link", { name: "Keyword replies" }).click();
        await page.getByRole("heading", { level: 2, name: "Keyword replies" }).waitFor();
        const keywords = page.getByLabel("Keywords", { exact: true });
        await keywords.fill("stop");
        await page.getByLabel("Reply", { exact: true }).fill("We're open 9–5, Mon–Sat.");
        await page.getByRole("button", { name: "Add keyword reply" }).click();
        await page.locator("#kr-keywords-error").getByText(/"STOP" already stops all texts/).waitFor();
        expect(await keywords.getAttribute("aria-invalid")).toBe("true");
        await keywords.fill("hours\nwhen are you open");
        await page.getByLabel("Tags to add to the customer (optional)").fill("asked-hours");
        await page.getByLabel("Set the customer's status").selectOption("responded");
        await page.getByRole("button", { name: "Add keyword reply" }).click();
        await page.getByText("Added the reply to HOURS, WHEN ARE YOU OPEN.").waitFor();
        const row = page.getByRole("row", { name: /HOURS, WHEN ARE YOU OPEN/ });
        await row.getByText("tag asked-hours; status Responded").waitFor();
        await expectAccessible(page, `keyword replies at ${label} px`);
        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await screenshot(page, `settings-keywords-${label}`);
        const asked = await inbound("Hours?");
        const reply = (await server.api(`/messages?contactId=${(await contactOf(asked)).id}`)).data.messages;
        expect(reply.map((m: any) => [m.content, m.priority])).toEqual([["We're open 9–5, Mon–Sat.", "high"]]);

        // Edit it.
        await page.getByRole("button", { name: "Edit the reply to HOURS, WHEN ARE YOU OPEN" }).click();
        await page.getByRole("heading", { name: "Change the reply to HOURS, WHEN ARE YOU OPEN" }).waitFor();
        await page.getByLabel("Reply", { exact: true }).fill("Open 9 to 5, Monday to Saturday.");
        await page.getByRole("button", { name: "Save keyword reply" }).click();
        await page.getByText("Saved the reply to HOURS, WHEN ARE YOU OPEN.").waitFor();
        await row.getByText("Open 9 to 5, Monday to Saturday.").waitFor();
        // Switch it off and on.
        await page.getByRole("button", { name: "Switch off the reply to HOURS, WHEN ARE YOU OPEN" }).click();
        await row.getByText("Off", { exact: true }).waitFor();
        expect((await server.api("/keyword-replies")).data.keywordReplies[0].isActive).toBe(false);
        await page.getByRole("button", { name: "Switch on the reply to HOURS, WHEN ARE YOU OPEN" }).click();
        await row.getByText("On", { exact: true }).waitFor();
        // Delete asks first.
        await page.getByRole("button", { name: "Delete the reply to HOURS, WHEN ARE YOU OPEN" }).click();
        const del = page.getByRole("dialog", { name: "Delete the reply to HOURS, WHEN ARE YOU OPEN?" });
        await del.getByText(/will no longer get "Open 9 to 5, Monday to Saturday."/).waitFor();
        await expectAccessible(page, `the delete question at ${label} px`);
        await del.getByRole("button", { name: "Keep it" }).click();
        expect((await server.api("/keyword-replies")).data.keywordReplies).toHaveLength(1);
        await page.getByRole("button", { name: "Delete the reply to HOURS, WHEN ARE YOU OPEN" }).click();
        await del.getByRole("button", { name: "Delete reply" }).click();
        await page.getByText("Deleted the reply to HOURS, WHEN ARE YOU OPEN.").waitFor();
        await page.getByText("No keyword replies yet.").waitFor();
        expect((await server.api("/keyword-replies")).data.keywordReplies).toEqual([]);
        expect(await sidewaysOverflow(page, width)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
