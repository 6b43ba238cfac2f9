/**
 * A third-party message's recipients as SMSGate shows them: the facts its state is read from
 * (domain/smsgate-message.ts recipientState) and when the message reached each state.
 */
import { SMSGATE_STATES, type SmsgateState } from "../domain/smsgate-message";
import type { RecipientView, SmsgateMessageRow } from "../db/stores/smsgate";
import type { SmsgateRecipientState } from "./thirdparty-messages";

export function factsOf(r: RecipientView) {
  return {
    refusal: r.error,
    hasMessage: r.message_id !== null && r.status !== null,
    status: r.status,
    leased: r.lease_token !== null,
    delivered: r.delivered_at !== null,
    failureReason: r.failure_reason,
    retryReason: r.retry_reason,
  };
}

/** When the message reached each state: the latest recipient to reach it (a state is reached when all have). */
export function statesOf(g: SmsgateMessageRow, rs: RecipientView[], recipients: SmsgateRecipientState[], state: SmsgateState): Partial<Record<SmsgateState, string>> {
  const out: Partial<Record<SmsgateState, string>> = { Pending: g.created_at };
  const latest = (pick: (r: RecipientView, i: number) => string | null) => {
    let max: string | null = null;
    rs.forEach((r, i) => {
      const t = pick(r, i);
      if (t !== null && (max === null || t > max)) max = t;
    });
    return max;
  };
  const rank = SMSGATE_STATES.indexOf(state);
  const processed = latest((r) => r.processed_at ?? (r.lease_token !== null || r.sent_at !== null ? r.updated_at : null));
  if (rank >= 1 && processed !== null) out.Processed = processed;
  const sent = latest((r) => r.sent_at);
  if (rank >= 2 && sent !== null) out.Sent = sent;
  const delivered = latest((r) => r.delivered_at);
  if (rank >= 3 && delivered !== null) out.Delivered = delivered;
  if (state === "Failed") out.Failed = latest((r, i) => (recipients[i].state === "Failed" ? (r.updated_at ?? g.created_at) : null)) ?? g.created_at;
  if (state === "Cancelled") out.Cancelled = latest((r, i) => (recipients[i].state === "Cancelled" ? (r.updated_at ?? g.created_at) : null)) ?? g.created_at;
  return out;
}
