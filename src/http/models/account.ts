import { t } from "elysia";
import { checked } from "./common";
import { Timestamp } from "./common";
import { CliCommandField } from "./overview";

const Count = t.Integer({ minimum: 0 });

export const AccountAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    account: t.Object({
      id: t.String(),
      name: t.String(),
      plan: t.UnionEnum(["standard", "pro", "enterprise"]),
      defaultCountry: t.String({ description: "ISO 3166 alpha-2: what public forms recommend as allowed countries" }),
      createdAt: Timestamp,
    }),
    limits: t.Object({
      apiRequestsPerHour: t.Integer({ minimum: 1, description: "per key (the plan's default unless the operator set one)" }),
      apiBurstPerMinute: t.Integer({ minimum: 1, description: "per key" }),
      monthlyQuota: t.Union([t.Integer({ minimum: 0 }), t.Null()], { description: "messages per UTC calendar month; null = no quota" }),
    }),
    usage: t.Object({
      month: t.String({ description: "the UTC month counted, e.g. 2026-11" }),
      messages: t.Integer({ minimum: 0, description: "messages created this month (deleting messages does not lower it)" }),
      resetsAt: Timestamp,
    }),
    access: t.Object({
      permission: t.UnionEnum(["admin_access", "standard_access"], { description: "of the key (or the session's key) making this request" }),
      operator: t.Boolean({ description: "a server operator key: may run and list backups" }),
    }),
    changeWith: t.String({ description: "limits are changed by the server's operator with this command" }),
    cliCommand: CliCommandField,
  }),
});

export const StoredBackupsAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    scheduled: t.Boolean({ description: "false when the server runs without --backup-dir" }),
    directory: t.Union([t.String(), t.Null()], { description: "--backup-dir" }),
    everyMinutes: t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "--backup-every" }),
    keep: t.Integer({ minimum: 1, description: "--backup-keep: older files are deleted" }),
    source: t.Union([t.UnionEnum(["flag", "setting"]), t.Null()], { description: "flag: --backup-dir is in force and wins (the dashboard cannot change it); setting: saved from the dashboard; null: no scheduled backups" }),
    backups: t.Array(t.Object({ name: t.String(), createdAt: Timestamp, bytes: Count }), { description: "newest first" }),
  }),
});

/** PUT /v1/admin/backups: the numbers are checked by the service, which says what is wrong in plain words. */
export const BackupScheduleBody = t.Object(
  {
    directory: t.Union([t.String({ maxLength: 1024 }), t.Null()], { description: "the folder's full path on the server (created when missing, checked for writability); null turns scheduled backups off" }),
    everyMinutes: t.Optional(checked(t.Integer({ minimum: 5, maximum: 43200 }), "how often, in minutes (default 1440: daily)")),
    keep: t.Optional(checked(t.Integer({ minimum: 1, maximum: 1000 }), "copies kept; older ones are deleted (default 7)")),
  },
  { additionalProperties: false },
);
