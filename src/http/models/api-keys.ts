import { t } from "elysia";
import { checked, Envelope, literals } from "./common";

/** The service checks `permission` (its own 400 names the allowed values); typed for the document. */
export const CreateKeyBody = t.Object({
  permission: t.Optional(checked(literals(["admin_access", "standard_access"]), "admin_access | standard_access (default)")),
});

export const KeyIdParam = t.Object({ id: t.String({ maxLength: 200, description: "a keyId from GET /v1/api-keys" }) });

const Permission = t.UnionEnum(["admin_access", "standard_access"]);

export const KeyListAnswer = Envelope(
  t.Object({
    keys: t.Array(
      t.Object({
        keyId: t.String(),
        key: t.String({ description: "txwire_sk_… and the last 4 characters: never the key itself" }),
        permission: Permission,
        operator: t.Boolean(),
        createdAt: t.String(),
        lastUsedAt: t.Union([t.String(), t.Null()]),
        revokedAt: t.Union([t.String(), t.Null()]),
      }),
    ),
  }),
);

export const KeyCreatedAnswer = Envelope(
  t.Object({ keyId: t.String(), apiKey: t.String({ description: "the key: shown in this answer only" }), permission: Permission, operator: t.Boolean() }),
);

export const KeyRevokedAnswer = Envelope(t.Object({ revokedId: t.String() }));
