/**
 * An automation's runs in plain words, shared by the automation's page (who is going through it)
 * and a contact's page (the automations they are going through): the same run reads the same
 * wherever it is shown (docs/api-decisions.md, "Automations: follow-ups").
 */
import type { Answer } from "./api-types";
import { fmtDate } from "./format";

type Automation = Answer<"/v1/automations/{id}">["data"]["automation"];
export type StopReason = keyof Automation["runs"]["stoppedBy"];
type RunStep = Answer<"/v1/automations/{id}/runs">["data"]["runs"][number]["steps"][number];

export const STOP_WORDS: Record<StopReason, string> = {
  replied: "they replied",
  "opted-out": "they opted out (STOP)",
  status: "their status reached one that stops it",
  "contact-deleted": "the contact was deleted",
  "automation-off": "the automation was turned off or deleted",
  restarted: "they filled in the form again, so it started over",
  "stopped-by-hand": "it was stopped by hand",
};
export const STEP_SKIP_WORDS: Record<string, string> = {
  past: "skipped: its time had already passed",
  "no-date": "skipped: the contact has no such date",
  "recipient-limit": "skipped: the form's daily limit for this number",
  quota: "skipped: the monthly limit of texts",
};
export const STEP_STATUS_WORDS: Record<string, string> = { scheduled: "will go out", sent: "sent", failed: "failed", cancelled: "cancelled", skipped: "skipped" };
export const RUN_STATUS_WORDS: Record<string, string> = { active: "going", completed: "finished", stopped: "stopped" };

/** "because they replied". */
export const stoppedBecause = (reason: string) => `because ${STOP_WORDS[reason as StopReason] ?? reason}`;

/** "Text 2: will go out, 3 Nov 2026, 10:00"; "Text 1: skipped: its time had already passed". */
export function stepLine(s: RunStep): string {
  const state = s.skipped ? (STEP_SKIP_WORDS[s.skipped] ?? `skipped (${s.skipped})`) : (STEP_STATUS_WORDS[s.status] ?? s.status);
  return `Text ${s.index + 1}: ${state}${s.scheduledFor && !s.skipped ? `, ${fmtDate(s.scheduledFor)}` : ""}`;
}
