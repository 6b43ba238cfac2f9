import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { forms } from "./forms";

/**
 * Automations (migration 0030; docs/api-decisions.md, "Automations"): timed steps after a form's
 * submission. Deleting one sets `deleted_at` (its runs and their history stay readable through
 * the messages); the triggers of the migration start and stop runs in the causes' own transactions.
 */
export const automations = sqliteTable(
  "automations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    formId: text("form_id")
      .notNull()
      .references(() => forms.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    /** JSON array of steps as stored (domain/automation-steps.ts). */
    steps: text("steps").notNull(),
    stopOnReply: integer("stop_on_reply", { mode: "boolean" }).notNull().default(true),
    /** JSON array of contact statuses. */
    stopOnStatus: text("stop_on_status").notNull().default("[]"),
    restartOnResubmit: integer("restart_on_resubmit", { mode: "boolean" }).notNull().default(false),
    deletedAt: text("deleted_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("automations_account_created_idx").on(t.accountId, t.createdAt),
    index("automations_form_live_idx").on(t.formId).where(sql`${t.isActive} = 1 AND ${t.deletedAt} IS NULL`),
  ],
);

/** One contact going through one automation: active → completed, or stopped (stop_reason). */
export const automationRuns = sqliteTable(
  "automation_runs",
  {
    id: text("id").primaryKey(),
    automationId: text("automation_id")
      .notNull()
      .references(() => automations.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    /** No foreign key: a deleted contact's run stays, stopped "contact-deleted". */
    contactId: text("contact_id").notNull(),
    submissionId: text("submission_id"),
    status: text("status", { enum: ["active", "completed", "stopped"] }).notNull(),
    /** Set on an active run by a cause (a trigger) = the stop is pending; kept once stopped. */
    stopReason: text("stop_reason"),
    startedAt: text("started_at").notNull(),
    /** The last step's time: the run may complete once it has passed and nothing is queued. */
    endsAt: text("ends_at").notNull(),
    finishedAt: text("finished_at"),
  },
  (t) => [
    uniqueIndex("automation_runs_one_active_idx").on(t.automationId, t.contactId).where(sql`${t.status} = 'active'`),
    uniqueIndex("automation_runs_submission_idx").on(t.automationId, t.submissionId).where(sql`${t.submissionId} IS NOT NULL`),
    index("automation_runs_list_idx").on(t.automationId, t.status, t.startedAt),
    index("automation_runs_contact_idx").on(t.contactId, t.startedAt),
    index("automation_runs_due_idx").on(t.endsAt).where(sql`${t.status} = 'active'`),
    index("automation_runs_stopping_idx").on(t.accountId).where(sql`${t.status} = 'active' AND ${t.stopReason} IS NOT NULL`),
  ],
);

/** A run's steps: at most one message per (run, step), by the key and the unique message id. */
export const automationRunSteps = sqliteTable(
  "automation_run_steps",
  {
    runId: text("run_id")
      .notNull()
      .references(() => automationRuns.id, { onDelete: "cascade" }),
    stepIndex: integer("step_index").notNull(),
    scheduledFor: text("scheduled_for"),
    messageId: text("message_id"),
    /** Why no message: past, opted-out, recipient-limit, quota. */
    skipped: text("skipped"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stepIndex] }), uniqueIndex("automation_run_steps_message_idx").on(t.messageId).where(sql`${t.messageId} IS NOT NULL`)],
);

/** Applied submissions waiting to start runs (written by a trigger on submissions). */
export const automationInbox = sqliteTable("automation_inbox", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  automationId: text("automation_id").notNull(),
  submissionId: text("submission_id").notNull(),
  contactId: text("contact_id").notNull(),
  accountId: text("account_id").notNull(),
  createdAt: text("created_at").notNull(),
});

/** POST /v1/automations/<id>/start in progress: a cursor over the segment's contacts. */
export const automationStarts = sqliteTable(
  "automation_starts",
  {
    id: text("id").primaryKey(),
    automationId: text("automation_id")
      .notNull()
      .references(() => automations.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    segment: text("segment").notNull(),
    lastContactId: text("last_contact_id").notNull(),
    cursor: text("cursor").notNull().default(""),
    status: text("status", { enum: ["running", "done"] }).notNull(),
    started: integer("started").notNull().default(0),
    /** JSON {reason: count}. */
    skipped: text("skipped").notNull().default("{}"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("automation_starts_running_idx").on(t.status).where(sql`${t.status} = 'running'`)],
);
