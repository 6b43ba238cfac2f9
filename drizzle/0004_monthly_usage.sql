CREATE TABLE `monthly_usage` (
	`account_id` text NOT NULL,
	`month` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `month`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `monthly_usage` (`account_id`, `month`, `n`)
  SELECT `account_id`, substr(`created_at`, 1, 7), COUNT(*) FROM `messages` GROUP BY `account_id`, substr(`created_at`, 1, 7);
--> statement-breakpoint
CREATE TRIGGER `messages_usage_insert` AFTER INSERT ON `messages` BEGIN
  INSERT INTO `monthly_usage` (`account_id`, `month`, `n`) VALUES (NEW.`account_id`, substr(NEW.`created_at`, 1, 7), 1)
    ON CONFLICT (`account_id`, `month`) DO UPDATE SET `n` = `n` + 1;
END;
