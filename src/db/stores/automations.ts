/**
 * Queries of automations, their runs and steps, the inbox of submissions waiting to start runs,
 * and the start jobs (migration 0030). Plain functions over the connection; the service owns the
 * transactions (docs/api-decisions.md, "Automations").
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { automationInbox, automationRuns, automationRunSteps, automations, automationStarts } from "../schema/automations";
import type { forms } from "../schema/forms";
import type { AutomationStep } from "../../domain/automation-steps";
import type { FieldDef } from "../../domain/submission";
import { jsonArray, jsonObject } from "./row";
// The statements on contacts and messages a run needs live in their tables' folders; these names
// stay importable from here (docs/api-decisions.md, "The house, round two: stores by table").
export { contactsOfRuns, runContact, segmentContacts, type RunContact } from "./contacts/segments";
export { cancelRunMessages } from "./messages/templates";
export { textsInDayBefore } from "./messages/recipient-limits";

/** An automation, typed from the schema: its flags as booleans, its steps and stop statuses parsed. */
export type AutomationRecord = Omit<typeof automations.$inferSelect, "steps" | "stopOnStatus"> & { steps: AutomationStep[]; stopOnStatus: string[] };

/** A plain SQL read gives the boolean columns as SQLite stores them (0 or 1), the JSON ones as text. */
type StoredAutomation = Omit<typeof automations.$inferSelect, "isActive" | "stopOnReply" | "restartOnResubmit"> & { isActive: number; stopOnReply: number; restartOnResubmit: number };

function automationOf(r: StoredAutomation): AutomationRecord {
  return {
    ...r,
    isActive: r.isActive === 1,
    stopOnReply: r.stopOnReply === 1,
    restartOnResubmit: r.restartOnResubmit === 1,
    steps: JSON.parse(r.steps) as AutomationStep[],
    stopOnStatus: JSON.parse(r.stopOnStatus) as string[],
  };
}

const COLUMNS = `id, account_id AS accountId, form_id AS formId, name, is_active AS isActive, steps, stop_on_reply AS stopOnReply,
  stop_on_status AS stopOnStatus, restart_on_resubmit AS restartOnResubmit, deleted_at AS deletedAt, created_at AS createdAt, updated_at AS updatedAt`;

export function insertAutomation(sqlite: Database, a: AutomationRecord): void {
  sqlite
    .query(
      `INSERT INTO automations (id, account_id, form_id, name, is_active, steps, stop_on_reply, stop_on_status, restart_on_resubmit, deleted_at, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, NULL, ?10, ?11)`,
    )
    .run(a.id, a.accountId, a.formId, a.name, a.isActive ? 1 : 0, JSON.stringify(a.steps), a.stopOnReply ? 1 : 0, JSON.stringify(a.stopOnStatus), a.restartOnResubmit ? 1 : 0, a.createdAt, a.updatedAt);
}

export function updateAutomation(sqlite: Database, a: AutomationRecord): void {
  sqlite
    .query(
      `UPDATE automations SET form_id = ?2, name = ?3, is_active = ?4, steps = ?5, stop_on_reply = ?6, stop_on_status = ?7, restart_on_resubmit = ?8, updated_at = ?9
       WHERE id = ?1`,
    )
    .run(a.id, a.formId, a.name, a.isActive ? 1 : 0, JSON.stringify(a.steps), a.stopOnReply ? 1 : 0, JSON.stringify(a.stopOnStatus), a.restartOnResubmit ? 1 : 0, a.updatedAt);
}

/** Deleted automations stay (their runs' history); they are 404 to the API and start nothing. */
export function markAutomationDeleted(sqlite: Database, id: string, at: string): void {
  sqlite.query("UPDATE automations SET deleted_at = ?2, is_active = 0, updated_at = ?2 WHERE id = ?1").run(id, at);
}

