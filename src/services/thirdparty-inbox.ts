/**
 * SMSGate's inbox list (GET /3rdparty/v1/inbox; client-go ListInboxMessages, the npm client's
 * listInboxMessages): the texts the account's phones received, newest first, with X-Total-Count.
 * Textwire's phones report SMS only, so a filter on another type lists nothing; `id` is Textwire's
 * id of the received text (docs/api-decisions.md, "The SMSGate ecosystem, every call").
 */
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import type { FieldError } from "../domain/submission";
import { smsgateListRange } from "../domain/smsgate-message";
import { listInboundForSmsgate } from "../db/stores/inbound-messages";

export const INBOX_TYPES = ["SMS", "DATA_SMS", "MMS", "MMS_DOWNLOADED"] as const;
export const INBOX_LIMIT_DEFAULT = 50;
export const INBOX_LIMIT_MAX = 500;

/** SMSGate's IncomingMessage. */
export interface SmsgateIncomingMessage {
  id: string;
  type: (typeof INBOX_TYPES)[number];
  sender: string;
  recipient?: string;
  simNumber?: number;
  contentPreview: string;
  createdAt: string;
}

export function listSmsgateInbox(sqlite: Database, accountId: string, q: Record<string, string | undefined>): { items: SmsgateIncomingMessage[]; total: number } {
  const errors: FieldError[] = [];
  const { limit, offset, from, to } = smsgateListRange(q, INBOX_LIMIT_MAX, INBOX_LIMIT_DEFAULT, errors);
  if (q.type !== undefined && !(INBOX_TYPES as readonly string[]).includes(q.type)) {
    errors.push({ field: "type", message: `type must be one of ${INBOX_TYPES.join(", ")}`, requirement: INBOX_TYPES.join(" | "), provided: q.type.slice(0, 40) });
  }
  if (q.deviceId !== undefined && (q.deviceId.length === 0 || q.deviceId.length > 200)) {
    errors.push({ field: "deviceId", message: "deviceId must be the id of one of your phones (GET /3rdparty/v1/devices lists them)", requirement: "a phone's id", provided: `${q.deviceId.length} characters` });
  }
  if (q.includeAttachments !== undefined && q.includeAttachments !== "true" && q.includeAttachments !== "false") {
    errors.push({ field: "includeAttachments", message: "includeAttachments must be true or false", requirement: "true | false", provided: q.includeAttachments.slice(0, 40) });
  }
  if (errors.length) throw validationError(errors);
  // Only texts (SMS) are ever received here.
  if (q.type !== undefined && q.type !== "SMS") return { items: [], total: 0 };
  const { rows, total } = listInboundForSmsgate(sqlite, accountId, { from, to, deviceId: q.deviceId }, limit, offset);
  const items = rows.map((r) => {
    const m: SmsgateIncomingMessage = { id: r.id, type: "SMS", sender: r.fromPhone, contentPreview: r.body, createdAt: r.receivedAt };
    if (r.recipient !== null) m.recipient = r.recipient;
    if (r.simNumber !== null) m.simNumber = r.simNumber;
    return m;
  });
  return { items, total };
}
