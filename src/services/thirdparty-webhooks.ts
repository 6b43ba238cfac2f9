/**
 * SMSGate's webhooks (GET/POST /3rdparty/v1/webhooks, DELETE /webhooks/{id}) as outbound event
 * endpoints of format "smsgate": the same outbox, retries, delivery log and SSRF guard as
 * /v1/webhook-endpoints (where they are listed too), with SMSGate's body
 * `{deviceId, event, id, payload, webhookId}` and its signature — `X-Signature` = hex
 * HMAC-SHA256(body + X-Timestamp) with the account's SMSGate signing key (docs/api-decisions.md,
 * "SMSGate third-party API").
 */
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import { isRelayed, SMSGATE_EVENTS, smsgateEventOf, textwireEventsOf, type RelayedEvent, type SmsgateEvent } from "../domain/smsgate-webhook";
import { emitEvent } from "./events";
import { smsInfo } from "../domain/sms-encoding";
import { findInboundPhoneFacts } from "../db/stores/inbound-messages";
import {
  countEndpoints,
  deleteEndpoint,
  findEndpointByExternalId,
  insertEndpoint,
  listSmsgateEndpoints,
  setEndpointDevice,
  updateEndpoint,
  type EndpointRow,
} from "../db/stores/events";
import { listDevices } from "../db/stores/devices";
import { findSmsgateClient, smsgateOptionsOf } from "../db/stores/smsgate";
import type { EventOutbox } from "./events";
import { checkReceiverUrl, MAX_ENDPOINTS_PER_ACCOUNT, newEndpointRow, URL_MAX, type UrlJudging } from "./event-endpoints";
import type { ThirdPartyMessages } from "./thirdparty-messages";

/** SMSGate's Webhook DTO. */
export interface SmsgateWebhook {
  id: string;
  event: SmsgateEvent;
  url: string;
  deviceId: string | null;
}

/** Client ids: as SMSGate's (≤ 36 characters), and URL-safe (they go into DELETE /webhooks/{id}). */
const ID_RE = /^[A-Za-z0-9._~:-]{1,36}$/;

