/**
 * What the API shows of automations and runs (docs/automations.md): the views, the reasons a run
 * stopped or a step was skipped, and a run's steps with their messages' states.
 */
import type { Database } from "bun:sqlite";
import type { AutomationInput } from "../../domain/automation-steps";
import { contactsOfRuns, findRun, stepsOfRuns, type RunRecord } from "../../db/stores/automations";

/** Why a run stopped (runs[].stoppedReason; the automation.run.stopped event). */
export const STOP_REASONS = ["replied", "opted-out", "status", "contact-deleted", "automation-off", "restarted", "stopped-by-hand"] as const;
export type StopReason = (typeof STOP_REASONS)[number];
/** Why a contact got no run (start's counts). */
export const RUN_SKIP_REASONS = ["opted-out", "status", "no-consent", "already-running"] as const;
export type RunSkip = (typeof RUN_SKIP_REASONS)[number];
/** Why a step got no message (runs[].steps[].skipped). */
export const STEP_SKIP_REASONS = ["past", "no-date", "recipient-limit", "quota"] as const;

export interface AutomationView extends AutomationInput {
  id: string;
  runs: { active: number; completed: number; stopped: number; stoppedBy: Record<StopReason, number> };
  createdAt: string;
  updatedAt: string;
}

export interface RunStepView {
  index: number;
  scheduledFor: string | null;
  messageId: string | null;
  /** scheduled (queued), sent, failed, cancelled, or skipped (see `skipped`). */
  status: "scheduled" | "sent" | "failed" | "cancelled" | "skipped";
  skipped: (typeof STEP_SKIP_REASONS)[number] | null;
}

export interface RunView {
  id: string;
  automationId: string;
  contactId: string;
  /** The automation's name (the contact's runs only), and whether it was deleted since. */
  automation?: { name: string; deleted: boolean };
  /** Who it is for, as the dashboard's runs list names them (the runs listing only); null once the contact is deleted. */
  contact?: { firstName: string | null; lastName: string | null; phoneNumber: string } | null;
  status: "active" | "completed" | "stopped";
  stoppedReason: StopReason | null;
  startedAt: string;
  finishedAt: string | null;
  steps: RunStepView[];
}

export function runView(sqlite: Database, id: string): RunView | null {
  const r = findRun(sqlite, id);
  return r ? runViews(sqlite, [r])[0] : null;
}

/** `withContacts`: each run names its contact (the runs listing; events and the contact's own page need not). */
export function runViews(sqlite: Database, rows: RunRecord[], withContacts = false): RunView[] {
  const steps = new Map<string, RunStepView[]>();
  for (const s of stepsOfRuns(sqlite, rows.map((r) => r.id))) {
    const list = steps.get(s.runId) ?? [];
    list.push({ index: s.stepIndex, scheduledFor: s.scheduledFor, messageId: s.messageId, status: stepStatus(s.skipped, s.messageStatus), skipped: s.skipped as RunStepView["skipped"] });
    steps.set(s.runId, list);
  }
  const contacts = new Map(withContacts && rows.length ? contactsOfRuns(sqlite, rows[0].accountId, rows.map((r) => r.contactId)).map((c) => [c.id, c] as const) : []);
  return rows.map((r) => ({
    id: r.id,
    automationId: r.automationId,
    contactId: r.contactId,
    ...(withContacts ? { contact: contacts.has(r.contactId) ? (({ firstName, lastName, phoneNumber }) => ({ firstName, lastName, phoneNumber }))(contacts.get(r.contactId)!) : null } : {}),
    // A run marked and not yet stopped shows as it will be a moment later.
    status: r.status === "active" && r.stopReason !== null ? "stopped" : r.status,
    stoppedReason: r.status === "completed" ? null : (r.stopReason as StopReason | null),
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    steps: steps.get(r.id) ?? [],
  }));
}

function stepStatus(skipped: string | null, messageStatus: string | null): RunStepView["status"] {
  if (skipped !== null) return "skipped";
  if (messageStatus === "queued") return "scheduled";
  if (messageStatus === "sent" || messageStatus === "failed" || messageStatus === "cancelled") return messageStatus;
  // The message was deleted (with its contact): it will not go out.
  return "cancelled";
}
