-- Issue 11: opt-outs, consent records, conversations and account settings.
ALTER TABLE `contacts` ADD `opted_out` integer DEFAULT false NOT NULL;
--> statement-breakpoint
ALTER TABLE `contacts` ADD `opted_out_at` text;
--> statement-breakpoint
ALTER TABLE `contacts` ADD `consent` text;

--> statement-breakpoint
-- Contacts made before consent was recorded: how they most likely entered.
UPDATE `contacts` SET `consent` = CASE WHEN `form_id` IS NOT NULL
  THEN json_object('source', 'webhook', 'formId', `form_id`, 'at', `created_at`)
  ELSE json_object('source', 'api', 'at', `created_at`) END;
--> statement-breakpoint
CREATE INDEX `contacts_account_opted_out_idx` ON `contacts` (`account_id`,`opted_out`);
--> statement-breakpoint
-- One row per contact with messages in either direction: the newest one's time and the unread
-- received texts, kept by the triggers below (a table of its own, so the triggers never name
-- `contacts`, which a future rebuild of that table would trip over).
CREATE TABLE `conversations` (
	`contact_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`last_message_at` text NOT NULL,
	`unread_count` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`contact_id`) REFERENCES `contacts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `conversations_account_last_idx` ON `conversations` (`account_id`,`last_message_at`);
--> statement-breakpoint
INSERT INTO `conversations` (`contact_id`, `account_id`, `last_message_at`, `unread_count`)
  SELECT m.`contact_id`, c.`account_id`, max(m.`created_at`), 0 FROM `messages` m JOIN `contacts` c ON c.`id` = m.`contact_id`
  WHERE m.`contact_id` IS NOT NULL GROUP BY m.`contact_id`;
--> statement-breakpoint
ALTER TABLE `inbound_messages` ADD `keyword` text;
--> statement-breakpoint
ALTER TABLE `inbound_messages` ADD `read_at` text;
--> statement-breakpoint
CREATE INDEX `inbound_unread_idx` ON `inbound_messages` (`contact_id`) WHERE `read_at` IS NULL;
--> statement-breakpoint
CREATE TRIGGER `messages_conversation` AFTER INSERT ON `messages` WHEN NEW.`contact_id` IS NOT NULL BEGIN
  INSERT INTO `conversations` (`contact_id`, `account_id`, `last_message_at`, `unread_count`)
    VALUES (NEW.`contact_id`, NEW.`account_id`, NEW.`created_at`, 0)
    ON CONFLICT (`contact_id`) DO UPDATE SET `last_message_at` = max(`last_message_at`, excluded.`last_message_at`);
END;
--> statement-breakpoint
CREATE TRIGGER `inbound_conversation` AFTER INSERT ON `inbound_messages` BEGIN
  INSERT INTO `conversations` (`contact_id`, `account_id`, `last_message_at`, `unread_count`)
    VALUES (NEW.`contact_id`, NEW.`account_id`, NEW.`received_at`, NEW.`read_at` IS NULL)
    ON CONFLICT (`contact_id`) DO UPDATE SET `last_message_at` = max(`last_message_at`, excluded.`last_message_at`),
      `unread_count` = `unread_count` + excluded.`unread_count`;
END;
--> statement-breakpoint
CREATE TABLE `account_settings` (
	`account_id` text PRIMARY KEY NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
