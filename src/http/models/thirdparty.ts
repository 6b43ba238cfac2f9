import { t } from "elysia";

/**
 * SMSGate's third-party API shapes (android-sms-gateway/server, client-go `domain_*.go`). The
 * routes set `detail.hide`: these are SMSGate's documents, not Textwire's /v1 (docs/phones.md,
 * "Using Textwire as your SMSGate server"). Bodies are checked by the services, whose errors name
 * each field (src/domain/smsgate-message.ts).
 */
const text = t.Optional(t.String({ maxLength: 200 }));

export const SmsgateIdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 200 }) });

/** POST /messages: `skipPhoneValidation` keeps the normalisation but accepts any type of number. */
export const SmsgateSendQuery = t.Object(
  { skipPhoneValidation: t.Optional(t.String({ pattern: "^(true|false)$", error: "skipPhoneValidation must be true or false" })), deviceActiveWithin: text },
  { additionalProperties: true },
);

export const SmsgateListQuery = t.Object(
  { from: text, to: text, state: text, deviceId: text, limit: text, offset: text, includeContent: text, sort: text },
  { additionalProperties: true },
);

export const SmsgateRecipientState = t.Object({
  phoneNumber: t.String(),
  state: t.String(),
  error: t.Optional(t.String()),
});

export const SmsgateMessageState = t.Object({
  id: t.String(),
  deviceId: t.String(),
  state: t.String(),
  isHashed: t.Boolean(),
  isEncrypted: t.Boolean(),
  recipients: t.Array(SmsgateRecipientState),
  states: t.Record(t.String(), t.String()),
  textMessage: t.Optional(t.Object({ text: t.String() })),
});

export const SmsgateWebhookBody = t.Unknown({ description: "{id?, event, url, deviceId?}" });

export const SmsgateWebhook = t.Object({
  id: t.String(),
  event: t.String(),
  url: t.String(),
  deviceId: t.Union([t.String(), t.Null()]),
});
