-- Boot reads every queued message into the in-memory queue (src/services/queue-sync.ts). This
-- partial index holds exactly those rows, with every column the queue needs, in queue order per
-- account: the read touches no other message (sent history costs nothing at boot) and the rows
-- arrive sorted, so the queue is built without sorting.
CREATE INDEX `messages_queued_order_idx` ON `messages` (`account_id`, `priority_rank`, `scheduled_for`, `seq`, `id`) WHERE `status` = 'queued';
