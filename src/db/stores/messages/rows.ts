/**
 * A message row as stored, and the API's Message read from it. Shared by the messages service,
 * leases, phones and outbound event payloads, which all show a message the same way.
 */
import type { MessageStatus } from "../../../domain/message-transitions";
import type { Priority } from "../../../queue/priority-queue";
import type { RawRow } from "../row";
import type { Actor } from "../../../domain/people";
import type { messages } from "../../schema/messages";

/** A `messages` row as stored (`SELECT *`), typed from the drizzle schema. */
export type MessageRow = RawRow<typeof messages>;

/** Every Message field of the spec (webhookData and metadata as objects). */
export interface Message {
  id: string;
  content: string;
  recipientPhone: string;
  recipientName: string | null;
  contactId: string | null;
  formId: string | null;
  formName: string | null;
  status: MessageStatus;
  priority: Priority;
  webhookData: Record<string, unknown>;
  templateUsed: string | null;
  scheduledFor: string;
  sentAt: string | null;
  failureReason: string | null;
  retryCount: number;
  metadata: Record<string, unknown>;
  /** Who sent a manual text (a person or a key); null for everything else. */
  createdBy: Actor | null;
  /** Who cancelled the message; null when nobody did (or before this was recorded). */
  cancelledBy: Actor | null;
  createdAt: string;
  updatedAt: string;
}

function parseObject(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function parseActor(text: string | null | undefined): Actor | null {
  if (!text) return null;
  const v = parseObject(text);
  return v.type === "user" || v.type === "key" ? (v as Actor) : null;
}

/** A stored message's metadata, parsed (`{}` when none or unreadable). */
export function messageMetadata(r: Pick<MessageRow, "metadata">): Record<string, unknown> {
  return parseObject(r.metadata);
}

export function toMessage(r: MessageRow): Message {
  return {
    id: r.id,
    content: r.content,
    recipientPhone: r.recipient_phone,
    recipientName: r.recipient_name,
    contactId: r.contact_id,
    formId: r.form_id,
    formName: r.form_name,
    status: r.status,
    priority: r.priority,
    webhookData: parseObject(r.webhook_data),
    templateUsed: r.template_used,
    scheduledFor: r.scheduled_for,
    sentAt: r.sent_at,
    failureReason: r.failure_reason,
    retryCount: r.retry_count,
    metadata: parseObject(r.metadata),
    createdBy: parseActor(r.created_by),
    cancelledBy: parseActor(r.cancelled_by),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
