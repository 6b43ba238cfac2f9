DROP INDEX `messages_account_status_created_sent_idx`;--> statement-breakpoint
DROP INDEX `messages_form_status_created_idx`;--> statement-breakpoint
CREATE INDEX `messages_account_status_created_sent_idx` ON `messages` (`account_id`,`status`,`created_at`,`sent_at`,`failure_reason`,CAST(round((julianday(sent_at) - julianday(created_at)) * 86400000.0) AS INTEGER));--> statement-breakpoint
CREATE INDEX `messages_form_status_created_idx` ON `messages` (`form_id`,`status`,`created_at`,`sent_at`,CAST(round((julianday(sent_at) - julianday(created_at)) * 86400000.0) AS INTEGER));