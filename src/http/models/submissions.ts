import { t } from "elysia";
import { EnumQuery, Media, PageInfo, PageQuery } from "./common";
import { SUPPRESSION_REASONS } from "../../domain/submission-values";

const QueryText = (description: string) => t.Optional(t.String({ description }));

export const SubmissionListQuery = t.Object(
  {
    ...PageQuery,
    formId: QueryText("only this form's submissions"),
    contactId: QueryText("only this contact's submissions"),
    from: QueryText("ISO 8601 date or date-time, inclusive"),
    to: QueryText("ISO 8601 date or date-time, exclusive"),
    suppressed: EnumQuery(["true", "false", ...SUPPRESSION_REASONS], "true: only those that queued no text (any reason); false: only those that did or were duplicates; or one reason"),
    unread: EnumQuery(["true", "false"], "true: only those nobody opened yet; false: only opened ones"),
  },
  { additionalProperties: true },
);

export const SubmissionIdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 200 }) });

export const SubmittedValue = t.Object({
  field: t.String({ description: "the field's name as posted" }),
  label: t.String({ description: "the form's label for it (or the name in words)" }),
  value: t.String({ description: "the value as the visitor sent it (phone numbers in E.164)" }),
});

export const Submission = t.Object({
  id: t.String(),
  formId: t.String(),
  formName: t.String(),
  contactId: t.String(),
  values: t.Array(SubmittedValue, { description: "what the visitor sent, in the form's field order, each with its label (empty for a submission accepted before this was kept)" }),
  createdAt: t.String({ format: "date-time" }),
  messageId: t.Union([t.String(), t.Null()], { description: "the text it queued (a duplicate: the first one's); null when none" }),
  suppressed: t.Union([t.UnionEnum([...SUPPRESSION_REASONS]), t.Null()], { description: "why no text was queued; opted-out: reply another way" }),
  readAt: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "when someone on the team first opened it; null: unread" }),
});

export const SubmissionListAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ submissions: t.Array(Submission), pagination: PageInfo }),
});

export const SubmissionAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ submission: Submission }),
});

export const SubmissionExportQuery = t.Object(
  {
    formId: QueryText("only this form's submissions"),
    contactId: QueryText("only this contact's submissions"),
    from: QueryText("ISO 8601 date or date-time, inclusive"),
    to: QueryText("ISO 8601 date or date-time, exclusive"),
    suppressed: EnumQuery(["true", "false", ...SUPPRESSION_REASONS], "as for the list"),
    unread: EnumQuery(["true", "false"], "as for the list"),
  },
  { additionalProperties: true },
);

export const SubmissionExportFile = Media(
  { "text/csv": t.String({ description: "one row per submission, newest first: Received, Form, one column per field (by its label), Text, Submission id, Contact id" }) },
  { description: "The submissions as a CSV file", headers: ["Content-Disposition"] },
);
