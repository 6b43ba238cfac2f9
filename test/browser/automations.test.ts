import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * The Automations page in a real browser, by roles and names: a two-step automation built in the
 * builder (a refused step shown on its field, the time line in plain words, each text's preview),
 * a submission through the form's webhook, the run with its scheduled steps; "Start for existing
 * contacts" counted before a second click; turning off and deleting asked first. The same pages
 * at 390 px without sideways scroll. axe on every page. docs/api-decisions.md, "Dashboard: Automations".
 */
let server: ServerProcess;
let browser: Browser;
let formId = "";
const FORM = "Bike repairs booking";
const LONG_FORM = "Kitchen and bathroom renovation enquiries for the north-east district";
const LONG_AUTOMATION = "Thank-you, review request and survey reminder for every renovation enquiry";

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  formId = (
    await server.api("/forms", {
      method: "POST",
      json: {
        name: FORM,
        messageTemplate: "Thanks {{firstName}}, we got your booking.",
        fields: [
          { name: "firstName", type: "text", label: "First name" },
          { name: "appointment", type: "date" },
        ],
        settings: { delayMinutes: 0, timezone: "UTC" },
      },
    })
  ).data.form.id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A date `days` from today, as a date field holds it. */
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

async function submit(id: string, json: Record<string, unknown>) {
  const res = await fetch(`${server.url}/v1/forms/${id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
  if (res.status !== 200) throw new Error(`webhook: ${res.status} ${await res.text()}`);
  return ((await res.json()) as any).data.contactId as string;
}

async function fits(page: Page, what: string, width: number) {
  const out = await sidewaysOverflow(page, width);
  if (out.length) throw new Error(`${what} at ${width} px:\n${out.join("\n")}`);
}

describe("desktop, 1280 px", () => {
  test("build a two-step automation, see its time line, submit the form, see the run and its scheduled texts; start for existing contacts; turn off and delete", async () => {
    const context = await openContext(browser, DESKTOP, { timezoneId: "UTC" });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await signIn(page, server.url, server.adminKey, "/overview");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Automations", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Automations" }).waitFor();
    await page.getByText("No automations yet.").waitFor();
    await expectAccessible(page, "automations (empty)");
    await page.getByRole("link", { name: "New automation" }).click();
    await page.getByRole("heading", { level: 1, name: "Automations: new automation" }).waitFor();

    await page.getByLabel("Name (for you)").fill("Thanks and reminder");
    await page.getByLabel("Starts when someone fills in").selectOption({ label: FORM });
    // Text 1: two days after the form, at 10:00; its preview reads as Ann gets it.
    await page.getByLabel("Text 1: message").fill("Thanks {{firstName}}! How did we do? {{reviewLink | https://g.page/r/bikes}}");
    await page.getByLabel("Text 1: how many").fill("2");
    await page.getByLabel("Text 1: unit").selectOption("d");
    await page.getByLabel("Text 1: at (time of day)").fill("10:00");
    expect(await page.getByTestId("step-preview-0").textContent()).toBe("Thanks Ann! How did we do? https://g.page/r/bikes");
    // Text 2: the day before the appointment they picked, at 09:00.
    await page.getByRole("button", { name: "Add a text" }).click();
    await page.getByLabel("Text 2 goes").selectOption({ label: "around a date they gave" });
    await page.getByLabel("Text 2: how many").fill("1");
    await page.getByLabel("Text 2: unit").selectOption("d");
    await page.getByLabel("Text 2: before or after").selectOption("before");
    await page.getByLabel("Text 2: the date").selectOption("appointment");
    await page.getByLabel("Text 2: at (time of day)").fill("09:00");
    await page.getByLabel("Text 2: message").fill("Reminder: ");
    // "Insert a field" puts {{firstName}} at the cursor.
    await page.getByLabel("Text 2: message").press("End");
    await page.locator("#step-insert-1").selectOption({ label: "First name" });
    await page.getByLabel("Text 2: message").press("End");
    await page.getByLabel("Text 2: message").type(", your bike is booked for tomorrow. Reply C to cancel.");
    expect(await page.getByTestId("step-preview-1").textContent()).toBe("Reminder: Ann, your bike is booked for tomorrow. Reply C to cancel.");
    const line = page.getByRole("list", { name: "Time line" }).getByRole("listitem");
    expect(await line.nth(0).textContent()).toBe("2 days after the form, at 10:00 — Thanks Ann! How did we do?…");
    expect(await line.nth(1).textContent()).toBe("1 day before appointment, at 09:00 — Reminder: Ann, your bike is…");
    await expectAccessible(page, "automation builder");
    await screenshot(page, "automation-new-1280");

    // A delay the API refuses: its message is shown on the step's field, and nothing is created.
    await page.getByLabel("Text 1: how many").fill("400");
    await page.getByRole("button", { name: "Create automation" }).click();
    await page.getByRole("alert").waitFor();
    const amount = page.getByLabel("Text 1: how many");
    expect(await amount.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await amount.getAttribute("aria-describedby"))!;
    expect(await page.locator(`#${describedBy}`).textContent()).toContain("steps[0].delay");
    expect((await server.api("/automations")).data.automations).toEqual([]);
    await expectAccessible(page, "automation builder with an error");
    await amount.fill("2");
    await page.getByRole("button", { name: "Create automation" }).click();
    await page.getByRole("heading", { level: 1, name: "Automations: Thanks and reminder" }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]);
    const saved = (await server.api(`/automations/${id}`)).data.automation;
    expect(saved.steps).toEqual([
      { template: "Thanks {{firstName}}! How did we do? {{reviewLink | https://g.page/r/bikes}}", delay: "2d", sendAt: "10:00" },
      { template: "Reminder: {{firstName}}, your bike is booked for tomorrow. Reply C to cancel.", relativeTo: "appointment", offset: "-1d", sendAt: "09:00" },
    ]);
    expect(saved).toMatchObject({ formId, isActive: true, stopOnReply: true, stopOnStatus: ["converted"], restartOnResubmit: false });
    await page.getByText("Nobody yet: a run starts when someone fills in the form.").waitFor();

    // The form is submitted through its webhook: the run appears with both texts scheduled.
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    const contactId = await submit(formId, { phoneNumber: "+14155550201", firstName: "Ann", appointment: inDays(10) });
    // No click: the live feed tells the page (its texts were queued).
    const row = page.getByRole("row", { name: /Ann/ });
    await row.waitFor();
    expect(await row.getByRole("link", { name: "Ann", exact: true }).getAttribute("href")).toBe(`/contacts/${contactId}`);
    expect(await row.getByRole("cell").nth(1).textContent()).toBe("going");
    const steps = row.getByRole("listitem");
    expect(await steps.count()).toBe(2);
    expect(await steps.nth(0).textContent()).toMatch(/^Text 1: will go out, \w{3} \d+, \d{4}, 10:00\sAM$/);
    expect(await steps.nth(1).textContent()).toMatch(/^Text 2: will go out, \w{3} \d+, \d{4}, 9:00\sAM$/);
    await row.getByRole("link", { name: "See them in Messages: the texts to Ann" }).waitFor();
    await expectAccessible(page, "automation with a run");
    await screenshot(page, "automation-1280");

    // Start for existing contacts: a count first, then a second, explicit click.
    await server.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550202", firstName: "Bo" } });
    await page.getByText("Start for existing contacts").click();
    await page.getByRole("button", { name: "Count who would start" }).click();
    const count = page.getByTestId("start-count");
    await count.getByText("1 of 2 contacts would start.").waitFor();
    expect(await count.getByRole("listitem").allTextContents()).toEqual(["1 left out: already going through it"]);
    expect((await server.api(`/automations/${id}`)).data.automation.runs.active).toBe(1);
    await expectAccessible(page, "start for existing contacts, counted");
    await count.getByRole("button", { name: "Start for 1 contact" }).click();
    await count.getByText(/^Starting for 1 contact/).waitFor();
    // The runs are made in the background: the list shows Bo once they are.
    for (let i = 0; i < 50 && (await server.api(`/automations/${id}/runs`)).data.runs.length < 2; i++) await Bun.sleep(100);
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.getByRole("row", { name: /Bo/ }).waitFor();

    // The list: runs by state, replied and converted; turning off is asked first.
    await page.getByRole("link", { name: "← All automations" }).click();
    const item = page.getByRole("row", { name: /Thanks and reminder/ });
    await item.waitFor();
    expect(await item.getByRole("cell").nth(2).textContent()).toBe("2 going · 0 finished · 0 stopped");
    expect(await item.getByRole("cell").nth(3).textContent()).toBe("0");
    expect(await item.getByRole("cell").nth(4).textContent()).toBe("0");
    await expectAccessible(page, "automations list");
    await screenshot(page, "automations-1280");
    await item.getByRole("checkbox", { name: "Thanks and reminder is on" }).click();
    const off = page.getByRole("dialog", { name: "Turn off Thanks and reminder?" });
    await off.waitFor();
    expect(await off.textContent()).toContain("The 2 people going through it stop");
    await off.getByRole("button", { name: "Keep it" }).click();
    expect(await item.getByRole("checkbox", { name: "Thanks and reminder is on" }).isChecked()).toBe(true);
    expect((await server.api(`/automations/${id}`)).data.automation.isActive).toBe(true);
    await item.getByRole("checkbox", { name: "Thanks and reminder is on" }).click();
    await off.getByRole("button", { name: "Turn off" }).click();
    await page.getByText("Thanks and reminder is off: its runs stopped and their waiting texts were cancelled.").waitFor();
    await item.getByRole("cell", { name: "0 going · 0 finished · 2 stopped" }).waitFor();
    const runs = (await server.api(`/automations/${id}/runs`)).data.runs;
    expect(runs.map((r: any) => r.stoppedReason)).toEqual(["automation-off", "automation-off"]);
    // Deleting is asked first too.
    await item.getByRole("button", { name: "Delete Thanks and reminder" }).click();
    const del = page.getByRole("dialog", { name: "Delete Thanks and reminder?" });
    await del.getByRole("button", { name: "Delete automation" }).click();
    await page.getByText("No automations yet.").waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});

