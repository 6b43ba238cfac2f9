/**
 * The stores the wiring hands to services (docs/architecture.md, "Wiring"): built here, once per
 * server, on the server's connection, and passed in at construction — a service does not build
 * the store it reads and writes.
 */
import type { Database } from "bun:sqlite";
import { messagesOf } from "../db/stores/messages";
import { sendingStore } from "../db/stores/sending";
import { monthlyUsageStore } from "../db/stores/monthly-usage";
import { ContactLists } from "../db/stores/contacts/list";
import { submissionStore } from "../db/stores/submissions";
import { idempotencyStore } from "../db/stores/idempotency";
import { intakeStore } from "../db/stores/intake";
import type { IntakeEntry } from "../services/intake/applier";

export type Stores = ReturnType<typeof buildStores>;

export function buildStores(sqlite: Database) {
  return {
    messages: messagesOf(sqlite),
    sending: sendingStore(sqlite),
    monthlyUsage: monthlyUsageStore(sqlite),
    contactLists: new ContactLists(sqlite),
    submissions: submissionStore(sqlite),
    idempotency: idempotencyStore(sqlite),
    intake: intakeStore<IntakeEntry>(sqlite),
  };
}
