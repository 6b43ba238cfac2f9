-- Issue 15 item 4: fewer index entries and no trigger per inserted message.
--
-- (account_id, created_at) goes: the list's whole-account pages (no status, form or contact
-- filter) merge the four status ranges of (account_id, status, created_at), each cut at the
-- page's end (src/db/message-list.ts); the analytics residue and the account's message count
-- read that index with `status IN (…)`.
DROP INDEX IF EXISTS `messages_account_created_idx`;
--> statement-breakpoint
-- (account_id, scheduled_for) and (scheduled_for) WHERE queued become one
-- (account_id, status, scheduled_for): the queued list by scheduled time is one range of it, the
-- whole-account sort by scheduled time merges the four status ranges, and the oldest due message
-- (/health) is one probe per account.
DROP INDEX IF EXISTS `messages_account_scheduled_idx`;
--> statement-breakpoint
DROP INDEX IF EXISTS `messages_queued_idx`;
--> statement-breakpoint
CREATE INDEX `messages_account_status_scheduled_idx` ON `messages` (`account_id`, `status`, `scheduled_for`);
--> statement-breakpoint
-- The conversations row of a new message is written by its writer, once per contact per batch
-- (src/db/derived-counts.ts), no longer by a trigger per row. Received texts keep theirs.
DROP TRIGGER IF EXISTS `messages_conversation`;
