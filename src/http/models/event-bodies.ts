/**
 * The body of every outbound event (Standard Webhooks' `{type, timestamp, data}`), one model per
 * type the server can emit: the `webhooks` section of the OpenAPI document is made from these, so
 * a generated client has a typed body for each event it may receive. `data` holds the API's own
 * representation of the object (src/services/event-payloads.ts reads it with the same code as the
 * GET routes), so the models are those of the answers.
 */
import { t } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { DELIVERY_TIMEOUT_MS, RETRY_SCHEDULE_MS, type EventType, type SmsgateOnlyEvent } from "../../domain/outbound-events";
import { humanDuration } from "../../domain/duration";
import { NullableString, NullableTimestamp, Timestamp } from "./common";
import { Contact } from "./contacts";
import { DeviceView } from "./devices";
import { InboundMessage } from "./inbound";
import { Message } from "./messages";
import { SubmissionAnswer } from "./webhook";
import { AutomationRun } from "./automations";

const Count = t.Integer({ minimum: 0 });

/** One event type: its body's `data` and what it means. */
interface EventDoc {
  data: TSchema;
  summary: string;
  description?: string;
}

const message = (summary: string, description?: string): EventDoc => ({ data: t.Object({ message: Message }), summary, description });
const contact = (summary: string, description?: string): EventDoc => ({ data: t.Object({ contact: Contact }), summary, description });

const EVENTS: Record<Exclude<EventType, SmsgateOnlyEvent>, EventDoc> = {
  "message.queued": message("A message was queued", "A new message (form submission, API, broadcast, keyword reply) or one put back in the queue after a failed attempt that will be retried."),
  "message.sent": message("A phone reported a message sent"),
  "message.delivered": message("A phone reported a message delivered to the handset", "The delivery time is in `message.metadata.deliveredAt`."),
  "message.failed": message("A message failed for good", "No attempts are left, or the failure was permanent; `message.failureReason` says why."),
  "message.cancelled": message("A queued message was cancelled", "By the owner, a broadcast's cancel, or the recipient opting out."),
  "contact.created": contact("A contact was created", "By a form submission, the API, an import or a first text from a new number."),
  "contact.updated": contact("A contact's fields changed"),
  "contact.opted_out": contact("A contact opted out of texts", "A keyword text (STOP…) or the API; their queued messages were cancelled."),
  "contact.opted_in": contact("A contact opted back in"),
  "inbound.received": {
    data: t.Object({ message: InboundMessage, contact: Contact }),
    summary: "A text was received from a customer",
  },
  "form.submission": {
    data: t.Object({
      submission: t.Object({
        id: t.String(),
        formId: t.String(),
        formName: t.String(),
        newContact: t.Boolean({ description: "true: the submission created the contact" }),
        answer: t.Object(SubmissionAnswer.properties, { description: "the webhook's answer to the submission, as the form's poster got it" }),
        contact: Contact,
      }),
    }),
    summary: "A form's webhook accepted a submission",
  },
  "automation.run.started": {
    data: t.Object({ run: AutomationRun }),
    summary: "An automation started a run for a contact",
    description: "After a form's submission, or POST /v1/automations/{id}/start; its steps' messages are queued with the times they go out.",
  },
  "automation.run.stopped": {
    data: t.Object({ run: AutomationRun }),
    summary: "An automation's run stopped before its end",
    description: "`run.stoppedReason` says why: replied, opted-out, status, contact-deleted, automation-off, restarted or stopped-by-hand; its unsent steps were cancelled.",
  },
  "automation.run.completed": { data: t.Object({ run: AutomationRun }), summary: "An automation's run went through all its steps" },
  "device.online": { data: t.Object({ device: DeviceView }), summary: "A phone came back (it asked for work again)" },
  "device.offline": { data: t.Object({ device: DeviceView }), summary: "A phone went quiet for longer than --device-offline-after" },
  "device.paused": {
    data: t.Object({
      device: DeviceView,
      slot: t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "the SIM paused; null: the whole phone (Android's limit is per phone)" }),
      pausedUntil: Timestamp,
      pauseReason: t.String({ description: "android-limit, no-service, radio-off or repeated-failures" }),
    }),
    summary: "A phone or SIM stopped being handed texts after a failure it reported",
    description: "Its texts in hand went back to the queue for phones with budget; docs/phones.md says what to do for each reason.",
  },
  "device.resumed": {
    data: t.Object({ device: DeviceView, slot: t.Union([t.Integer({ minimum: 1 }), t.Null()]) }),
    summary: "A paused phone or SIM is handed texts again",
  },
  "queue.stuck": {
    data: t.Object({
      queue: t.Object({
        queuedMessages: Count,
        nextDueMessageId: t.String(),
        nextDueScheduledFor: Timestamp,
        lastDevicePollAt: NullableTimestamp,
        stuckAfterSeconds: Count,
      }),
    }),
    summary: "Messages are due and no phone has asked for work for --stuck-after",
    description: "Sent once per spell: again only after a phone asked for work and the queue got stuck anew.",
  },
  "endpoint.disabled": {
    data: t.Object({
      endpoint: t.Object({ id: t.String(), url: t.String(), description: NullableString, disabledAt: Timestamp, disabledReason: t.String() }),
    }),
    summary: "An endpoint was disabled after every delivery to it failed for 3 days",
    description: "Sent to the account's other endpoints that take it.",
  },
  "replication.stalled": {
    data: t.Object({
      replication: t.Object({
        target: t.String({ description: "where the database is replicated (a password shown as ***)" }),
        lagSeconds: Count,
        lastSyncAt: NullableTimestamp,
        lastError: NullableString,
      }),
    }),
    summary: "The replica has been more than 60 s behind",
    description: "Sent once per stall to accounts with an operator key: the server keeps working, but a dead disk now would lose that much.",
  },
  ping: {
    data: t.Object({ endpoint: t.Object({ id: t.String(), url: t.String() }), message: t.String() }),
    summary: "A test event (POST /v1/webhook-endpoints/{id}/test)",
    description: "Only ever sent by the test route, to the endpoint it names, whatever its `events` list.",
  },
};

/** The body of `type`: `{type, timestamp, data}`. */
function eventBody(type: EventType, doc: EventDoc) {
  return t.Object(
    {
      type: t.Literal(type),
      timestamp: t.String({ format: "date-time", description: "when the event happened" }),
      data: doc.data,
    },
    { description: doc.summary },
  );
}

/** Every event type the server can emit → its body model, summary and description. */
export const EVENT_BODIES: Record<EventType, { schema: TSchema; summary: string; description?: string }> = Object.fromEntries(
  (Object.entries(EVENTS) as Array<[EventType, EventDoc]>).map(([type, doc]) => [type, { schema: eventBody(type, doc), summary: doc.summary, description: doc.description }]),
) as never;

/** What every delivery carries and how a receiver answers (the `webhooks` operations' text). */
export const EVENT_DELIVERY_TEXT =
  "Posted to each active endpoint whose `events` list takes this type (or `*`), signed the Standard Webhooks way: " +
  "`webhook-id` (the event id: dedupe on it), `webhook-timestamp` (Unix seconds) and `webhook-signature` " +
  "(`v1,<base64 HMAC-SHA256 of \"{id}.{timestamp}.{body}\">` with the endpoint's whsec_ secret; two space-separated signatures while a rotated secret overlaps). " +
  `Answer any 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s; anything else is retried after ${RETRY_SCHEDULE_MS.map((ms) => humanDuration(ms / 1000)).join(", ")}.`;
