/**
 * `textwire doctor`: every structure derived from the messages and contacts, compared with a
 * from-scratch computation (--check) or rebuilt from it (--rebuild).
 *
 *  - message_rollups (analytics, form stats): equal, row for row, to a recomputation from the
 *    messages, submissions and contacts (rows of all zeros, left by status changes and deletes,
 *    are ignored).
 *  - message_counts (list summaries): equal to COUNT(*) per account, status and priority.
 *  - monthly_usage (quota): never below the messages still there per account and month (it is
 *    never decreased when messages are deleted, so it may be above).
 *  - contacts_fts (search): FTS5's own integrity check against the contacts, with the contacts
 *    not indexed yet (contacts_fts_pending, migration 0023) indexed first, in a transaction of its
 *    own that is rolled back; a pending row whose contact is gone is a difference too.
 *  - contact_tags (tag filters, migration 0020): one row per tag in each contact's tags column,
 *    keyed on the contact's rowid, carrying the contact's status (migration 0025).
 *  - conversations (newest activity per contact): a row for every contact with messages in either
 *    direction, its time never before the newest of them (deletes do not lower it, so it may be
 *    after). Unread counts are the inbox's own state (marked read by the owner) and not checked.
 *  - submission_intake (the webhook's intake): an unapplied entry is normal (the applier is
 *    behind); a row at or below the applied mark (its apply committed, it should be gone) or an
 *    unapplied row whose submission already exists is a difference.
 *
 * A check reads in one transaction, so it sees one consistent state even while the server runs;
 * a rebuild writes in one IMMEDIATE transaction (writers wait, nothing half-done is ever seen).
 */
import type { Database } from "bun:sqlite";
import {
  contactTagDifferences,
  conversationDifferences,
  countMessagesAndContacts,
  createRollupScratch,
  derivedRebuildSteps,
  dropRollupScratch,
  inSavepoint,
  findIntakeEntry,
  messageCountDifferences,
  monthlyUsageShortfalls,
  removeIntakeEntry,
  rollupDifferences,
} from "../db/doctor-checks";
import { intakeMismatches } from "../db/stores/intake";
import { IntakeApplier, type IntakeEntry } from "./intake/applier";
import { searchIndexDifferences } from "../db/stores/contacts/search-pending";

export interface Difference {
  structure: "message_rollups" | "message_counts" | "monthly_usage" | "contacts_fts" | "contact_tags" | "submission_intake" | "conversations";
  /** What differs, for a person: the key, the value found and the value expected. */
  detail: string;
}

export interface CheckResult {
  structures: string[];
  differences: Difference[];
  /** Total differing rows per structure (differences lists at most SHOWN_MAX of each). */
  counts: Record<string, number>;
}

export const SHOWN_MAX = 20;

export function checkDerived(sqlite: Database): CheckResult {
  const differences: Difference[] = [];
  const counts: Record<string, number> = { message_rollups: 0, message_counts: 0, monthly_usage: 0, contacts_fts: 0, contact_tags: 0, submission_intake: 0, conversations: 0 };
  const note = (structure: Difference["structure"], detail: string) => {
    counts[structure]++;
    if (counts[structure] <= SHOWN_MAX) differences.push({ structure, detail });
  };
  createRollupScratch(sqlite);
  // Its own (IMMEDIATE) transaction: it indexes the pending contacts, rolled back; see searchIndexDifferences.
  for (const d of searchIndexDifferences(sqlite)) note("contacts_fts", d);
  try {
    sqlite.transaction(() => {
      const rows = rollupDifferences(sqlite);
      for (const r of rows) {
        note(
          "message_rollups",
          `${r.side} account ${r.account_id} form ${r.form_id || "(none)"} ${["day", "hour", "quarter"][(r.level as number) % 3]} ${r.bucket}` +
            `${r.reason ? ` reason ${String(r.reason).slice(1)}` : ""}: queued ${r.queued}, sent ${r.sent}, failed ${r.failed}, cancelled ${r.cancelled}, ` +
            `response ms ${r.sent_ms} over ${r.sent_timed}, submissions ${r.submissions}, new contacts ${r.new_contacts}`,
        );
      }
      const mc = messageCountDifferences(sqlite);
      for (const r of mc) note("message_counts", `account ${r.account_id} ${r.status} priority rank ${r.priority_rank}: found ${r.found}, expected ${r.expected}`);
      const mu = monthlyUsageShortfalls(sqlite);
      for (const r of mu) note("monthly_usage", `account ${r.account_id} ${r.month}: found ${r.found}, expected at least ${r.expected}`);
      const cv = conversationDifferences(sqlite);
      for (const r of cv) {
        note(
          "conversations",
          r.found === null
            ? `contact ${r.contact_id}: no conversation, expected one with activity at ${r.expected}`
            : r.found_account !== r.account_id
              ? `contact ${r.contact_id}: conversation of account ${r.found_account}, expected ${r.account_id}`
              : `contact ${r.contact_id}: newest activity found ${r.found}, expected at least ${r.expected}`,
        );
      }
      const tags = contactTagDifferences(sqlite);
      for (const r of tags) {
        note("contact_tags", `${r.side === "found" ? "extra" : "missing"} tag ${JSON.stringify(r.tag)} (status ${r.status}) of account ${r.account_id}'s contact at rowid ${r.contact_rowid}`);
      }
      for (const m of intakeMismatches(sqlite)) {
        note(
          "submission_intake",
          m.applied
            ? `entry ${m.seq} (submission ${m.submissionId}) is marked applied but still in the intake${m.present ? "" : ", and its submission or message is missing"}`
            : `entry ${m.seq} is not applied yet but its submission ${m.submissionId} already exists`,
        );
      }
    })();
  } finally {
    dropRollupScratch(sqlite);
  }
  return { structures: Object.keys(counts), differences, counts };
}

/** Rebuilds every derived structure from scratch in one transaction; `progress` gets a line per step. */
export function rebuildDerived(sqlite: Database, progress: (line: string) => void = () => {}): { durationMs: number } {
  const t0 = performance.now();
  const step = (label: string, fn: () => void) => {
    const s = performance.now();
    fn();
    progress(`  ${label} (${Math.round(performance.now() - s)} ms)`);
  };
  const { messages, contacts } = countMessagesAndContacts(sqlite);
  progress(`Rebuilding derived data from ${messages} message(s) and ${contacts} contact(s)…`);
  sqlite.transaction(() => {
    // First, so the counts below include what it applies.
    step("submission_intake", () => repairIntake(sqlite, progress));
    for (const s of derivedRebuildSteps()) step(s.label, () => s.run(sqlite));
  })();
  const durationMs = Math.round(performance.now() - t0);
  progress(`Done in ${durationMs} ms.`);
  return { durationMs };
}

/**
 * Intake rows out of step (see checkDerived): a row marked applied whose rows are missing is
 * applied now; every such row then leaves the intake (its rows are in the database).
 */
function repairIntake(sqlite: Database, progress: (line: string) => void): void {
  const mismatches = intakeMismatches(sqlite);
  if (mismatches.length === 0) return;
  const applier = new IntakeApplier(sqlite);
  for (const m of mismatches) {
    if (m.applied && !m.present) {
      try {
        inSavepoint(sqlite, "doctor_intake", () => applier.applyEntry(findIntakeEntry<IntakeEntry>(sqlite, m.seq)!));
        progress(`    intake entry ${m.seq}: applied`);
      } catch (err) {
        progress(`    intake entry ${m.seq}: not applicable (${(err as Error).message}); removed`);
      }
    }
    removeIntakeEntry(sqlite, m.seq);
  }
}