export class ThirdPartyWebhooks {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
    private readonly messages: ThirdPartyMessages,
    private readonly opts: UrlJudging,
  ) {}

  list(accountId: string): SmsgateWebhook[] {
    return listSmsgateEndpoints(this.sqlite, accountId).map(toWebhook);
  }

  /** POST /webhooks: a known id is replaced (its URL, event and device); 201 with the stored webhook. */
  async register(accountId: string, body: unknown): Promise<SmsgateWebhook> {
    const b = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : null) as Record<string, unknown> | null;
    if (b === null) throw validationError([{ field: "body", message: "The body must be a JSON object {id?, event, url, deviceId?}", requirement: "a JSON object", provided: null }]);
    const errors: Array<{ field: string; message: string; requirement?: string; provided?: unknown }> = [];
    const id = b.id === undefined || b.id === null || b.id === "" ? null : b.id;
    if (id !== null && (typeof id !== "string" || !ID_RE.test(id))) errors.push({ field: "id", message: "id must be 1 to 36 letters, digits or - _ . : ~", requirement: "1-36 characters [A-Za-z0-9._~:-]", provided: id });
    if (typeof b.event !== "string" || !(SMSGATE_EVENTS as readonly string[]).includes(b.event)) {
      errors.push({ field: "event", message: `event must be one of ${SMSGATE_EVENTS.join(", ")}`, requirement: SMSGATE_EVENTS.join(" | "), provided: b.event ?? null });
    }
    if (typeof b.url !== "string" || b.url.trim() === "" || b.url.length > URL_MAX) errors.push({ field: "url", message: "url is required: the address that receives the events", requirement: `URL, at most ${URL_MAX} characters`, provided: b.url ?? null });
    const deviceId = b.deviceId === undefined || b.deviceId === null || b.deviceId === "" ? null : b.deviceId;
    if (deviceId !== null && (typeof deviceId !== "string" || !listDevices(this.sqlite, accountId).some((d) => d.id === deviceId))) {
      errors.push({ field: "deviceId", message: "deviceId names none of your phones (see GET /3rdparty/v1/devices)", requirement: "a device id of this account", provided: deviceId });
    }
    if (errors.length) throw validationError(errors);
    const url = (b.url as string).trim();
    await checkReceiverUrl(url, this.opts, "as-given");
    const event = b.event as SmsgateEvent;
    const externalId = (id as string | null) ?? newId();
    const now = this.clock();
    const at = iso(now);
    // Signed with the account's SMSGate key (services/thirdparty-messages.ts), kept as the endpoint's secret.
    const secret = this.messages.signingKey(accountId);
    this.sqlite.transaction(() => {
      const current = findEndpointByExternalId(this.sqlite, accountId, externalId);
      if (current && current.format !== "smsgate") throw new AppError("INVALID_STATE", { message: "This id belongs to an endpoint made in Textwire; choose another id", details: { id: externalId } });
      if (current) {
        updateEndpoint(this.sqlite, {
          ...current,
          url,
          events: textwireEventsOf(event),
          allow_insecure: url.startsWith("http:"),
          secret,
          is_active: true,
          disabled_at: null,
          disabled_reason: null,
          failing_since: null,
          updated_at: nextUpdatedAt(now, current.updated_at),
        });
        setEndpointDevice(this.sqlite, current.id, deviceId as string | null);
        return;
      }
      if (countEndpoints(this.sqlite, accountId) >= MAX_ENDPOINTS_PER_ACCOUNT) {
        throw new AppError("INVALID_STATE", { message: `An account can have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhooks; delete one first`, details: { limit: MAX_ENDPOINTS_PER_ACCOUNT } });
      }
      insertEndpoint(this.sqlite, 
        newEndpointRow({
          account_id: accountId,
          url,
          events: textwireEventsOf(event),
          description: `SMSGate webhook ${externalId} (${event})`,
          // SMSGate's clients send http:// addresses (Home Assistant on the LAN): the address is
          // still judged (no metadata or loopback; private only with --allow-private-webhook-urls).
          allow_insecure: url.startsWith("http:"),
          secret,
          created_at: at,
          format: "smsgate",
          external_id: externalId,
          device_id: deviceId as string | null,
        }),
      );
    })();
    this.outbox.reload();
    return { id: externalId, event, url, deviceId: deviceId as string | null };
  }

  /** DELETE /webhooks/{id}: 204 whether or not it existed, as SMSGate answers. */
  delete(accountId: string, externalId: string): void {
    const current = findEndpointByExternalId(this.sqlite, accountId, externalId);
    if (!current || current.format !== "smsgate") return;
    this.sqlite.transaction(() => deleteEndpoint(this.sqlite, accountId, current.id))();
    this.outbox.reload();
  }
}

function toWebhook(r: EndpointRow): SmsgateWebhook {
  return { id: r.external_id ?? r.id, event: smsgateEventOf(r.events[0] ?? "") ?? "system:ping", url: r.url, deviceId: r.device_id };
}

/** The phone events relayed as they came (src/domain/smsgate-webhook.ts, RELAYED_EVENTS): the fields kept, and their longest text. */
const RELAYED_FIELDS: Record<string, number> = {
  messageId: 100, phoneNumber: 40, sender: 40, recipient: 40, simNumber: 0, receivedAt: 40,
  // sms:data-received: the base64 body (a data SMS holds at most a few hundred bytes).
  data: 4_096,
  // mms:received: the MMS's metadata (its attachments are not fetched).
  transactionId: 200, subject: 1_000, contentClass: 100, size: 0,
};

/**
 * A phone's sms:data-received or mms:received, for the account's SMSGate registrations of that
 * event, written in the caller's transaction: only SMSGate's fields, of their types and lengths
 * (docs/api-decisions.md, "The SMSGate ecosystem, every call").
 */
export function relayPhoneEvent(sqlite: Database, accountId: string, deviceId: string, event: RelayedEvent, payload: Record<string, unknown>, now: number): void {
  const kept: Record<string, unknown> = {};
  for (const [k, max] of Object.entries(RELAYED_FIELDS)) {
    const v = payload[k];
    if (v === null || (typeof v === "number" && Number.isFinite(v) && max === 0) || (typeof v === "string" && max > 0 && v.length <= max)) kept[k] = v;
  }
  emitEvent(sqlite, accountId, event, { deviceId, payload: kept }, now);
}

