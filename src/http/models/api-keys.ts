import { t } from "elysia";

export const CreateKeyBody = t.Object({
  permission: t.Optional(t.Unknown({ description: "admin_access | standard_access (default)" })),
});

export const KeyIdParam = t.Object({ id: t.String({ maxLength: 200, description: "a keyId from GET /v1/api-keys" }) });