/** A live (not deleted) automation of the account. */
export function findAutomation(sqlite: Database, accountId: string, id: string): AutomationRecord | null {
  const r = sqlite.query(`SELECT ${COLUMNS} FROM automations WHERE id = ?1 AND account_id = ?2 AND deleted_at IS NULL`).get(id, accountId) as StoredAutomation | null;
  return r ? automationOf(r) : null;
}

/** Any automation by id (the engine: a run's automation may have been deleted since). */
export function findAutomationById(sqlite: Database, id: string): AutomationRecord | null {
  const r = sqlite.query(`SELECT ${COLUMNS} FROM automations WHERE id = ?1`).get(id) as StoredAutomation | null;
  return r ? automationOf(r) : null;
}

export function listAutomations(sqlite: Database, accountId: string, page: number, limit: number): { rows: AutomationRecord[]; total: number } {
  const rows = sqlite
    .query(`SELECT ${COLUMNS} FROM automations WHERE account_id = ?1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3`)
    .all(accountId, limit, (page - 1) * limit) as StoredAutomation[];
  const total = (sqlite.query("SELECT COUNT(*) AS n FROM automations WHERE account_id = ?1 AND deleted_at IS NULL").get(accountId) as { n: number }).n;
  return { rows: rows.map(automationOf), total };
}

/** Runs of an automation by status (one range of automation_runs_list_idx per status). */
export function runCounts(sqlite: Database, automationId: string): { active: number; completed: number; stopped: number } {
  const out = { active: 0, completed: 0, stopped: 0 };
  const rows = sqlite.query("SELECT status, COUNT(*) AS n FROM automation_runs WHERE automation_id = ?1 GROUP BY status").all(automationId) as Array<{ status: keyof typeof out; n: number }>;
  for (const r of rows) out[r.status] = r.n;
  return out;
}

/**
 * Stopped runs of an automation by their reason (the dashboard's "how many replied"): one range
 * of automation_runs_list_idx, reading only the stopped runs' rows.
 */
export function stoppedRunCounts(sqlite: Database, automationId: string): Array<{ reason: string | null; n: number }> {
  return sqlite
    .query("SELECT stop_reason AS reason, COUNT(*) AS n FROM automation_runs WHERE automation_id = ?1 AND status = 'stopped' GROUP BY stop_reason")
    .all(automationId) as Array<{ reason: string | null; n: number }>;
}

// ---- runs and steps --------------------------------------------------------------------------

export type RunRecord = typeof automationRuns.$inferSelect;

const RUN_COLUMNS = `id, automation_id AS automationId, account_id AS accountId, contact_id AS contactId, submission_id AS submissionId, status,
  stop_reason AS stopReason, started_at AS startedAt, ends_at AS endsAt, finished_at AS finishedAt`;

