import { t, type Static } from "elysia";
import { checked, Envelope, Media, NullableString, NullableTimestamp, PageInfo, Timestamp, Deleted, literals, Actor } from "./common";
import { CONTACT_STATUSES } from "../../domain/contact-update";
import { EXPORT_FORMATS } from "../../domain/contact-export";
import { MAX_PAGE, MAX_PAGE_SIZE } from "../../domain/query-params";
import { AutomationRun } from "./automations";

const ContactStatus = literals(CONTACT_STATUSES);
const Period = literals(["1d", "7d", "30d", "90d", "1y"]);
const SortBy = literals(["createdAt", "updatedAt", "firstName", "lastName"]);
const Order = literals(["asc", "desc"]);
const PageNumber = t.Integer({ minimum: 1, maximum: MAX_PAGE });
const PageSize = t.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE });

/**
 * Contacts models. Query values and body fields are declared loosely (strings / unknown) on
 * purpose: the domain checks them so that every failure names its parameter and the allowed
 * values, and unknown body keys are refused by name rather than stripped.
 */
const QueryText = (description: string, doc?: import("@sinclair/typebox").TSchema) => t.Optional(t.String({ description, ...(doc ? { "x-type": doc } : {}) }));

export const ContactListQuery = t.Object(
  {
    page: QueryText("page number, from 1 (default 1)", PageNumber),
    limit: QueryText("page size, 1-100 (default 50)", PageSize),
    status: QueryText("new | contacted | responded | converted", ContactStatus),
    optedOut: QueryText("true | false: only contacts that opted out of texts, or only those that did not", t.Boolean()),
    search: QueryText("matches first/last name, e-mail, or phone digits in any format; case-insensitive"),
    tags: QueryText("comma-separated; contacts having ALL of them"),
    formId: QueryText("the form that created the contact"),
    createdAfter: QueryText("ISO 8601 date or date-time, inclusive"),
    createdBefore: QueryText("ISO 8601 date or date-time, exclusive"),
    sortBy: QueryText("createdAt (default) | updatedAt | firstName | lastName", SortBy),
    order: QueryText("asc | desc (default)", Order),
  },
  { additionalProperties: true },
);

export const PagingQuery = t.Object(
  { page: QueryText("page number, from 1", PageNumber), limit: QueryText("page size, 1-100", PageSize) },
  { additionalProperties: true },
);

export const ExportQuery = t.Object(
  {
    format: QueryText("json (default) | csv | xlsx", literals(EXPORT_FORMATS)),
    status: QueryText("new | contacted | responded | converted", ContactStatus),
    optedOut: QueryText("true | false", t.Boolean()),
    tags: QueryText("comma-separated; contacts having ALL of them"),
    fields: QueryText(
      "comma-separated columns in the order wanted, e.g. firstName,phoneNumber,customFields.company; `customFields` = one column per custom field; default: every column",
    ),
    formId: QueryText("only contacts created by this form"),
    search: QueryText("as the list's search: name, e-mail or phone digits"),
    createdAfter: QueryText("ISO 8601 date or date-time (inclusive)"),
    createdBefore: QueryText("ISO 8601 date or date-time"),
  },
  { additionalProperties: true },
);

export const AnalyticsQuery = t.Object(
  {
    period: QueryText("1d | 7d | 30d (default) | 90d | 1y", Period),
    formId: QueryText("only contacts created by this form"),
    timezone: QueryText("IANA zone for the period's days (default UTC)"),
  },
  { additionalProperties: true },
);

const field = (description: string, doc?: import("@sinclair/typebox").TSchema) => t.Optional(doc ? checked(doc, description) : t.Unknown({ description }));

const contactFields = {
    phoneNumber: field("required on create; any accepted phone format, stored as E.164", t.String({ minLength: 1 })),
    firstName: field("at most 50 characters; null or empty clears", t.Union([t.String({ maxLength: 50 }), t.Null()])),
    lastName: field("at most 50 characters; null or empty clears", t.Union([t.String({ maxLength: 50 }), t.Null()])),
    email: field("valid e-mail address; null or empty clears", t.Union([t.String(), t.Null()])),
    status: field("new | contacted | responded | converted", ContactStatus),
    customFields: field("object of strings (≤ 500 characters); merged, null deletes a key", t.Record(t.String(), t.Union([t.String({ maxLength: 500 }), t.Null()]))),
    tags: field("array of ≤ 50 strings (≤ 50 characters, no , or ;); replaces the tags", t.Array(t.String({ minLength: 1, maxLength: 50 }), { maxItems: 50 })),
    notes: field("at most 5000 characters", t.Union([t.String({ maxLength: 5000 }), t.Null()])),
    source: field("at most 100 characters", t.Union([t.String({ maxLength: 100 }), t.Null()])),
    lastResponseAt: field("ISO 8601 timestamp or null", t.Union([t.String({ format: "date-time" }), t.Null()])),
    timeZone: field("the contact's own IANA time zone, e.g. Europe/London; null or empty clears (the number's country or the form's zone applies)", t.Union([t.String({ maxLength: 64 }), t.Null()])),
    optedOut: field("true: never text this number (queued texts are cancelled); false: opt back in", t.Boolean()),
    consent: field('on create only: {"source": "manual"} (you added the customer by hand) or {"source": "api"} (default)', t.Object({ source: literals(["manual", "api"]) })),
};
export const ContactBody = t.Object(contactFields, { additionalProperties: true });
export const ContactCreateBody = t.Object(contactFields, { additionalProperties: true, "x-required": ["phoneNumber"] });

