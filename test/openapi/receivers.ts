/**
 * A receiver of Textwire's outbound events written against the GENERATED client types alone
 * (web/api-schema.gen.ts, from the document's `webhooks` section): one typed handler per event type. It is
 * compiled by the project's `tsc --strict` (`npm test`), so a missing event type, a renamed field
 * or a body typed `unknown` fails the build; test/api/ops/openapi-events.test.ts feeds it every body a
 * real server emitted.
 */
import type { webhooks } from "../../web/api-schema.gen";

/** The body a receiver gets for one event type, as the document types it. */
export type EventBody<T extends keyof webhooks> = webhooks[T]["post"]["requestBody"]["content"]["application/json"];

/** Every event type of the document has its handler (a missing one is a compile error). */
export const RECEIVERS: { [T in keyof webhooks]: (body: EventBody<T>) => string } = {
  "message.queued": (e) => `${e.type}: ${e.data.message.id} to ${e.data.message.recipientPhone}, due ${e.data.message.scheduledFor}`,
  "message.sent": (e) => `${e.type}: ${e.data.message.id} sent at ${e.data.message.sentAt ?? "?"}`,
  "message.delivered": (e) => `${e.type}: ${e.data.message.id} delivered (${String(e.data.message.metadata.deliveredAt)})`,
  "message.failed": (e) => `${e.type}: ${e.data.message.id} failed: ${e.data.message.failureReason ?? "no reason"} after ${e.data.message.retryCount} retries`,
  "message.cancelled": (e) => `${e.type}: ${e.data.message.id} (${e.data.message.status})`,
  "contact.created": (e) => `${e.type}: ${e.data.contact.phoneNumber} from ${e.data.contact.consent?.source ?? "unknown"}`,
  "contact.updated": (e) => `${e.type}: ${e.data.contact.id} now ${e.data.contact.status}, ${e.data.contact.messageCount} texts`,
  "contact.opted_out": (e) => `${e.type}: ${e.data.contact.phoneNumber} at ${e.data.contact.optedOutAt ?? "?"}`,
  "contact.opted_in": (e) => `${e.type}: ${e.data.contact.phoneNumber} (optedOut ${String(e.data.contact.optedOut)})`,
  "inbound.received": (e) => `${e.type}: "${e.data.message.body}" from ${e.data.message.from} (${e.data.contact.id}, keyword ${e.data.message.keyword ?? "none"})`,
  "form.submission": (e) =>
    `${e.type}: ${e.data.submission.formName} → ${e.data.submission.contact.phoneNumber}${e.data.submission.newContact ? " (new)" : ""}, message ${e.data.submission.answer.data.messageId ?? "none"}`,
  "automation.run.started": (e) => `${e.type}: ${e.data.run.id} of ${e.data.run.automationId} for ${e.data.run.contactId}, ${e.data.run.steps.length} steps, first ${e.data.run.steps[0]?.scheduledFor ?? "none"}`,
  "automation.run.stopped": (e) => `${e.type}: ${e.data.run.id} (${e.data.run.stoppedReason ?? "?"})`,
  "automation.run.completed": (e) => `${e.type}: ${e.data.run.id} at ${e.data.run.finishedAt ?? "?"}, ${e.data.run.steps.filter((x) => x.status === "skipped").length} skipped`,
  "device.online": (e) => `${e.type}: ${e.data.device.name} (${e.data.device.kind}) online ${e.data.device.online}`,
  "device.offline": (e) => `${e.type}: ${e.data.device.name} last seen ${e.data.device.lastSeenAt ?? "never"}`,
  "device.paused": (e) => `${e.type}: ${e.data.device.name} SIM ${e.data.slot ?? "all"} until ${e.data.pausedUntil} (${e.data.pauseReason})`,
  "device.resumed": (e) => `${e.type}: ${e.data.device.name} SIM ${e.data.slot ?? "all"}`,
  "queue.stuck": (e) => `${e.type}: ${e.data.queue.queuedMessages} queued, last poll ${e.data.queue.lastDevicePollAt ?? "never"}, after ${e.data.queue.stuckAfterSeconds} s`,
  "endpoint.disabled": (e) => `${e.type}: ${e.data.endpoint.url}: ${e.data.endpoint.disabledReason} (${e.data.endpoint.disabledAt})`,
  "replication.stalled": (e) => `${e.type}: ${e.data.replication.target} ${e.data.replication.lagSeconds} s behind, last sync ${e.data.replication.lastSyncAt ?? "never"}${e.data.replication.lastError ? ` (${e.data.replication.lastError})` : ""}`,
  ping: (e) => `${e.type}: ${e.data.message} for ${e.data.endpoint.id}`,
};

type AnyEvent = { [T in keyof webhooks]: EventBody<T> }[keyof webhooks];

/** Hands a verified body to its type's handler (the `type` field narrows the union). */
export function receive(body: AnyEvent): string {
  const handler = RECEIVERS[body.type] as (b: AnyEvent) => string;
  return handler(body);
}
