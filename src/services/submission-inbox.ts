/**
 * The requests the team reads: every accepted submission with what the visitor sent, listed
 * newest first (the dashboard's inbox and GET /v1/submissions), one at a time, a contact's, the
 * unread mark, and the CSV export (docs/api-decisions.md, "The owner hears back", every request
 * kept and listed). The rows are written by the intake applier; nothing here writes but the mark.
 */
import type { Database } from "bun:sqlite";
import Papa from "papaparse";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { UUID_RE } from "../lib/ids";
import type { FieldError } from "../domain/submission";
import { enumError, parsePaging, parseQueryDate } from "../domain/query-params";
import { labelledValues, SUPPRESSION_REASONS, type SubmittedValue, type SuppressionReason } from "../domain/submission-values";
import { neutraliseCell } from "../domain/contact-export";
import { fieldLabel } from "../domain/visitor-words";
import {
  accountHas,
  countSubmissions,
  findSubmission,
  formFieldDefs,
  iterateSubmissions,
  listSubmissions,
  markSubmissionsRead,
  submissionFieldNames,
  submissionOfMessage,
  type SubmissionFilter,
  type SubmissionRecord,
} from "../db/stores/submission-records";

/** A submission as the API answers it. */
export interface Submission {
  id: string;
  formId: string;
  formName: string;
  contactId: string;
  values: SubmittedValue[];
  createdAt: string;
  messageId: string | null;
  suppressed: SuppressionReason | null;
  readAt: string | null;
}

export interface SubmissionQuery {
  page?: string;
  limit?: string;
  formId?: string;
  contactId?: string;
  from?: string;
  to?: string;
  suppressed?: string;
  unread?: string;
}

/** `suppressed` filter words: any reason, none, or one reason. */
const SUPPRESSED_FILTERS = ["true", "false", ...SUPPRESSION_REASONS] as const;
/** Most submissions a contact's page shows at once (newest first). */
export const CONTACT_SUBMISSIONS_MAX = 100;

export function toSubmission(r: SubmissionRecord): Submission {
  return {
    id: r.id,
    formId: r.formId,
    formName: r.formName,
    contactId: r.contactId,
    values: labelledValues(r.formFields, r.formValues),
    createdAt: r.createdAt,
    messageId: r.messageId,
    suppressed: (SUPPRESSION_REASONS as readonly string[]).includes(r.suppressed ?? "") ? (r.suppressed as SuppressionReason) : null,
    readAt: r.readAt,
  };
}

