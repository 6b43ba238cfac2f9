-- Issue 15 item 6, read-side targets.
--
-- Boot: Sequence.fromDb reads max(messages.seq); without an index that is a scan of every
-- message (~0.7 s at a million). seq only grows, so new entries land at the index's right edge.
CREATE INDEX `messages_seq_idx` ON `messages` (`seq`);
--> statement-breakpoint
-- Analytics replyRate: contacts texted since a date, read from this index alone. Partial: a
-- contact enters it when first texted (a new contact costs nothing here).
CREATE INDEX `contacts_account_contacted_idx` ON `contacts` (`account_id`, `last_contacted_at`, `form_id`, `id`) WHERE `last_contacted_at` IS NOT NULL;