export const BulkBody = t.Object(
  {
    contactIds: field("array of 1-1000 contact ids", t.Array(t.String(), { minItems: 1, maxItems: 1000 })),
    updates: field("the fields of PUT /contacts/<id> (phoneNumber excluded)", t.Record(t.String(), t.Unknown())),
  },
  { additionalProperties: true, "x-required": ["contactIds", "updates"] },
);

export const SearchBody = t.Object(
  {
    customFields: field("object: field name → exact value; all must match", t.Record(t.String(), t.String())),
    tags: field("array (or comma-separated string) of tags the contact must all have", t.Union([t.Array(t.String()), t.String()])),
    status: field("new | contacted | responded | converted", ContactStatus),
    page: field("page number, from 1", PageNumber),
    limit: field("page size, 1-100", PageSize),
    sortBy: field("createdAt | updatedAt | firstName | lastName", SortBy),
    order: field("asc | desc", Order),
  },
  { additionalProperties: true },
);

// ---------------------------------------------------------------------------------------------
// Answers

const Count = t.Integer({ minimum: 0 });
/**
 * A contact's custom fields as answered. An object with additionalProperties rather than
 * t.Record: the response normaliser copies a Record key by key into `{}`, which drops a field
 * named `__proto__`; it spreads additional properties, which keeps it (docs/api-decisions.md,
 * "Hostile input, round two").
 */
const CustomFields = t.Object({}, { additionalProperties: t.String() });

/** How a contact entered, recorded when it was created (src/db/stores/contacts/index.ts ConsentRecord). */
const Consent = t.Object({
  source: literals(["webhook", "import", "manual", "api", "inbound"]),
  formId: t.Optional(t.String({ description: "webhook: the form posted to" })),
  at: Timestamp,
  ipAddress: t.Optional(t.String({ description: "the address the request came from, when known" })),
  /** Who added the contact through the dashboard or the API: the signed-in person or the key. */
  by: t.Optional(Actor),
});

