ALTER TABLE `api_keys` ADD `operator` integer DEFAULT false NOT NULL;
--> statement-breakpoint
UPDATE `api_keys` SET `operator` = 1
  WHERE `permission` = 'admin_access' AND `revoked_at` IS NULL
    AND `account_id` = (SELECT `id` FROM `accounts` ORDER BY `created_at`, `rowid` LIMIT 1);
--> statement-breakpoint
ALTER TABLE `messages` ADD `last_lease_token` text;
--> statement-breakpoint
UPDATE `messages` SET `last_lease_token` = `lease_token` WHERE `lease_token` IS NOT NULL;
