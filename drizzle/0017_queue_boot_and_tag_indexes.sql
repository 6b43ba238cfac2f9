-- Boot reads every queued message into the in-memory queue (src/services/queue-sync.ts). This
-- partial index holds exactly those rows, with every value the queue needs, in queue order per
-- account: the read touches no other message (sent history costs nothing at boot) and the rows
-- arrive sorted, so the queue is built without sorting. scheduledFor is indexed as epoch
-- milliseconds (the expression must stay spelled exactly as QUEUED_SCHEDULED_MS_SQL): the
-- read takes the stored integer instead of parsing a timestamp per row.
CREATE INDEX `messages_queued_order_idx` ON `messages` (`account_id`, `priority_rank`, CAST(round((julianday(scheduled_for) - 2440587.5) * 86400000.0) AS INTEGER), `seq`, `id`) WHERE `status` = 'queued';
--> statement-breakpoint
-- Tag filters (GET /contacts?tags=a,b): with contact_id in the index, a tag's contacts are read
-- from the index alone, in contact_id order, so two common tags intersect by a merge of two index
-- ranges instead of a row lookup and a probe per tagged contact. It serves every query the
-- (account_id, tag) index served, which it replaces.
DROP INDEX IF EXISTS `contact_tags_account_tag_idx`;
--> statement-breakpoint
CREATE INDEX `contact_tags_account_tag_contact_idx` ON `contact_tags` (`account_id`, `tag`, `contact_id`);
