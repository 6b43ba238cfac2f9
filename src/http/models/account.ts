import { t } from "elysia";
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
    backups: t.Array(t.Object({ name: t.String(), createdAt: Timestamp, bytes: Count }), { description: "newest first" }),
  }),
});
