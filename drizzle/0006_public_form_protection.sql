ALTER TABLE `forms` ADD `webhook_token` text;--> statement-breakpoint
CREATE UNIQUE INDEX `forms_webhook_token_idx` ON `forms` (`webhook_token`);--> statement-breakpoint
ALTER TABLE `forms` ADD `spam_blocked` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `idempotency_keys` ADD `body_hash` text;--> statement-breakpoint
CREATE INDEX `messages_account_recipient_created_idx` ON `messages` (`account_id`,`recipient_phone`,`created_at`);--> statement-breakpoint
CREATE TABLE `__new_submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`form_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`message_id` text,
	`new_contact` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`form_id`) REFERENCES `forms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_submissions` (`id`, `account_id`, `form_id`, `contact_id`, `message_id`, `new_contact`, `created_at`)
  SELECT `id`, `account_id`, `form_id`, `contact_id`, `message_id`, `new_contact`, `created_at` FROM `submissions`;--> statement-breakpoint
DROP TABLE `submissions`;--> statement-breakpoint
ALTER TABLE `__new_submissions` RENAME TO `submissions`;--> statement-breakpoint
CREATE INDEX `submissions_form_created_idx` ON `submissions` (`form_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `submissions_account_created_idx` ON `submissions` (`account_id`,`created_at`);
