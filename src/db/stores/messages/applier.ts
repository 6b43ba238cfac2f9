/**
 * The intake applier's message insert (one-row and multi-row forms): the queued text of an
 * acknowledged submission. Prepared once per connection when the applier starts
 * (stores/intake-applier.ts gathers it).
 */
import type { Database, Statement } from "bun:sqlite";
import { MultiInsert } from "../../multi-insert";

const MESSAGE_INSERT = `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name,
         status, priority, priority_rank, webhook_data, template_used, scheduled_for, retry_count, metadata, seq,
         lease_expiries, created_at, updated_at)`;
const MESSAGE_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)";

export function applierMessageStatements(sqlite: Database) {
  return {
    messageInsert: sqlite.prepare(`${MESSAGE_INSERT} VALUES ${MESSAGE_VALUES}`) as Statement<unknown, any[]>,
    messageInserts: new MultiInsert(sqlite, MESSAGE_INSERT, MESSAGE_VALUES),
  };
}
