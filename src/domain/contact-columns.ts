/**
 * The columns of a contact export, which an import reads back: the fixed ones, then one
 * `customFields.<name>` column per custom field. Shared by contact-export.ts and import-columns.ts.
 *
 * Pure: no database.
 */
export const BASE_COLUMNS = [
  "id",
  "firstName",
  "lastName",
  "phoneNumber",
  "email",
  "status",
  "formId",
  "formName",
  "tags",
  "source",
  "notes",
  "messageCount",
  "lastContactedAt",
  "lastResponseAt",
  "optedOut",
  "optedOutAt",
  "createdAt",
  "updatedAt",
  "timeZone",
] as const;
export type BaseColumn = (typeof BASE_COLUMNS)[number];

export const CUSTOM_PREFIX = "customFields.";

/** Columns an import reads but never writes: the service owns them. */
export const IMPORT_IGNORED_COLUMNS = ["id", "formName", "messageCount", "lastContactedAt", "updatedAt"] as const;
