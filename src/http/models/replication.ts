import { t } from "elysia";

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T, description: string) => t.Union([s, t.Null()], { description });

/** /health's `replication` (docs/api-decisions.md, "Continuous replication with Litestream"). */
export const ReplicationHealthModel = t.Object({
  state: t.UnionEnum(["off", "starting", "ok", "behind", "stalled"], {
    description: "off: no replica set; starting: before the replica first confirmed a copy; ok; behind: more than 10 s behind (a warning); stalled: more than 60 s (a failure; a replication.stalled event went out)",
  }),
  lagSeconds: Nullable(t.Number({ minimum: 0 }), "how long the replica may be missing writes (0 when it holds all); null when off"),
  lastSyncAt: Nullable(t.String({ format: "date-time" }), "the last moment the replica was confirmed to hold every write"),
  target: Nullable(t.String(), "where to, with any password replaced by ***"),
});

const ReplicationStatus = t.Object({
  state: ReplicationHealthModel.properties.state,
  lagSeconds: ReplicationHealthModel.properties.lagSeconds,
  lastSyncAt: ReplicationHealthModel.properties.lastSyncAt,
  target: ReplicationHealthModel.properties.target,
  source: Nullable(t.UnionEnum(["flag", "setting"]), "flag: --replicate (or TEXTWIRE_REPLICATE) is in force; setting: the address saved here"),
  running: t.Boolean({ description: "the Litestream process runs right now" }),
  lastError: Nullable(t.String(), "the last error Litestream reported (or why it cannot run), since the replica last caught up"),
});

export const ReplicationAnswer = t.Object({
  status: t.Literal("success"),
  message: t.Optional(t.String()),
  data: t.Object({
    savedUrl: Nullable(t.String(), "the address saved from the dashboard (a password shown as ***)"),
    savedAt: Nullable(t.String({ format: "date-time" }), "when it was saved"),
    flagUrl: Nullable(t.String(), "the address given with --replicate, which wins over the saved one"),
    status: ReplicationStatus,
  }),
});

export const ReplicationBody = t.Object(
  {
    url: t.Union([t.String({ maxLength: 1024 }), t.Null()], {
      description: "file:///folder, sftp://user@host/folder or s3://bucket/folder (?endpoint= for S3-compatible stores); null or \"\" turns replication off",
    }),
  },
  { additionalProperties: false },
);