/**
 * The body and headers of one delivery to an SMSGate-format endpoint, from the event as the outbox
 * stored it (`{type, timestamp, data}`). A text sent through the third-party API is named by the
 * client's own id, so the client can match the event to its send.
 */
export function smsgateDelivery(
  sqlite: Database,
  ep: Pick<EndpointRow, "account_id" | "external_id" | "id" | "secret">,
  eventId: string,
  stored: string,
  nowSeconds: number,
): { body: string; headers: Record<string, string> } {
  let parsed: { type?: string; timestamp?: string; data?: any } = {};
  try {
    parsed = JSON.parse(stored);
  } catch {}
  const event = smsgateEventOf(parsed.type ?? "") ?? "system:ping";
  const at = parsed.timestamp ?? new Date(nowSeconds * 1000).toISOString();
  const data = parsed.data ?? {};
  const m = data.message ?? {};
  let deviceId = "";
  let payload: Record<string, unknown> = {};
  // SMSGate's SmsEventPayload (client-go dto_webhooks.go): messageId, phoneNumber (the other
  // party), sender, recipient, simNumber, and the parts the text took.
  if (isRelayed(event)) {
    // As the phone reported it (relayPhoneEvent kept SMSGate's fields only).
    deviceId = typeof data.deviceId === "string" ? data.deviceId : "";
    payload = { ...(data.payload ?? {}) };
    if (typeof payload.sender !== "string" && typeof payload.phoneNumber === "string") payload.sender = payload.phoneNumber;
  } else if (event === "sms:received") {
    deviceId = m.deviceId ?? "";
    const body = typeof m.body === "string" ? m.body : "";
    const facts = typeof m.id === "string" ? findInboundPhoneFacts(sqlite, m.id) : null;
    payload = {
      messageId: m.externalId ?? m.id ?? "",
      message: body,
      phoneNumber: m.from ?? "",
      sender: m.from ?? "",
      recipient: facts?.recipient ?? null,
      simNumber: facts?.simNumber ?? null,
      partsCount: body ? smsInfo(body).segments : 1,
      receivedAt: m.receivedAt ?? at,
    };
  } else if (event !== "system:ping") {
    const leases = Array.isArray(m.metadata?.leases) ? m.metadata.leases : [];
    deviceId = leases.length ? (leases[leases.length - 1]?.deviceId ?? "") : "";
    const smsgate = typeof m.id === "string" ? smsgateOptionsOf(sqlite, m.id) : null;
    payload = {
      messageId: smsgate?.smsgateId ?? m.id ?? "",
      phoneNumber: m.recipientPhone ?? "",
      // The sending phone's own number is not known to Textwire (the app does not report it).
      sender: null,
      recipient: m.recipientPhone ?? null,
      simNumber: smsgate?.simNumber ?? null,
      partsCount: typeof m.content === "string" && m.content ? smsInfo(m.content).segments : 1,
    };
    if (event === "sms:sent") payload.sentAt = m.sentAt ?? at;
    if (event === "sms:delivered") payload.deliveredAt = m.metadata?.deliveredAt ?? at;
    if (event === "sms:cancelled") payload.cancelledAt = m.updatedAt ?? at;
    if (event === "sms:failed") {
      // A final failure carries the message's reason; a failed attempt Textwire retries, its own.
      const reason = data.failure?.reason ?? m.failureReason ?? "failed";
      Object.assign(payload, { failedAt: data.failure?.at ?? m.updatedAt ?? at, error: reason, reason });
    }
  }
  const body = JSON.stringify({ deviceId, event, id: eventId, payload, webhookId: ep.external_id ?? ep.id });
  const timestamp = String(nowSeconds);
  // Always the account's current SMSGate key, whatever /v1 did to the endpoint's own secret (a rotation).
  const key = findSmsgateClient(sqlite, ep.account_id)?.signing_key ?? ep.secret;
  const signature = createHmac("sha256", key).update(body + timestamp).digest("hex");
  return { body, headers: { "X-Timestamp": timestamp, "X-Signature": signature } };
}