export class SubmissionInboxService {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
  ) {}

  /** The filters checked: a malformed value is 400 naming it; another account's form or contact 404. */
  private filter(accountId: string, q: SubmissionQuery, errors: FieldError[]): SubmissionFilter {
    const f: SubmissionFilter = {};
    for (const [k, table, code] of [
      ["formId", "forms", "FORM_NOT_FOUND"],
      ["contactId", "contacts", "CONTACT_NOT_FOUND"],
    ] as const) {
      const v = q[k];
      if (v === undefined || v === "") continue;
      if (!UUID_RE.test(v)) {
        errors.push({ field: k, message: `${k} must be an id (a UUID)`, requirement: "UUID", provided: v.slice(0, 100) });
        continue;
      }
      f[k] = v.toLowerCase();
      // Checked after the format (a 400 comes first), before any row is read.
      if (errors.length === 0 && !accountHas(this.sqlite, accountId, table, f[k]!)) throw new AppError(code, { details: { [k]: v } });
    }
    for (const k of ["from", "to"] as const) {
      const raw = q[k];
      if (raw === undefined || raw === "") continue;
      const t = parseQueryDate(raw);
      if (t === null) errors.push({ field: k, message: `${k} must be an ISO 8601 date`, requirement: "ISO 8601 date or date-time, e.g. 2026-11-01 or 2026-11-01T00:00:00Z", provided: raw.slice(0, 100) });
      else f[k] = iso(t);
    }
    if (q.suppressed !== undefined && q.suppressed !== "") {
      const s = q.suppressed;
      if (!(SUPPRESSED_FILTERS as readonly string[]).includes(s)) errors.push(enumError("suppressed", SUPPRESSED_FILTERS, s.slice(0, 100)));
      else f.suppressed = s === "true" ? "any" : s === "false" ? "none" : s;
    }
    if (q.unread !== undefined && q.unread !== "") {
      if (q.unread !== "true" && q.unread !== "false") errors.push(enumError("unread", ["true", "false"], q.unread.slice(0, 100)));
      else f.unread = q.unread === "true";
    }
    return f;
  }

  list(accountId: string, q: SubmissionQuery) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(q, errors);
    const f = this.filter(accountId, q, errors);
    if (errors.length) throw validationError(errors);
    const total = countSubmissions(this.sqlite, accountId, f);
    const rows = total > (page - 1) * limit ? listSubmissions(this.sqlite, accountId, f, limit, (page - 1) * limit) : [];
    return { submissions: rows.map((r) => toSubmission(r)), pagination: { total, page, limit, totalPages: Math.ceil(total / limit) } };
  }

  get(accountId: string, id: string): Submission {
    const r = UUID_RE.test(id) ? findSubmission(this.sqlite, accountId, id.toLowerCase()) : null;
    if (!r) throw new AppError("SUBMISSION_NOT_FOUND", { details: { id: id.slice(0, 100) } });
    return toSubmission(r);
  }

  /** Marks it read (once: the first time stays); answers it as it is now. */
  markRead(accountId: string, id: string): Submission {
    this.get(accountId, id);
    markSubmissionsRead(this.sqlite, accountId, [id.toLowerCase()], iso(this.clock()));
    return this.get(accountId, id);
  }

  /** A contact's submissions, newest first (the contact's timeline). */
  ofContact(accountId: string, contactId: string): Submission[] {
    return listSubmissions(this.sqlite, accountId, { contactId }, CONTACT_SUBMISSIONS_MAX, 0).map((r) => toSubmission(r));
  }

  /** The request that queued `messageId` to the contact (a conversation's start), if any. */
  ofMessage(accountId: string, contactId: string, messageId: string): Submission | null {
    const r = submissionOfMessage(this.sqlite, accountId, contactId, messageId);
    return r ? toSubmission(r) : null;
  }

  /**
   * The filter's submissions as CSV, newest first, streamed a chunk at a time: when, form, each
   * field by its label (the union of the rows' fields), and whether a text was sent. Cells a
   * spreadsheet would run as formulas are neutralised, as in the contacts' export.
   */
  exportCsv(accountId: string, q: SubmissionQuery): { filename: string; body: ReadableStream<Uint8Array> } {
    const errors: FieldError[] = [];
    const f = this.filter(accountId, q, errors);
    if (errors.length) throw validationError(errors);
    const names = submissionFieldNames(this.sqlite, accountId, f);
    // Each column by the label a form gives its field (the filtered form's first).
    const labels = new Map<string, string>();
    for (const fields of formFieldDefs(this.sqlite, accountId, f.formId)) {
      for (const v of labelledValues(fields, Object.fromEntries(names.map((n) => [n, ""])))) if (!labels.has(v.field)) labels.set(v.field, v.label);
    }
    const header = ["Received", "Form", ...names.map((n) => labels.get(n) ?? fieldLabel(n)), "Text", "Submission id", "Contact id"];
    const rows = iterateSubmissions(this.sqlite, accountId, f);
    const enc = new TextEncoder();
    let first = true;
    return {
      filename: `submissions-${iso(this.clock()).slice(0, 10)}.csv`,
      body: new ReadableStream<Uint8Array>({
        pull: (controller) => {
          let out = first ? Papa.unparse([header]) + "\r\n" : "";
          first = false;
          const batch: string[][] = [];
          for (let i = 0; i < 500; i++) {
            const next = rows.next();
            if (next.done) break;
            const s = toSubmission(next.value);
            const byName = new Map(s.values.map((v) => [v.field, v.value]));
            batch.push(
              [s.createdAt, s.formName, ...names.map((n) => byName.get(n) ?? ""), textWords(s), s.id, s.contactId].map((c) => neutraliseCell(c)),
            );
          }
          if (batch.length) out += Papa.unparse(batch, { header: false }) + "\r\n";
          if (out) controller.enqueue(enc.encode(out));
          if (batch.length < 500) controller.close();
        },
        cancel: () => {
          rows.return?.();
        },
      }),
    };
  }
}

/** The export's "Text" column in plain words. */
function textWords(s: Submission): string {
  if (s.suppressed === "opted-out") return "not sent: opted out of texts";
  if (s.suppressed === "no-consent") return "not sent: consent box not ticked";
  if (s.suppressed === "recipient-limit") return "not sent: daily limit for this number";
  return s.messageId ? "sent" : "not sent";
}
