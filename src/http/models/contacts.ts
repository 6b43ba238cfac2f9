import { t } from "elysia";

/**
 * Contacts models. Query values and body fields are declared loosely (strings / unknown) on
 * purpose: the domain checks them so that every failure names its parameter and the allowed
 * values (CONTRACT §3), and unknown body keys are refused by name rather than stripped.
 */
const QueryText = (description: string) => t.Optional(t.String({ description }));

export const ContactListQuery = t.Object(
  {
    page: QueryText("page number, from 1 (default 1)"),
    limit: QueryText("page size, 1-100 (default 50)"),
    status: QueryText("new | contacted | responded | converted"),
    optedOut: QueryText("true | false: only contacts that opted out of texts, or only those that did not"),
    search: QueryText("matches first/last name, e-mail, or phone digits in any format; case-insensitive"),
    tags: QueryText("comma-separated; contacts having ALL of them"),
    formId: QueryText("the form that created the contact"),
    createdAfter: QueryText("ISO 8601 date or date-time, inclusive"),
    createdBefore: QueryText("ISO 8601 date or date-time, exclusive"),
    sortBy: QueryText("createdAt (default) | updatedAt | firstName | lastName"),
    order: QueryText("asc | desc (default)"),
  },
  { additionalProperties: true },
);

export const PagingQuery = t.Object(
  { page: QueryText("page number, from 1"), limit: QueryText("page size, 1-100") },
  { additionalProperties: true },
);

export const ExportQuery = t.Object(
  {
    format: QueryText("json (default) | csv | xlsx"),
    status: QueryText("new | contacted | responded | converted"),
    optedOut: QueryText("true | false"),
    tags: QueryText("comma-separated; contacts having ALL of them"),
    fields: QueryText("comma-separated columns in the order wanted, e.g. firstName,phoneNumber,customFields.company"),
  },
  { additionalProperties: true },
);

export const AnalyticsQuery = t.Object(
  {
    period: QueryText("1d | 7d | 30d (default) | 90d | 1y"),
    formId: QueryText("only contacts created by this form"),
    timezone: QueryText("IANA zone for the period's days (default UTC)"),
  },
  { additionalProperties: true },
);

const field = (description: string) => t.Optional(t.Unknown({ description }));

export const ContactBody = t.Object(
  {
    phoneNumber: field("required on create; any accepted phone format, stored as E.164"),
    firstName: field("at most 50 characters; null or empty clears"),
    lastName: field("at most 50 characters; null or empty clears"),
    email: field("valid e-mail address; null or empty clears"),
    status: field("new | contacted | responded | converted"),
    customFields: field("object of strings (≤ 500 characters); merged, null deletes a key"),
    tags: field("array of ≤ 50 strings (≤ 50 characters, no , or ;); replaces the tags"),
    notes: field("at most 5000 characters"),
    source: field("at most 100 characters"),
    lastResponseAt: field("ISO 8601 timestamp or null"),
    optedOut: field("true: never text this number (queued texts are cancelled); false: opt back in"),
    consent: field('on create only: {"source": "manual"} (you added the customer by hand) or {"source": "api"} (default)'),
  },
  { additionalProperties: true },
);

export const BulkBody = t.Object(
  {
    contactIds: field("array of 1-1000 contact ids"),
    updates: field("the fields of PUT /contacts/<id> (phoneNumber excluded)"),
  },
  { additionalProperties: true },
);

export const SearchBody = t.Object(
  {
    customFields: field("object: field name → exact value; all must match"),
    tags: field("array (or comma-separated string) of tags the contact must all have"),
    status: field("new | contacted | responded | converted"),
    page: field("page number, from 1"),
    limit: field("page size, 1-100"),
    sortBy: field("createdAt | updatedAt | firstName | lastName"),
    order: field("asc | desc"),
  },
  { additionalProperties: true },
);
