/**
 * What a phone's gate needs of a queued text and what never changes about it: its recipient, its
 * parts and the SMSGate request's device or SIM (a text's content, recipient and request options
 * are written once, with it). Kept in memory across requests, so the walk past texts a phone may
 * not take (docs/api-decisions.md, "Sending engine: crash safety and the queue walk") reads no row
 * for a text it has already looked at.
 */
import { partsOf } from "../domain/sending-budget";

export interface TextFacts {
  accountId: string;
  recipient: string;
  parts: number;
  asked: { deviceId: string | null; simNumber: number | null } | null;
}

/** About a walk's worth for a few phones of many accounts; the oldest entry goes first. */
export const TEXT_FACTS_MAX = 20_000;

export class TextFactsCache {
  private readonly facts = new Map<string, TextFacts>();

  constructor(private readonly read: (accountId: string, messageId: string) => { content: string; recipient_phone: string } | null) {}

  get(accountId: string, messageId: string, requestedOf: (messageId: string) => TextFacts["asked"]): TextFacts | null {
    const hit = this.facts.get(messageId);
    if (hit) return hit.accountId === accountId ? hit : null;
    const row = this.read(accountId, messageId);
    if (!row) return null;
    const f: TextFacts = { accountId, recipient: row.recipient_phone, parts: partsOf(row.content), asked: requestedOf(messageId) };
    if (this.facts.size >= TEXT_FACTS_MAX) this.facts.delete(this.facts.keys().next().value!);
    this.facts.set(messageId, f);
    return f;
  }

  /** Entries held (tests). */
  get size(): number {
    return this.facts.size;
  }
}