export const Contact = t.Object(
  {
    id: t.String(),
    phoneNumber: t.String({ description: "E.164" }),
    firstName: NullableString,
    lastName: NullableString,
    email: NullableString,
    status: ContactStatus,
    formId: NullableString,
    formName: NullableString,
    customFields: CustomFields,
    tags: t.Array(t.String()),
    lastContactedAt: NullableTimestamp,
    lastResponseAt: NullableTimestamp,
    messageCount: Count,
    source: NullableString,
    notes: NullableString,
    timeZone: t.Optional(t.Union([t.String(), t.Null()], { description: "the contact's own IANA time zone; null when none is set (quiet hours and sendAt then use the number's country when it has one zone, else the form's)" })),
    optedOut: t.Optional(t.Boolean({ description: "true: the contact asked not to be texted" })),
    optedOutAt: NullableTimestamp,
    consent: t.Union([Consent, t.Null()], { description: "how the contact entered (null for contacts from before consent was recorded)" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
);

/** The columns a contact's list row and its export row both start with. */
const contactColumns = {
  id: t.String(),
  firstName: NullableString,
  lastName: NullableString,
  phoneNumber: t.String(),
  email: NullableString,
  status: ContactStatus,
  formId: NullableString,
  formName: NullableString,
  tags: t.Array(t.String()),
};

export const ContactSummary = t.Object(
  {
    ...contactColumns,
    messageCount: Count,
    optedOut: t.Boolean({ description: "true: the contact asked not to be texted" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
);

export const ContactAnswer = Envelope(t.Object({ contact: Contact }));
export const ContactWithRunsAnswer = Envelope(t.Object({ contact: Contact, automationRuns: t.Array(AutomationRun, { description: "the contact's automation runs, newest first (at most 50)" }) }));
export const ContactListAnswer = Envelope(t.Object({ contacts: t.Array(ContactSummary), pagination: PageInfo }));
/** The list's rows come from SQL typed loosely; the response check at run time holds them to this. */
export type ContactList = Static<typeof ContactListAnswer>["data"];
export const ContactDeleted = Deleted;

/** A text either way on the contact's time line (the contacts store's TimelineItem): a sent one has sentAt and formName, a received one receivedAt. */
const ContactTimelineMessage = t.Object(
  {
    id: t.String(),
    direction: literals(["outbound", "inbound"]),
    content: t.String(),
    status: t.String({ description: "a sent text's status (queued | sent | failed | cancelled); received for one they sent" }),
    sentAt: t.Optional(NullableString),
    formName: t.Optional(NullableString),
    createdAt: t.String(),
    receivedAt: t.Optional(NullableString),
  },
  { description: "a text sent or received, newest first" },
);
export const ContactMessagesAnswer = Envelope(
  t.Object({
    messages: t.Array(ContactTimelineMessage),
    total: Count,
  }),
);
export type ContactMessages = Static<typeof ContactMessagesAnswer>["data"];

const BulkError = t.Object({ id: t.String(), code: t.String(), message: t.String() }, { additionalProperties: true });
export const ContactBulkAnswer = Envelope(t.Object({ updated: Count, errors: t.Array(BulkError) }, { additionalProperties: true }));

/** POST /v1/contacts/<id>/opt-out and /opt-in. */
export const OptOutBody = t.Object(
  { reason: field("why, in the owner's words (at most 500 characters); required to opt back in", t.String({ maxLength: 500 })) },
  { additionalProperties: true },
);
export const OptOutAnswer = Envelope(
  t.Object({
    contact: Contact,
    changed: t.Boolean({ description: "false: the contact was already so; nothing was changed or recorded" }),
  }),
);

export const BulkIdsBody = t.Object(
  { contactIds: field("array of 1-1000 contact ids", t.Array(t.String(), { minItems: 1, maxItems: 1000 })) },
  { additionalProperties: true, "x-required": ["contactIds"] },
);
export const BulkOptOutBody = t.Object(
  {
    contactIds: field("array of 1-1000 contact ids", t.Array(t.String(), { minItems: 1, maxItems: 1000 })),
    reason: field("why, in the owner's words (at most 500 characters)", t.String({ maxLength: 500 })),
  },
  { additionalProperties: true, "x-required": ["contactIds"] },
);
export const BulkOptOutAnswer = Envelope(t.Object({ optedOut: Count, errors: t.Array(BulkError) }, { additionalProperties: true }));
export const BulkDeleteAnswer = Envelope(t.Object({ deleted: Count, errors: t.Array(BulkError) }, { additionalProperties: true }));

const ConsentEntry = t.Object({
  action: literals(["opted_out", "opted_in"]),
  /** manual: by hand; keyword: the customer's STOP or START text; import; api: optedOut in a contact body. */
  source: literals(["manual", "keyword", "import", "api"]),
  reason: NullableString,
  by: t.Union([Actor, t.Null()], { description: "who made the change; null when the customer did (a text)" }),
  at: Timestamp,
});
export const ConsentHistoryAnswer = Envelope(t.Object({ entries: t.Array(ConsentEntry), total: Count }));

export const ImportAnswer = Envelope(
  t.Object(
    {
      created: Count,
      updated: Count,
      errors: t.Array(t.Object({ row: t.Integer({ minimum: 1 }), field: t.String(), message: t.String() }, { additionalProperties: true }), {
        description: "refused rows (row 1 is the header)",
      }),
      dryRun: t.Optional(t.Literal(true, { description: "present with ?dryRun=true: the counts are what the import would do; nothing was saved" })),
    },
    { additionalProperties: true },
  ),
);

const Analytics = t.Object(
  {
    period: t.String(),
    timezone: t.String(),
    from: Timestamp,
    to: Timestamp,
    totalContacts: Count,
    statusDistribution: t.Object({ new: Count, contacted: Count, responded: Count, converted: Count }, { additionalProperties: true }),
    conversionRate: t.Number({ description: "per cent" }),
    averageTimeToResponse: t.String({ description: "human-readable, or n/a" }),
    averageTimeToResponseSeconds: t.Union([t.Number(), t.Null()]),
    respondedContacts: Count,
    topPerformingForms: t.Array(
      t.Object({ formId: t.String(), formName: NullableString, contacts: Count, converted: Count, conversionRate: t.Number() }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
);
export const ContactAnalyticsAnswer = Envelope(t.Composite([Analytics, t.Object({ analytics: Analytics })], { additionalProperties: true }));

/** One contact as the JSON export writes it. */
export const ExportedContact = t.Partial(t.Object(
  {
    ...contactColumns,
    source: NullableString,
    notes: NullableString,
    messageCount: Count,
    lastContactedAt: NullableTimestamp,
    lastResponseAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    customFields: CustomFields,
    optedOut: t.Boolean({ description: "true: the contact asked not to be texted" }),
    optedOutAt: NullableTimestamp,
    timeZone: t.Union([t.String(), t.Null()], { description: "the contact's own IANA time zone; null when none is set" }),
  },
  { additionalProperties: true },
), { additionalProperties: true, description: "every column, or with ?fields= only the columns asked for" });

export const ExportFile = Media(
  {
    "application/json": t.Array(ExportedContact),
    "text/csv": t.String({ description: "one row per contact; columns as the JSON keys, customFields.<name> columns, tags joined by ;" }),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": t.String({ format: "binary", description: "the CSV's columns as a worksheet" }),
  },
  { description: "The contacts as a file (format= chooses the media type)", headers: ["Content-Disposition"] },
);

export const ImportCsv = t.String({ description: "CSV: the export's columns or their accepted aliases (docs/contacts.md); a header row first; at most 50 MiB" });
export const ImportXlsx = t.String({ format: "binary", description: "XLSX workbook (first worksheet)" });
export const ImportUpload = t.Object({ file: t.String({ format: "binary", description: "a .csv or .xlsx file" }) });
