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
    certificate: Nullable(t.UnionEnum(["local-ca", "certificate", "public"]), "local-ca: from `textwire tls init`; certificate: given with --tls-cert; public: from an ACME CA (--domain or \"Get a certificate\")"),
    certificateExpiresAt: Nullable(t.String({ format: "date-time" }), "when the certificate expires"),
    daysLeft: Nullable(t.Integer(), "days until it expires (negative: expired)"),
    port: Nullable(t.Integer({ minimum: 0 }), "the port the server listens on"),
    redirectPort: Nullable(t.Integer({ minimum: 0 }), "the old plain-HTTP port, answering 308 to HTTPS and serving /ca.crt"),
    behindProxy: t.Boolean({ description: "--trust-proxy: a reverse proxy in front may do HTTPS" }),
  }),
});

export const PublicCertificateAnswer = t.Object({
  status: t.Literal("success"),
  message: t.Optional(t.String()),
  data: t.Object({
    source: Nullable(t.UnionEnum(["flag", "setting"]), "flag: --domain; setting: saved here; null: no public certificate wanted"),
    domains: t.Array(t.String(), { description: "the names the certificate is for" }),
    email: Nullable(t.String(), "the address the certificate authority writes to"),
    state: t.UnionEnum(["off", "waiting", "obtaining", "valid", "failed"], { description: "failed: see lastError; the previous certificate (or plain HTTP) is served meanwhile" }),
    certificate: Nullable(
      t.Object({ domains: t.Array(t.String()), notAfter: t.String({ format: "date-time" }), issuedAt: t.String({ format: "date-time" }), daysLeft: t.Integer() }),
      "the certificate kept for these names",
    ),
    lastError: Nullable(t.String(), "what went wrong last, in plain words, and what to check"),
    lastAttemptAt: Nullable(t.String({ format: "date-time" }), "when the certificate authority was last asked"),
    nextAttemptAt: Nullable(t.String({ format: "date-time" }), "the next check (renewal 30 days before expiry, or a retry)"),
    plainPort: t.Integer({ description: "the port the certificate authority's check (HTTP-01, port 80 from the internet) must reach" }),
    httpsPort: t.Integer({ description: "the port HTTPS answers on once the certificate is in use" }),
    directoryUrl: t.String({ description: "the certificate authority (ACME directory)" }),
  }),
});

export const PublicCertificateBody = t.Object(
  {
    domains: t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: "the public name(s) of this server, comma-separated (sms.example.com); null or \"\" turns it off" }),
    email: t.Optional(t.Union([t.String({ maxLength: 254 }), t.Null()], { description: "optional: the certificate authority writes to it before a certificate expires" })),
  },
  { additionalProperties: false },
);

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
