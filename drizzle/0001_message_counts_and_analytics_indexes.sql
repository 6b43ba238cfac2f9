CREATE TABLE `message_counts` (
	`account_id` text NOT NULL,
	`status` text NOT NULL,
	`priority_rank` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `status`, `priority_rank`)
);
--> statement-breakpoint
CREATE INDEX `messages_account_status_created_sent_idx` ON `messages` (`account_id`,`status`,`created_at`,`sent_at`,`failure_reason`);--> statement-breakpoint
CREATE INDEX `messages_form_status_created_idx` ON `messages` (`form_id`,`status`,`created_at`,`sent_at`);--> statement-breakpoint
INSERT INTO `message_counts` (`account_id`, `status`, `priority_rank`, `n`)
  SELECT `account_id`, `status`, `priority_rank`, COUNT(*) FROM `messages` GROUP BY `account_id`, `status`, `priority_rank`;
--> statement-breakpoint
CREATE TRIGGER `messages_count_insert` AFTER INSERT ON `messages` BEGIN
  INSERT INTO `message_counts` (`account_id`, `status`, `priority_rank`, `n`) VALUES (NEW.`account_id`, NEW.`status`, NEW.`priority_rank`, 1)
    ON CONFLICT (`account_id`, `status`, `priority_rank`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_count_delete` AFTER DELETE ON `messages` BEGIN
  UPDATE `message_counts` SET `n` = `n` - 1
    WHERE `account_id` = OLD.`account_id` AND `status` = OLD.`status` AND `priority_rank` = OLD.`priority_rank`;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_count_update` AFTER UPDATE OF `status`, `account_id`, `priority_rank` ON `messages`
  WHEN OLD.`status` IS NOT NEW.`status` OR OLD.`account_id` IS NOT NEW.`account_id` OR OLD.`priority_rank` IS NOT NEW.`priority_rank` BEGIN
  UPDATE `message_counts` SET `n` = `n` - 1
    WHERE `account_id` = OLD.`account_id` AND `status` = OLD.`status` AND `priority_rank` = OLD.`priority_rank`;
  INSERT INTO `message_counts` (`account_id`, `status`, `priority_rank`, `n`) VALUES (NEW.`account_id`, NEW.`status`, NEW.`priority_rank`, 1)
    ON CONFLICT (`account_id`, `status`, `priority_rank`) DO UPDATE SET `n` = `n` + 1;
END;
