-- Texts a phone sends again because it was asked for its history (SMSGate's inbox export and
-- refresh) are stored and shown but take no action (docs/api-decisions.md, "SMSGate: signing key
-- in the settings document, and re-sent history"). `history` marks them; the export requests a
-- phone was sent are kept for a while so a re-sent text can be told from a new one.
ALTER TABLE `inbound_messages` ADD `history` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- A re-sent old text is no reply: it stops no automation run.
DROP TRIGGER IF EXISTS `automation_stop_on_reply`;
--> statement-breakpoint
CREATE TRIGGER `automation_stop_on_reply` AFTER INSERT ON `inbound_messages` WHEN NEW.`history` = 0 BEGIN
  UPDATE `automation_runs` SET `stop_reason` = 'replied'
    WHERE `contact_id` = NEW.`contact_id` AND `status` = 'active' AND (`stop_reason` IS NULL OR `stop_reason` = 'status')
      AND `automation_id` IN (SELECT `id` FROM `automations` WHERE `stop_on_reply` = 1);
END;
--> statement-breakpoint
CREATE TABLE `inbox_exports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`device_id` text NOT NULL,
	`since` text NOT NULL,
	`until` text NOT NULL,
	`requested_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inbox_exports_device_idx` ON `inbox_exports` (`device_id`, `requested_at`);
