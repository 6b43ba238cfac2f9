-- Automatic retries (issue 11 item 5): a manual message's own attempt count; NULL = the form's
-- settings.maxAttempts, or 2.
ALTER TABLE `messages` ADD `max_attempts` integer;
--> statement-breakpoint
-- Broadcasts (issue 11 item 6): one row per broadcast; its messages point back to it.
CREATE TABLE `broadcasts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`name` text NOT NULL,
	`content` text NOT NULL,
	`segment` text NOT NULL,
	`priority` text NOT NULL,
	`scheduled_for` text NOT NULL,
	`send_rate_per_minute` integer,
	`max_attempts` integer,
	`quiet_hours` text,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`recipient_limit_per_day` integer,
	`status` text NOT NULL,
	`recipients` integer NOT NULL,
	`suppressed` integer NOT NULL,
	`queued_count` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`cursor` text DEFAULT '' NOT NULL,
	`last_contact_id` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `broadcasts_account_created_idx` ON `broadcasts` (`account_id`,`created_at`);
--> statement-breakpoint
ALTER TABLE `messages` ADD `broadcast_id` text REFERENCES `broadcasts`(`id`) ON DELETE set null;
--> statement-breakpoint
CREATE INDEX `messages_broadcast_status_idx` ON `messages` (`broadcast_id`,`status`) WHERE `broadcast_id` IS NOT NULL;
