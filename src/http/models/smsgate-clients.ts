import { t } from "elysia";
import { MAX_RECIPIENT_LIMIT_PER_DAY } from "../../domain/protection";
import { checked } from "./common";

const QuietHours = t.Object({ start: t.String({ description: "HH:MM, 24-hour clock" }), end: t.String({ description: "HH:MM" }) });

/** Settings → SMSGate clients: how SMSGate's apps and integrations sign in, and the rules for their texts. */
export const SmsgateClients = t.Object({
  baseUrl: t.String({ description: "the base URL SMSGate clients are given: <server address>/3rdparty/v1" }),
  login: t.String({ description: "the login of SMSGate's Basic auth: this account's id" }),
  passwordHint: t.String({ description: "where the password comes from: an API key of this account" }),
  signingKey: t.String({ description: "signs SMSGate-format webhooks (X-Signature = hex HMAC-SHA256 of body + X-Timestamp)" }),
  quietHours: t.Union([QuietHours, t.Null()], { description: "texts from SMSGate clients inside these hours (the account's time zone) wait for their end; null = none" }),
  recipientLimitPerDay: t.Union([t.Integer(), t.Null()], { description: "at most this many texts to one number in 24 hours; null = no limit" }),
});

export const SmsgateClientsAnswer = t.Object({ status: t.Literal("success"), message: t.Optional(t.String()), data: SmsgateClients });

/** Checked by the service, which names each bad field. */
export const SmsgateClientsBody = t.Object(
  {
    quietHours: t.Optional(checked(t.Union([QuietHours, t.Null()]), "{start, end} as HH:MM, or null for none")),
    recipientLimitPerDay: t.Optional(checked(t.Union([t.Integer({ minimum: 1, maximum: MAX_RECIPIENT_LIMIT_PER_DAY }), t.Null()]), `1-${MAX_RECIPIENT_LIMIT_PER_DAY}, or null for no limit`)),
  },
  { additionalProperties: true },
);
