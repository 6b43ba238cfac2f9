import { t } from "elysia";
import { Timestamp } from "./common";

const Count = t.Integer({ minimum: 0 });

export const OverviewQuery = t.Object({
  timezone: t.Optional(t.String({ maxLength: 64, description: "IANA zone the days are counted in, default UTC" })),
});

export const CliCommandField = t.UnionEnum(["textwire", "npx textwire"], {
  description: "how commands are run on this server: `textwire` for the single executable, `npx textwire` from a project folder",
});

export const OverviewAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    queue: t.Object({
      byPriority: t.Object({ urgent: Count, high: Count, normal: Count, low: Count }),
      queued: Count,
      scheduled: t.Integer({ minimum: 0, description: "of the latest-scheduled 100 queued texts, those due later" }),
      scheduledCapped: t.Boolean({ description: "true when `scheduled` reached 100 (there may be more)" }),
      oldestDueAt: t.Union([Timestamp, t.Null()], { description: "the oldest queued text already due, or null" }),
    }),
    today: t.Object({ sent: Count, failed: Count }),
    week: t.Array(t.Object({ date: t.String(), sent: Count, failed: Count })),
    phones: t.Object({ online: Count, total: Count, failedAttemptsToday: Count }),
    status: t.Object({
      plainHttpFromOutside: t.Boolean({ description: "this request came over plain HTTP from another machine" }),
      noPhone: t.Boolean({ description: "no phone is connected: texts wait until one connects" }),
      backupsOff: t.Boolean({ description: "no scheduled backups and no replication" }),
    }),
    cliCommand: CliCommandField,
  }),
});
