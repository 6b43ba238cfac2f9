import { sqliteTable, text, integer } from "drizzle-orm/sqlite-core";

/**
 * The webhook's append-only intake: one row per acknowledged submission, in
 * acknowledgement order, holding everything the applier needs (`entry`, an IntakeEntry's JSON, compressed unless the server is busy: src/db/intake-entry-codec.ts).
 * Rows are deleted by the applier in the transaction that applies them.
 */
export const submissionIntake = sqliteTable("submission_intake", {
  seq: integer("seq").primaryKey(),
  entry: text("entry").notNull(),
});

/** One row (id 1): the last intake seq the applier has applied (its high-water mark). */
export const intakeApplied = sqliteTable("intake_applied", {
  id: integer("id").primaryKey(),
  seq: integer("seq").notNull(),
});

/** One row (id 1): moved by triggers on every change of a form or an account (the webhook's form cache). */
export const webhookFormsVersion = sqliteTable("webhook_forms_version", {
  id: integer("id").primaryKey(),
  v: integer("v").notNull(),
});
