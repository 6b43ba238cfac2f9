import { t } from "elysia";
import { Envelope, NoContent, Timestamp } from "./common";
import { IDEMPOTENCY_KEY_MAX } from "../../services/submissions";

/**
 * The webhook reads its body itself (JSON or an HTML form post, 10 KB), so these models describe
 * it in the route's `detail` rather than as a `body` Elysia would parse.
 */
export const WebhookSubmission = t.Object(
  {
    phoneNumber: t.String({ minLength: 1, description: "any accepted phone format; stored as E.164" }),
    firstName: t.Optional(t.String({ maxLength: 50 })),
    lastName: t.Optional(t.String({ maxLength: 50 })),
    email: t.Optional(t.String({ description: "a valid e-mail address" })),
  },
  {
    additionalProperties: t.Union([t.String({ maxLength: 500 }), t.Number(), t.Boolean()]),
    description: "the form's own fields by name (case-sensitive), as the form's definition validates them",
  },
);

export const IdempotencyKey = t.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX,
  description: "a retry with the same key (same form, within 24 h) gets the first answer again, with Idempotent-Replayed: true, and creates nothing",
});

export const WebhookRequest = {
  requestBody: {
    required: true,
    content: { "application/json": { schema: WebhookSubmission }, "application/x-www-form-urlencoded": { schema: WebhookSubmission } },
  },
  parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: IdempotencyKey }],
};

export const SubmissionAnswer = Envelope(
  t.Object(
    {
      messageId: t.Union([t.String(), t.Null()], { description: "null when no message was queued (suppressed)" }),
      contactId: t.String({ description: "the contact created or updated" }),
      queuePosition: t.Union([t.Integer({ minimum: 1 }), t.Null()]),
      estimatedDelivery: t.Union([Timestamp, t.Null()]),
      estimate: t.Optional(
        t.Object(
          { basis: t.Union([t.Literal("connected-phones"), t.Literal("no-phone-connected")]) },
          { description: "how estimatedDelivery was found: from the connected phones' budgets, or as if the account's phones were connected (none is now)" },
        ),
      ),
      duplicate: t.Optional(t.Boolean({ description: "true: the same submission within the form's duplicate window; nothing new queued" })),
      suppressed: t.Optional(t.String({ description: 'why no message was queued, e.g. "recipient-limit"' })),
    },
    { additionalProperties: true },
  ),
  { description: "Submission received; message queued", headers: ["Idempotent-Replayed"] },
);

export const Preflight = NoContent("CORS preflight answer: any origin may post", [
  "Access-Control-Allow-Origin",
  "Access-Control-Allow-Methods",
  "Access-Control-Allow-Headers",
  "Access-Control-Max-Age",
  "Access-Control-Expose-Headers",
]);
