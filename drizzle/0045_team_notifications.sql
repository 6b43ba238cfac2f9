-- The team is told (docs/api-decisions.md, "The owner hears back", the team told). Each person
-- may give a mobile number and say what they want to hear about; a notice row is made by a
-- trigger in the same transaction as its cause (a submission applied, a customer's text stored),
-- so nothing is told twice or lost across a crash; the notifier sends pending notices (one text or
-- e-mail per person per batch) and marks them sent in the transaction that queues the text.
ALTER TABLE `users` ADD `phone_number` text;
--> statement-breakpoint
ALTER TABLE `users` ADD `notify_submissions` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `users` ADD `notify_replies` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `users` ADD `notify_email` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `users` ADD `quiet_start` text;
--> statement-breakpoint
ALTER TABLE `users` ADD `quiet_end` text;
--> statement-breakpoint
CREATE INDEX `users_account_phone_idx` ON `users` (`account_id`, `phone_number`) WHERE `phone_number` IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `team_notices` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`user_id` text NOT NULL REFERENCES `users`(`id`) ON DELETE CASCADE,
	`kind` text NOT NULL,
	`ref_id` text NOT NULL,
	`channel` text NOT NULL,
	`created_at` text NOT NULL,
	`attempted_at` text,
	`sent_at` text,
	`message_id` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `team_notices_once_idx` ON `team_notices` (`user_id`, `kind`, `ref_id`, `channel`);
--> statement-breakpoint
CREATE INDEX `team_notices_pending_idx` ON `team_notices` (`user_id`, `channel`) WHERE `sent_at` IS NULL;
--> statement-breakpoint
CREATE TRIGGER `team_notice_on_submission` AFTER INSERT ON `submissions` BEGIN
  INSERT OR IGNORE INTO `team_notices` (`account_id`, `user_id`, `kind`, `ref_id`, `channel`, `created_at`)
    SELECT NEW.`account_id`, u.`id`, 'submission', NEW.`id`, 'text', NEW.`created_at` FROM `users` u
      WHERE u.`account_id` = NEW.`account_id` AND u.`notify_submissions` = 1 AND u.`phone_number` IS NOT NULL
    UNION ALL
    SELECT NEW.`account_id`, u.`id`, 'submission', NEW.`id`, 'email', NEW.`created_at` FROM `users` u
      WHERE u.`account_id` = NEW.`account_id` AND u.`notify_submissions` = 1 AND u.`notify_email` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `team_notice_on_reply` AFTER INSERT ON `inbound_messages` WHEN NEW.`history` = 0 BEGIN
  INSERT OR IGNORE INTO `team_notices` (`account_id`, `user_id`, `kind`, `ref_id`, `channel`, `created_at`)
    SELECT NEW.`account_id`, u.`id`, 'reply', NEW.`id`, 'text', NEW.`created_at` FROM `users` u
      WHERE u.`account_id` = NEW.`account_id` AND u.`notify_replies` = 1 AND u.`phone_number` IS NOT NULL
    UNION ALL
    SELECT NEW.`account_id`, u.`id`, 'reply', NEW.`id`, 'email', NEW.`created_at` FROM `users` u
      WHERE u.`account_id` = NEW.`account_id` AND u.`notify_replies` = 1 AND u.`notify_email` = 1;
END;
