import { t } from "elysia";
import { ReplicationAnswer } from "./replication";
import { StoredBackupsAnswer } from "./account";

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T, description: string) => t.Union([s, t.Null()], { description });

export const ServerAddressAnswer = t.Object({
  status: t.Literal("success"),
  message: t.Optional(t.String()),
  data: t.Object({
    savedUrl: Nullable(t.String(), "the address saved in Settings"),
    savedAt: Nullable(t.String({ format: "date-time" }), "when it was saved"),
    flagUrl: Nullable(t.String(), "the address given with --public-url, which wins over the saved one"),
    effective: t.Object({
      url: t.String({ description: "the address forms and phones are given" }),
      source: t.UnionEnum(["flag", "setting", "request"], { description: "flag: --public-url; setting: saved here; request: none set, so the address this request came in on (set one: published forms must not depend on it)" }),
    }),
  }),
});

export const ServerAddressBody = t.Object(
  {
    url: t.Union([t.String({ maxLength: 1024 }), t.Null()], { description: "https://name-or-address[:port] (a bare name is taken as https://); null or \"\" clears it" }),
  },
  { additionalProperties: false },
);

export const HttpsStatusAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    on: t.Boolean({ description: "the server speaks HTTPS" }),
    certificate: Nullable(t.UnionEnum(["local-ca", "certificate"]), "local-ca: from `textwire tls init`; certificate: given with --tls-cert"),
    certificateExpiresAt: Nullable(t.String({ format: "date-time" }), "when the certificate expires"),
    daysLeft: Nullable(t.Integer(), "days until it expires (negative: expired)"),
    port: Nullable(t.Integer({ minimum: 0 }), "the port the server listens on"),
    redirectPort: Nullable(t.Integer({ minimum: 0 }), "the old plain-HTTP port, answering 308 to HTTPS and serving /ca.crt"),
    behindProxy: t.Boolean({ description: "--trust-proxy: a reverse proxy in front may do HTTPS" }),
  }),
});

export const PlainHttpFormsAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Array(
    t.Object({
      id: t.String(),
      name: t.String(),
      lastPlainHttpPostAt: t.String({ format: "date-time", description: "the last post to the form's old http:// address" }),
    }),
    { description: "the account's forms posted to over plain HTTP in the last 30 days, most recent first" },
  ),
});

/** `GET /v1/admin/settings`: the four server-wide parts the Settings page shows, in one answer. */
export const ServerSettingsAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    serverAddress: ServerAddressAnswer.properties.data,
    https: HttpsStatusAnswer.properties.data,
    replication: ReplicationAnswer.properties.data,
    backups: StoredBackupsAnswer.properties.data,
  }),
});
