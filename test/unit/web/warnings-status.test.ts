import { describe, expect, test } from "bun:test";
import { backupsOffWarning, noPhoneWarning, plainHttpWarning, statusWarnings, type StatusFacts } from "../../../web/warnings";
import { retryDelaySeconds, RETRY_CAP_SECONDS } from "../../../web/retry";
import { describeTestAnswer } from "../../../web/form-protection";
import { cliCommand } from "../../../src/lib/cli-command";
import { plainHttpFromOutside } from "../../../src/services/dashboard-overview";

const facts = (status: Partial<StatusFacts["status"]> = {}, phones = { online: 1, total: 1, failedAttemptsToday: 0 }, cli: StatusFacts["cliCommand"] = "npx textwire"): StatusFacts => ({
  status: { plainHttpFromOutside: false, noPhone: false, backupsOff: false, ...status },
  phones,
  cliCommand: cli,
});

describe("the Overview's status warnings", () => {
  test("none when HTTPS (or this machine), a phone online and backups on", () => {
    expect(statusWarnings(facts())).toEqual([]);
  });

  test("plain HTTP from another machine: says what to do, with this server's command", () => {
    const w = plainHttpWarning(facts({ plainHttpFromOutside: true }, undefined, "textwire"))!;
    expect(w.text).toContain("plain HTTP");
    expect(w.text).toContain("textwire tls init");
    expect(w.text).not.toContain("npx");
  });

  test("no phone: texts wait until a phone connects, with a link to add one (or to the phones when some are offline)", () => {
    const none = noPhoneWarning(facts({ noPhone: true }, { online: 0, total: 0, failedAttemptsToday: 0 }))!;
    expect(none.text).toContain("Texts wait until a phone connects");
    expect(none.link).toEqual({ href: "/devices/add", text: "Add a phone" });
    const offline = noPhoneWarning(facts({ noPhone: true }, { online: 0, total: 2, failedAttemptsToday: 0 }))!;
    expect(offline.text).toContain("Texts wait until a phone connects");
    expect(offline.link?.href).toBe("/devices");
  });

  test("backups off: says what is at risk and how to turn them on", () => {
    const w = backupsOffWarning(facts({ backupsOff: true }))!;
    expect(w.text).toContain("Backups are off");
    expect(w.text).toContain("npx textwire serve --backup-dir");
    expect(statusWarnings(facts({ plainHttpFromOutside: true, noPhone: true, backupsOff: true })).map((x) => x.id)).toEqual(["plain-http", "no-phone", "backups-off"]);
  });

  test("anyone but the operator (no cliCommand) reads no shell command and gets no link to the operator's settings", () => {
    const backups = backupsOffWarning(facts({ backupsOff: true }, undefined, null))!;
    const http = plainHttpWarning(facts({ plainHttpFromOutside: true }, undefined, null))!;
    for (const w of [backups, http]) expect(w.text).not.toMatch(/textwire|--|FOLDER/);
    expect(backups.text).toContain("Whoever runs the Textwire server should turn on scheduled backups");
    expect(backups.link).toBeUndefined();
  });
});

describe("plain HTTP from outside", () => {
  test("only http: from a non-loopback address", () => {
    expect(plainHttpFromOutside("127.0.0.1", "http://127.0.0.1:8080")).toBe(false);
    expect(plainHttpFromOutside("::1", "http://localhost:8080")).toBe(false);
    expect(plainHttpFromOutside("192.168.1.20", "http://192.168.1.5:8080")).toBe(true);
    expect(plainHttpFromOutside("192.168.1.20", "https://192.168.1.5:8443")).toBe(false);
  });
});

describe("the command prefix", () => {
  test("npx textwire from a project folder; textwire for the compiled executable", () => {
    expect(cliCommand("/home/shop/textwire/src/main.ts")).toBe("npx textwire");
    expect(cliCommand("/$bunfs/root/textwire")).toBe("textwire");
    expect(cliCommand("B:/~BUN/root/textwire.exe")).toBe("textwire");
  });
});

describe("the dashboard's retry wait", () => {
  test("Retry-After when given, else 1, 2, 4 … seconds, never above the cap", () => {
    expect(retryDelaySeconds(0, "3")).toBe(3);
    expect(retryDelaySeconds(4, "7")).toBe(7);
    expect([0, 1, 2, 3, 4, 5, 9].map((a) => retryDelaySeconds(a, null))).toEqual([1, 2, 4, 8, 16, 30, 30]);
    expect(retryDelaySeconds(0, "3600")).toBe(RETRY_CAP_SECONDS);
    expect(retryDelaySeconds(2, "soon")).toBe(4);
    expect(retryDelaySeconds(0, "0")).toBe(1);
  });
});

describe("the test submission's answer", () => {
  test("with no phone connected it says texts wait instead of an estimated time", () => {
    const body = { status: "success", message: "The test text is on its way to +14155550131.", data: { text: "Hi", segments: 1, notes: [], sent: { messageId: "m1", to: "+14155550131", queuePosition: 3, estimatedDelivery: "2026-05-01T10:00:00Z" } } };
    const o = describeTestAnswer(200, body, (s) => `<${s}>`, false);
    expect(o.text).toBe("The test text is on its way to +14155550131. No phone is connected, so texts wait until a phone connects.");
    expect(o.waitsForPhone).toBe(true);
    expect(describeTestAnswer(200, body, (s) => `<${s}>`, true).text).toContain("Expected to go out around <2026-05-01T10:00:00Z>.");
  });
});