describe("phone width, 390 px", () => {
  test("the list, the builder and an automation with its runs fit without sideways scroll", async () => {
    const longForm = (
      await server.api("/forms", {
        method: "POST",
        json: {
          name: LONG_FORM,
          messageTemplate: "Hi {{firstName}}",
          fields: [
            { name: "firstName", type: "text", label: "Your first name as you would like us to use it" },
            { name: "preferredSurveyVisitDate", type: "date", label: "Preferred day for the survey visit at your home" },
          ],
          settings: { delayMinutes: 0, timezone: "UTC" },
        },
      })
    ).data.form.id;
    const a = (
      await server.api("/automations", {
        method: "POST",
        json: {
          name: LONG_AUTOMATION,
          formId: longForm,
          steps: [
            { template: `Thanks {{firstName}}! Our surveyor calls you back within two working days: https://example.com/${"x".repeat(60)}`, delay: "30m" },
            { template: "Your survey visit is tomorrow. Reply C to cancel.", relativeTo: "preferredSurveyVisitDate", offset: "-1d", sendAt: "09:00" },
          ],
          stopOnStatus: ["converted", "responded"],
        },
      })
    ).data.automation;
    await submit(longForm, { phoneNumber: "+14155550210", firstName: "Maximiliana-Alexandrina", lastName: "Wolfeschlegelsteinhausenbergerdorff", preferredSurveyVisitDate: inDays(20) });
    const context = await openContext(browser, PHONE, { timezoneId: "UTC" });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await signIn(page, server.url, server.adminKey, "/automations");
    await page.getByRole("row", { name: new RegExp(LONG_AUTOMATION) }).waitFor();
    await fits(page, "automations", 390);
    await expectAccessible(page, "automations at 390 px");
    await screenshot(page, "automations-390");
    const del = page.getByRole("button", { name: `Delete ${LONG_AUTOMATION}` });
    const box = (await del.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);

    await page.goto(`${server.url}/automations/new`);
    await page.getByLabel("Text 1: message").waitFor();
    await fits(page, "new automation", 390);
    await expectAccessible(page, "new automation at 390 px");
    await screenshot(page, "automation-new-390");

    await page.goto(`${server.url}/automations/${a.id}`);
    await page.getByRole("row", { name: /Maximiliana/ }).waitFor();
    await page.getByText("Start for existing contacts").click();
    await page.getByRole("button", { name: "Count who would start" }).waitFor();
    expect(await page.getByRole("list", { name: "Time line" }).getByRole("listitem").nth(1).textContent()).toBe(
      "1 day before Preferred day for the survey visit at your home, at 09:00 — Your survey visit is tomorrow.…",
    );
    await fits(page, "automation", 390);
    await expectAccessible(page, "automation at 390 px");
    await screenshot(page, "automation-390");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});

describe("a contact's automations, 1280 px", () => {
  test("the contact's page lists their runs in plain words, links each automation, and stops one after asking", async () => {
    const a = (
      await server.api("/automations", {
        method: "POST",
        json: { name: "Review request", formId, steps: [{ template: "How did we do, {{firstName}}?", delay: "2d", sendAt: "10:00" }, { template: "Last chance for 10% off", delay: "1w" }] },
      })
    ).data.automation;
    const contactId = await submit(formId, { phoneNumber: "+14155550230", firstName: "Carla", appointment: inDays(30) });
    await submit(formId, { phoneNumber: "+14155550231", firstName: "Dan", appointment: inDays(30) });
    const context = await openContext(browser, DESKTOP, { timezoneId: "UTC" });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await signIn(page, server.url, server.adminKey, `/contacts/${contactId}`);
    await page.getByRole("heading", { level: 2, name: "Automations" }).waitFor();
    const run = page.locator(".contact-run", { has: page.getByRole("link", { name: "Review request" }) });
    await run.waitFor();
    expect(await run.locator("strong").first().textContent()).toBe("going");
    expect(await run.getByRole("listitem").allTextContents()).toEqual([expect.stringMatching(/^Text 1: will go out, /), expect.stringMatching(/^Text 2: will go out, /)]);
    await expectAccessible(page, "contact with runs");
    await screenshot(page, "contact-runs-1280");
    // Asked first; cancelling changes nothing.
    await run.getByRole("button", { name: "Stop Review request for Carla" }).click();
    const dialog = page.getByRole("dialog", { name: "Stop Review request for Carla?" });
    await dialog.waitFor();
    await expectAccessible(page, "stop a run: the question");
    await dialog.getByRole("button", { name: "Keep it" }).click();
    expect((await server.api(`/automations/${a.id}/runs?contactId=${contactId}`)).data.runs[0].status).toBe("active");
    await run.getByRole("button", { name: "Stop Review request for Carla" }).click();
    await dialog.getByRole("button", { name: "Stop automation" }).click();
    await page.getByText("Review request stopped for Carla: its texts not sent yet are cancelled.").waitFor();
    await run.getByText("because it was stopped by hand").waitFor();
    expect(await run.getByRole("listitem").allTextContents()).toEqual([expect.stringMatching(/^Text 1: cancelled/), expect.stringMatching(/^Text 2: cancelled/)]);
    expect(await run.getByRole("button", { name: /^Stop/ }).count()).toBe(0);
    const after = (await server.api(`/automations/${a.id}/runs?contactId=${contactId}`)).data.runs[0];
    expect(after).toMatchObject({ status: "stopped", stoppedReason: "stopped-by-hand" });
    // The link opens the automation, where the run reads the same.
    await run.getByRole("link", { name: "Review request" }).click();
    await page.getByRole("row", { name: /Carla/ }).getByText("because it was stopped by hand").waitFor();
    // The automation's page stops one person too, asked first; the page says so and the row follows.
    const dan = page.getByRole("row", { name: /Dan/ });
    await dan.getByRole("button", { name: "Stop for Dan" }).click();
    await page.getByRole("dialog", { name: "Stop Review request for Dan?" }).getByRole("button", { name: "Stop automation" }).click();
    await page.getByText("Stopped for Dan: their texts not sent yet are cancelled.").waitFor();
    await dan.getByText("because it was stopped by hand").waitFor();
    expect(await dan.getByRole("button", { name: /^Stop/ }).count()).toBe(0);
    await expectAccessible(page, "automation with stopped runs");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