export function insertRun(sqlite: Database, r: RunRecord): void {
  sqlite
    .query(
      `INSERT INTO automation_runs (id, automation_id, account_id, contact_id, submission_id, status, stop_reason, started_at, ends_at, finished_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
    )
    .run(r.id, r.automationId, r.accountId, r.contactId, r.submissionId, r.status, r.stopReason, r.startedAt, r.endsAt, r.finishedAt);
}

export function findRun(sqlite: Database, id: string): RunRecord | null {
  return (sqlite.query(`SELECT ${RUN_COLUMNS} FROM automation_runs WHERE id = ?1`).get(id) as RunRecord | null) ?? null;
}

/** The contact's active run of the automation (at most one: automation_runs_one_active_idx). */
export function activeRun(sqlite: Database, automationId: string, contactId: string): RunRecord | null {
  return (sqlite.query(`SELECT ${RUN_COLUMNS} FROM automation_runs WHERE automation_id = ?1 AND contact_id = ?2 AND status = 'active'`).get(automationId, contactId) as RunRecord | null) ?? null;
}

export function runOfSubmission(sqlite: Database, automationId: string, submissionId: string): boolean {
  return sqlite.query("SELECT 1 AS x FROM automation_runs WHERE automation_id = ?1 AND submission_id = ?2").get(automationId, submissionId) !== null;
}

export type StepRecord = typeof automationRunSteps.$inferSelect;

export function insertStep(sqlite: Database, s: StepRecord): void {
  sqlite
    .query("INSERT INTO automation_run_steps (run_id, step_index, scheduled_for, message_id, skipped) VALUES (?1, ?2, ?3, ?4, ?5)")
    .run(s.runId, s.stepIndex, s.scheduledFor, s.messageId, s.skipped);
}

/** Steps of the given runs with their message's status (null: no message, or it was deleted). */
export function stepsOfRuns(sqlite: Database, runIds: string[]): Array<StepRecord & { messageStatus: string | null }> {
  if (runIds.length === 0) return [];
  const marks = runIds.map(() => "?").join(",");
  return sqlite
    .query(
      `SELECT s.run_id AS runId, s.step_index AS stepIndex, s.scheduled_for AS scheduledFor, s.message_id AS messageId, s.skipped, m.status AS messageStatus
       FROM automation_run_steps s LEFT JOIN messages m ON m.id = s.message_id WHERE s.run_id IN (${marks}) ORDER BY s.run_id, s.step_index`,
    )
    .all(...runIds) as Array<StepRecord & { messageStatus: string | null }>;
}

/** The named automations of the account, deleted ones included (a contact's runs name theirs). */
export function automationNames(sqlite: Database, accountId: string, ids: string[]): Array<{ id: string; name: string; deletedAt: string | null }> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  return sqlite
    .query(`SELECT id, name, deleted_at AS deletedAt FROM automations WHERE account_id = ? AND id IN (${unique.map(() => "?").join(",")})`)
    .all(accountId, ...unique) as Array<{ id: string; name: string; deletedAt: string | null }>;
}

export interface RunFilter {
  status?: string;
  contactId?: string;
}

export function listRuns(sqlite: Database, automationId: string, f: RunFilter, page: number, limit: number): { rows: RunRecord[]; total: number } {
  const where = ["automation_id = ?"];
  const params: SQLQueryBindings[] = [automationId];
  if (f.status) {
    where.push("status = ?");
    params.push(f.status);
  }
  if (f.contactId) {
    where.push("contact_id = ?");
    params.push(f.contactId);
  }
  const w = where.join(" AND ");
  const rows = sqlite
    .query(`SELECT ${RUN_COLUMNS} FROM automation_runs WHERE ${w} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`)
    .all(...params, limit, (page - 1) * limit) as RunRecord[];
  const total = (sqlite.query(`SELECT COUNT(*) AS n FROM automation_runs WHERE ${w}`).get(...params) as { n: number }).n;
  return { rows, total };
}

/** A contact's runs, newest first (GET /v1/contacts/<id>). */
export function runsOfContact(sqlite: Database, accountId: string, contactId: string, limit: number): RunRecord[] {
  return sqlite
    .query(`SELECT ${RUN_COLUMNS} FROM automation_runs WHERE contact_id = ?1 AND account_id = ?2 ORDER BY started_at DESC, id DESC LIMIT ?3`)
    .all(contactId, accountId, limit) as RunRecord[];
}

/** Marks the automation's active runs to stop (the service then cancels their unsent steps); a cause already marked keeps its reason. */
export function markRunsStopping(sqlite: Database, automationId: string, reason: string): number {
  return sqlite.query("UPDATE automation_runs SET stop_reason = ?2 WHERE automation_id = ?1 AND status = 'active' AND stop_reason IS NULL").run(automationId, reason).changes;
}

/** Active runs marked to stop (automation_runs_stopping_idx). */
export function stoppingRuns(sqlite: Database, limit: number): RunRecord[] {
  return sqlite.query(`SELECT ${RUN_COLUMNS} FROM automation_runs WHERE status = 'active' AND stop_reason IS NOT NULL LIMIT ?1`).all(limit) as RunRecord[];
}

export function anyStopping(sqlite: Database): boolean {
  return sqlite.query("SELECT 1 AS x FROM automation_runs WHERE status = 'active' AND stop_reason IS NOT NULL LIMIT 1").get() !== null;
}

/** Ends an active run; a run marked to stop is never "completed". Returns whether it moved. */
export function finishRun(sqlite: Database, id: string, status: "completed" | "stopped", reason: string | null, at: string): boolean {
  return (
    sqlite
      .query("UPDATE automation_runs SET status = ?2, stop_reason = ?3, finished_at = ?4 WHERE id = ?1 AND status = 'active' AND (?2 = 'stopped' OR stop_reason IS NULL)")
      .run(id, status, reason, at).changes === 1
  );
}

/**
 * Of the next `limit` active runs past their last step after the cursor (ends_at, id) — a bounded
 * page of automation_runs_due_idx, so runs held up by queued messages (no phone online) are not
 * read again on every call — those with nothing of theirs still queued. `last` is the page's end
 * (null: the page reached the end of the index; start again from the beginning).
 */
export function completableRuns(sqlite: Database, nowIso: string, after: { endsAt: string; id: string } | null, limit: number): { runs: RunRecord[]; last: { endsAt: string; id: string } | null } {
  const page = sqlite
    .query(
      `SELECT id, ends_at AS endsAt FROM automation_runs WHERE status = 'active' AND ends_at <= ?1 AND (ends_at, id) > (?2, ?3)
       ORDER BY ends_at, id LIMIT ?4`,
    )
    .all(nowIso, after?.endsAt ?? "", after?.id ?? "", limit) as Array<{ id: string; endsAt: string }>;
  if (page.length === 0) return { runs: [], last: null };
  const marks = page.map(() => "?").join(",");
  const runs = sqlite
    .query(
      `SELECT ${RUN_COLUMNS} FROM automation_runs r WHERE r.id IN (${marks}) AND r.stop_reason IS NULL
         AND NOT EXISTS (SELECT 1 FROM automation_run_steps s JOIN messages m ON m.id = s.message_id WHERE s.run_id = r.id AND m.status = 'queued')`,
    )
    .all(...page.map((p) => p.id)) as RunRecord[];
  const end = page[page.length - 1];
  return { runs, last: page.length < limit ? null : { endsAt: end.endsAt, id: end.id } };
}

// ---- contacts and messages -------------------------------------------------------------------

/**
 * The values a submission's visitor sent (its `form_values` JSON, written by the applier with the
 * row), or an empty object: a run reads the dates its own submission gave, not what a later
 * submission of the same number has since written on the contact.
 */
export function submissionValues(sqlite: Database, submissionId: string): Record<string, string> {
  const row = sqlite.query("SELECT form_values AS v FROM submissions WHERE id = ?1").get(submissionId) as { v: string | null } | null;
  if (!row?.v) return {};
  try {
    const o = JSON.parse(row.v) as unknown;
    if (!o || typeof o !== "object" || Array.isArray(o)) return {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(o)) if (typeof v === "string") out[k] = v;
    return out;
  } catch {
    return {};
  }
}

// ---- inbox -----------------------------------------------------------------------------------

export type InboxRow = typeof automationInbox.$inferSelect;

export function inboxBatch(sqlite: Database, limit: number): InboxRow[] {
  return sqlite
    .query(
      `SELECT seq, automation_id AS automationId, submission_id AS submissionId, contact_id AS contactId, account_id AS accountId, created_at AS createdAt
       FROM automation_inbox ORDER BY seq LIMIT ?1`,
    )
    .all(limit) as InboxRow[];
}

export function inboxEmpty(sqlite: Database): boolean {
  return sqlite.query("SELECT 1 AS x FROM automation_inbox LIMIT 1").get() === null;
}

export function deleteInboxRow(sqlite: Database, seq: number): void {
  sqlite.query("DELETE FROM automation_inbox WHERE seq = ?1").run(seq);
}

// ---- start jobs ------------------------------------------------------------------------------

/** A start job: its segment as it was asked for, its skipped contacts counted by reason. */
export type StartRecord = Omit<typeof automationStarts.$inferSelect, "segment" | "skipped"> & { segment: Record<string, unknown>; skipped: Record<string, number> };

type StoredStart = typeof automationStarts.$inferSelect;

const startOf = (r: StoredStart): StartRecord => ({ ...r, segment: JSON.parse(r.segment) as Record<string, unknown>, skipped: JSON.parse(r.skipped) as Record<string, number> });

const START_COLUMNS = `id, automation_id AS automationId, account_id AS accountId, segment, last_contact_id AS lastContactId, cursor, status, started, skipped,
  created_at AS createdAt, updated_at AS updatedAt`;

export function insertStart(sqlite: Database, s: StartRecord): void {
  sqlite
    .query(
      `INSERT INTO automation_starts (id, automation_id, account_id, segment, last_contact_id, cursor, status, started, skipped, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)`,
    )
    .run(s.id, s.automationId, s.accountId, JSON.stringify(s.segment), s.lastContactId, s.cursor, s.status, s.started, JSON.stringify(s.skipped), s.createdAt, s.updatedAt);
}

export function findStart(sqlite: Database, id: string): StartRecord | null {
  const r = sqlite.query(`SELECT ${START_COLUMNS} FROM automation_starts WHERE id = ?1`).get(id) as StoredStart | null;
  return r ? startOf(r) : null;
}

export function runningStarts(sqlite: Database): StartRecord[] {
  return (sqlite.query(`SELECT ${START_COLUMNS} FROM automation_starts WHERE status = 'running'`).all() as StoredStart[]).map(startOf);
}

export function advanceStart(sqlite: Database, id: string, p: { cursor: string; started: number; skipped: Record<string, number>; done: boolean; updatedAt: string }): void {
  sqlite
    .query("UPDATE automation_starts SET cursor = ?2, started = started + ?3, skipped = ?4, status = CASE WHEN ?5 THEN 'done' ELSE status END, updated_at = ?6 WHERE id = ?1")
    .run(id, p.cursor, p.started, JSON.stringify(p.skipped), p.done ? 1 : 0, p.updatedAt);
}

/** The form an automation follows: its name, fields and settings (parsed; unreadable ones as none). */
export function automationForm(sqlite: Database, accountId: string, formId: string): { id: string; name: string; fields: FieldDef[]; settings: Record<string, unknown> } | null {
  const r = sqlite.query("SELECT id, name, fields, settings FROM forms WHERE id = ?1 AND account_id = ?2").get(formId, accountId) as Pick<typeof forms.$inferSelect, "id" | "name" | "fields" | "settings"> | null;
  return r ? { id: r.id, name: r.name, fields: jsonArray<FieldDef>(r.fields), settings: jsonObject(r.settings) } : null;
}

/** Whether the contact texted in since `sinceIso` (a reply that came before its run was started). */
export function repliedSince(sqlite: Database, contactId: string, sinceIso: string): boolean {
  return sqlite.query("SELECT 1 AS x FROM inbound_messages WHERE contact_id = ?1 AND received_at > ?2 LIMIT 1").get(contactId, sinceIso) !== null;
}

/** Marks one active run to stop (see stoppingRuns). */
export function markRunStopping(sqlite: Database, runId: string, reason: string): void {
  sqlite.query("UPDATE automation_runs SET stop_reason = ?2 WHERE id = ?1 AND status = 'active' AND stop_reason IS NULL").run(runId, reason);
}

/** Whether the contact has an active run of the automation (one seek of automation_runs_one_active_idx). */
export function hasActiveRun(sqlite: Database, automationId: string, contactId: string): boolean {
  return sqlite.query("SELECT 1 AS x FROM automation_runs WHERE automation_id = ?1 AND contact_id = ?2 AND status = 'active'").get(automationId, contactId) !== null;
}
